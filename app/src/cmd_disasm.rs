//! `picaview disasm FILE.shbin [--entry N] [--raw] [--json]`: prints a compiled PICA200 shader
//! (DVLB `.shbin`, or a DVOJ object) as picasso 2.7 assembly.
//!
//! Default output: the picasso source of every DVLE ([`shader_unit::disasm::disassemble_all`]);
//! with `--entry N` only DVLE `N`, as one stand-alone source file. `--raw` prints the raw
//! listing instead (address, program word, operand descriptor, one-line rendering, and the
//! operand-descriptor table). `--json` prints the parsed tables (the `shader_unit::dvlb` model)
//! as JSON: the whole file, or with `--entry N` the program plus DVLE `N`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::json;
use shader_unit::disasm;
use shader_unit::dvlb::{Dvlb, ShaderFile, parse_shader_file};

/// Arguments of `picaview disasm`.
#[derive(clap::Args, Debug)]
pub struct DisasmArgs {
    /// Shader binary (`.shbin`, DVLB) or shader object (DVOJ).
    pub file: PathBuf,
    /// Only this DVLE (0-based), as one stand-alone picasso source.
    #[arg(long)]
    pub entry: Option<usize>,
    /// Raw listing: address, word, operand descriptor and a one-line rendering per instruction.
    #[arg(long, conflicts_with = "json")]
    pub raw: bool,
    /// Print the parsed tables as JSON instead of assembly.
    #[arg(long)]
    pub json: bool,
}

/// Runs `picaview disasm`.
pub fn run(args: &DisasmArgs) -> Result<()> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let parsed = parse_shader_file(&bytes)
        .with_context(|| format!("{} is not a valid shader binary", args.file.display()))?;
    let text = render(&parsed, args)?;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .context("cannot write to stdout")?;
    Ok(())
}

/// The text `picaview disasm` prints for an already parsed file.
pub fn render(parsed: &ShaderFile, args: &DisasmArgs) -> Result<String> {
    if args.json {
        let value = match (parsed, args.entry) {
            (ShaderFile::Dvlb(d), Some(n)) => {
                let dvle = d.dvles.get(n).with_context(|| {
                    format!("DVLE {n} does not exist (the file has {})", d.dvles.len())
                })?;
                json!({ "format": "DVLB", "dvlp": d.dvlp, "dvle_index": n, "dvle": dvle })
            }
            (ShaderFile::Dvlb(d), None) => json!({ "format": "DVLB", "dvlb": d }),
            (ShaderFile::Dvoj(d), _) => json!({ "format": "DVOJ", "dvoj": d }),
        };
        let mut s = serde_json::to_string_pretty(&value).context("cannot serialise the tables")?;
        s.push('\n');
        return Ok(s);
    }
    let dvlb: Dvlb = match parsed {
        ShaderFile::Dvlb(d) => d.clone(),
        ShaderFile::Dvoj(d) => d.to_dvlb(),
    };
    if args.raw {
        if let Some(n) = args.entry
            && n >= dvlb.dvles.len()
        {
            bail!(
                "DVLE {n} does not exist (the file has {})",
                dvlb.dvles.len()
            );
        }
        return Ok(disasm::raw_listing(&dvlb));
    }
    match args.entry {
        Some(n) => Ok(disasm::disassemble(&dvlb, n)?),
        None => Ok(disasm::disassemble_all(&dvlb)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn demo() -> ShaderFile {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../assets/shaders/craftus-world.shbin"
        );
        let bytes = std::fs::read(path).expect("bundled demo shader");
        parse_shader_file(&bytes).expect("valid demo shader")
    }

    fn args(entry: Option<usize>, raw: bool, json: bool) -> DisasmArgs {
        DisasmArgs {
            file: PathBuf::from("demo.shbin"),
            entry,
            raw,
            json,
        }
    }

    #[test]
    fn disassembles_the_bundled_demo_shader() {
        let text = render(&demo(), &args(None, false, false)).unwrap();
        assert!(text.starts_with("; picaview disassembly of DVLE 0 of 1 (vertex shader)\n"));
        assert!(text.contains(".proc main\n"), "{text}");
        assert!(text.contains("    end "), "{text}");
        assert_eq!(render(&demo(), &args(Some(0), false, false)).unwrap(), text);
        assert!(render(&demo(), &args(Some(1), false, false)).is_err());
    }

    #[test]
    fn raw_listing_and_json() {
        let raw = render(&demo(), &args(None, true, false)).unwrap();
        assert!(
            raw.contains("  000   2207F180  00    00069FEE  mul r0.xyz, c95.w, v3.xyz"),
            "{raw}"
        );
        assert!(render(&demo(), &args(Some(3), true, false)).is_err());

        let json = render(&demo(), &args(None, false, true)).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["format"], "DVLB");
        assert_eq!(v["dvlb"]["dvles"][0]["main_end"], 11);
        assert_eq!(v["dvlb"]["dvles"][0]["uniforms"][0]["name"], "projection");
        assert_eq!(v["dvlb"]["dvlp"]["code"].as_array().map(Vec::len), Some(11));
        let one: serde_json::Value =
            serde_json::from_str(&render(&demo(), &args(Some(0), false, true)).unwrap()).unwrap();
        assert_eq!(one["dvle_index"], 0);
        assert_eq!(one["dvle"]["outputs"][1]["semantic"], "Color");
    }
}
