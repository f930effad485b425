//! `picaview asm IN.v.pica [IN2.g.pica ...] -o OUT.shbin [--no-nop]`: assembles picasso-syntax
//! shader sources into one `.shbin` (one DVLE per input file), byte-identical to picasso 2.7.1.
//!
//! An input named `-` is read from standard input (named `<stdin>` in diagnostics), so
//! `picaview disasm X.shbin | picaview asm - -o Y.shbin` round-trips a binary; when standard input
//! holds the disassembly of a file with several DVLEs (sections headed `; ======== file N: ...`),
//! each section becomes its own source file (`<stdin>#N`), as picasso needs one file per DVLE.
//! Diagnostics are printed to standard error as `file:line:column: error: ...` with the source
//! line and a caret.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use pica_cmd::filekind::{self, FileKind};
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

/// Source files (and standard input) larger than this are refused before they are read: the
/// PICA200 holds 4096 instructions, and the disassembly of the largest possible program with
/// every table is a few MiB.
pub const MAX_SOURCE_FILE: u64 = 64 << 20;

/// Marker line that `picaview disasm` puts before each DVLE's source when a file has several.
const SECTION_MARKER: &str = "; ======== file ";

/// Splits standard input into one source per DVLE when it is the output of `picaview disasm` for a
/// file with several DVLEs (sections start with [`SECTION_MARKER`]); otherwise it is one source.
fn split_disassembly(text: &str) -> Vec<(String, String)> {
    let mut sections: Vec<(String, String)> = Vec::new();
    for line in text.split_inclusive('\n') {
        if line.starts_with(SECTION_MARKER) {
            sections.push((format!("<stdin>#{}", sections.len()), String::new()));
        }
        match sections.last_mut() {
            Some((_, body)) => body.push_str(line),
            None if line.trim().is_empty() || line.trim_start().starts_with(';') => {}
            None => return vec![("<stdin>".to_string(), text.to_string())],
        }
    }
    if sections.is_empty() {
        return vec![("<stdin>".to_string(), text.to_string())];
    }
    sections
}

/// Runs `picaview asm`.
pub fn run(args: &AsmArgs) -> Result<()> {
    let mut sources = Vec::with_capacity(args.inputs.len());
    for path in &args.inputs {
        if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::stdin()
                .take(MAX_SOURCE_FILE + 1)
                .read_to_string(&mut text)
                .context("cannot read standard input")?;
            if text.len() as u64 > MAX_SOURCE_FILE {
                bail!("standard input holds more than {MAX_SOURCE_FILE} bytes of shader source");
            }
            sources.extend(split_disassembly(&text));
        } else {
            let (kind, _, _, _) = filekind::sniff_file(path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            if matches!(
                kind,
                FileKind::CiTrace | FileKind::ShaderBinary | FileKind::ShaderObject
            ) {
                bail!(
                    "{} is {kind}, not shader source; use `{}`",
                    path.display(),
                    kind.suggested_command().unwrap_or("another subcommand")
                );
            }
            let bytes = filekind::read_limited(path, MAX_SOURCE_FILE, "shader source")
                .with_context(|| format!("cannot read {}", path.display()))?;
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
            // One diagnostic at a time (the assembler keeps at most MAX_DIAGNOSTICS of them).
            {
                let stderr = std::io::stderr();
                let mut err = std::io::BufWriter::new(stderr.lock());
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        let _ = writeln!(err);
                    }
                    let _ = write!(err, "{}", e.render());
                }
                let _ = writeln!(err);
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_sources_stay_whole() {
        let text = "; a comment\n.proc main\n\tend\n.end\n";
        assert_eq!(
            split_disassembly(text),
            vec![("<stdin>".to_string(), text.to_string())]
        );
    }

    #[test]
    fn multi_dvle_disassembly_is_split() {
        let text = "; ======== file 0: DVLE 0 (vertex shader) ========\n.out o position\n\n; ======== file 1: DVLE 1 (geometry shader), holds the code ========\n.gsh point c0\n";
        let parts = split_disassembly(text);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[1].0, "<stdin>#1");
        assert!(parts[1].1.contains(".gsh point c0"));
        assert!(!parts[0].1.contains(".gsh"));
    }

    #[test]
    fn assembles_files_and_reports_errors() {
        let dir = std::env::temp_dir().join(format!("picaview-cmd-asm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.v.pica");
        std::fs::write(
            &good,
            ".out p position\n.proc main\n\tmov p, v0\n\tend\n.end\n",
        )
        .unwrap();
        let out = dir.join("good.shbin");
        run(&AsmArgs {
            inputs: vec![good],
            output: out.clone(),
            no_nop: false,
        })
        .unwrap();
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[..4], b"DVLB");
        let bad = dir.join("bad.v.pica");
        std::fs::write(&bad, ".proc main\n\tmov r0, q1\n\tend\n.end\n").unwrap();
        let err = run(&AsmArgs {
            inputs: vec![bad],
            output: dir.join("bad.shbin"),
            no_nop: false,
        })
        .unwrap_err();
        assert!(err.to_string().contains("1 error"));
        // A compiled binary given as source is refused by its magic.
        let err = run(&AsmArgs {
            inputs: vec![out],
            output: dir.join("again.shbin"),
            no_nop: false,
        })
        .unwrap_err();
        assert!(err.to_string().contains("picaview disasm"), "{err}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
