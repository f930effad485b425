//! `picaview disasm FILE.shbin [--entry N] [--raw] [--json]`: prints a compiled PICA200 shader
//! (DVLB `.shbin`, or a DVOJ object) as picasso 2.7 assembly.
//!
//! Default output: the picasso source of every DVLE ([`shader_unit::disasm::disassemble_all`]);
//! with `--entry N` only DVLE `N`, as one stand-alone source file. `--raw` prints the raw
//! listing instead (address, program word, operand descriptor, one-line rendering, and the
//! operand-descriptor table). `--json` prints the parsed tables (the `shader_unit::dvlb` model)
//! as JSON: the whole file, or with `--entry N` the program plus DVLE `N`.
//!
//! Hostile input: the magic is checked before the file is read ([`load_shader`]), files above
//! [`MAX_SHADER_FILE`] are refused, the parser's decode budget bounds the tables, and text and
//! JSON are written to stdout as they are produced.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use pica_cmd::filekind::{self, FileKind};
use shader_unit::disasm;
use shader_unit::dvlb::{Dvlb, Dvle, Dvlp, Dvoj, ShaderFile, parse_shader_file};

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

/// Shader files larger than this are refused before they are read (real ones are a few KiB;
/// the PICA200 has 4096 instruction words and 128 operand descriptors).
pub const MAX_SHADER_FILE: u64 = 64 << 20;

/// Reads and parses a shader file, checking its first bytes (and its length) before reading
/// the rest: anything that is not a DVLB or DVOJ is refused with what it is and which
/// subcommand reads it. Shared by `disasm` and `shader run`.
pub fn load_shader(path: &Path) -> Result<ShaderFile> {
    let (kind, _, _, _) =
        filekind::sniff_file(path).with_context(|| format!("cannot read {}", path.display()))?;
    match kind {
        FileKind::ShaderBinary | FileKind::ShaderObject => {}
        other => {
            let hint = match other.suggested_command() {
                Some(cmd) => format!("; use `{cmd}`"),
                None if other == FileKind::Unknown => {
                    "; if it is a raw command list, use `picaview cmdlist FILE`".to_string()
                }
                None => String::new(),
            };
            bail!(
                "{} is {other}, not a shader binary (no \"DVLB\" or \"DVOJ\" magic){hint}",
                path.display()
            );
        }
    }
    let bytes = filekind::read_limited(path, MAX_SHADER_FILE, "a shader binary")
        .with_context(|| format!("cannot read {}", path.display()))?;
    parse_shader_file(&bytes)
        .with_context(|| format!("{} is not a valid shader binary", path.display()))
}

/// Runs `picaview disasm`.
pub fn run(args: &DisasmArgs) -> Result<()> {
    let parsed = load_shader(&args.file)?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    render_to(&parsed, args, &mut out)?;
    out.flush().context("cannot write to stdout")?;
    Ok(())
}

/// The JSON document of `--json` for the whole file (keys in alphabetical order, as before).
#[derive(serde::Serialize)]
struct WholeJson<'a, T: serde::Serialize> {
    #[serde(skip_serializing_if = "Option::is_none")]
    dvlb: Option<&'a T>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dvoj: Option<&'a Dvoj>,
    format: &'static str,
}

/// The JSON document of `--json --entry N`.
#[derive(serde::Serialize)]
struct EntryJson<'a> {
    dvle: &'a Dvle,
    dvle_index: usize,
    dvlp: &'a Dvlp,
    format: &'static str,
}

/// Writes what `picaview disasm` prints for an already parsed file to `out`, as it is produced
/// (JSON is serialised straight from the parsed tables, the source DVLE by DVLE).
pub fn render_to(parsed: &ShaderFile, args: &DisasmArgs, out: &mut dyn Write) -> Result<()> {
    if args.json {
        match (parsed, args.entry) {
            (ShaderFile::Dvlb(d), Some(n)) => {
                let dvle = d.dvles.get(n).with_context(|| {
                    format!("DVLE {n} does not exist (the file has {})", d.dvles.len())
                })?;
                let doc = EntryJson {
                    dvle,
                    dvle_index: n,
                    dvlp: &d.dvlp,
                    format: "DVLB",
                };
                serde_json::to_writer_pretty(&mut *out, &doc)
            }
            (ShaderFile::Dvlb(d), None) => serde_json::to_writer_pretty(
                &mut *out,
                &WholeJson {
                    dvlb: Some(d),
                    dvoj: None,
                    format: "DVLB",
                },
            ),
            (ShaderFile::Dvoj(d), _) => serde_json::to_writer_pretty(
                &mut *out,
                &WholeJson::<Dvlb> {
                    dvlb: None,
                    dvoj: Some(d),
                    format: "DVOJ",
                },
            ),
        }
        .context("cannot write the tables")?;
        writeln!(out).context("cannot write to stdout")?;
        return Ok(());
    }
    let converted;
    let dvlb: &Dvlb = match parsed {
        ShaderFile::Dvlb(d) => d,
        ShaderFile::Dvoj(d) => {
            converted = d.to_dvlb();
            &converted
        }
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
        out.write_all(disasm::raw_listing(dvlb).as_bytes())?;
        return Ok(());
    }
    match args.entry {
        Some(n) => out.write_all(disasm::disassemble(dvlb, n)?.as_bytes())?,
        None => disasm::disassemble_all_to(dvlb, out)?,
    }
    Ok(())
}

/// The text `picaview disasm` prints for an already parsed file (for tests).
#[cfg(test)]
pub fn render(parsed: &ShaderFile, args: &DisasmArgs) -> Result<String> {
    let mut out = Vec::new();
    render_to(parsed, args, &mut out)?;
    Ok(String::from_utf8(out)?)
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
