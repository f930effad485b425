//! `picaview asm IN.v.pica [IN2.g.pica ...] -o OUT.shbin [--no-nop]`: assembles picasso-syntax
//! shader sources into one `.shbin` (one DVLE per input file), byte-identical to picasso 2.7.1.
//!
//! An input named `-` is read from standard input (named `<stdin>` in diagnostics), so
//! `picaview disasm X.shbin | picaview asm - -o Y.shbin` round-trips a binary. Diagnostics are
//! printed to standard error as `file:line:column: error: ...` with the source line and a caret.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use shader_unit::asm::{AsmOptions, assemble_with};

/// Arguments of `picaview asm`.
#[derive(clap::Args, Debug)]
pub struct AsmArgs {
    /// Source files in command-line order (`-` = standard input); each becomes one DVLE.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output `.shbin` file (`-` = standard output).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Do not insert the padding NOPs the hardware needs (like picasso `--no-nop`; warns instead).
    #[arg(short = 'n', long)]
    pub no_nop: bool,
}

/// Runs `picaview asm`.
pub fn run(args: &AsmArgs) -> Result<()> {
    let mut sources = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            sources.push(("<stdin>".to_string(), text));
        } else {
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            // Keep going on invalid UTF-8 (picasso reads bytes); identifiers are ASCII anyway.
            let text = String::from_utf8_lossy(&bytes).into_owned();
            sources.push((path.display().to_string(), text));
        }
    }
    let refs: Vec<(&str, &str)> = sources
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let options = AsmOptions {
        auto_nop: !args.no_nop,
    };
    let assembly = match assemble_with(&refs, options) {
        Ok(a) => a,
        Err(errors) => {
            eprintln!("{}", errors.render());
            let n = errors.errors().count();
            bail!(
                "assembly failed with {n} error{}",
                if n == 1 { "" } else { "s" }
            );
        }
    };
    for w in &assembly.warnings {
        eprintln!("{}", w.render());
    }
    let bytes = assembly.to_shbin();
    if args.output.as_os_str() == "-" {
        std::io::stdout()
            .lock()
            .write_all(&bytes)
            .context("cannot write to standard output")?;
    } else {
        std::fs::write(&args.output, &bytes)
            .with_context(|| format!("cannot write {}", args.output.display()))?;
    }
    Ok(())
}
