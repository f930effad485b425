//! `picaview cmdlist FILE [--json]`: decodes a raw PICA command list (little-endian words, as the
//! GPU reads it from memory) into its register writes, every write named and its fields decoded
//! by the register catalogue.
//!
//! Text output: one line per write (`offset`, byte-enable mask, catalogue one-liner), burst
//! commands introduced by a header line, then the parser's diagnostics. `--json`: an array with
//! one object per write: `offset`, `id`, `name`, `mask`, `value`, `fields` (plus `command`, the
//! index of the command the write came from). A malformed list prints the writes parsed before
//! the problem, then fails with the byte offset.
//!
//! Hostile input: the file's first bytes are checked first (a CiTrace or shader binary is
//! refused with the subcommand that reads it); the list is decoded in 1 MiB sections and every
//! line or JSON object is written as soon as it is decoded, so memory stays bounded whatever the
//! list's length; diagnostics are listed up to [`MAX_LISTED_DIAGNOSTICS`] and counted beyond.
//!
//! The write helpers here are shared with `picaview trace dump`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use pica_cmd::cmdlist::{
    self, CmdList, CmdWrite, CommandRef, Diagnostic, ExtraParamWidth, Form, ListChecker,
    ParseOptions, ReaderError, expand_mask,
};
use pica_cmd::filekind::{self, FileKind};
use pica_cmd::regs;
use serde::ser::{SerializeSeq, Serializer as _};
use serde_json::Value;

/// Width of the extra-parameter count in command headers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CountBits {
    /// Bits 20-27 (3dbrew, Panda3DS, mikage: the hardware documentation).
    #[default]
    #[value(name = "8")]
    Eight,
    /// Bits 20-30 (Citra).
    #[value(name = "11")]
    Eleven,
}

impl CountBits {
    /// Parser options for this width.
    pub fn options(self) -> ParseOptions {
        ParseOptions {
            extra_param_width: match self {
                CountBits::Eight => ExtraParamWidth::Bits8,
                CountBits::Eleven => ExtraParamWidth::Bits11,
            },
        }
    }
}

/// Arguments of `picaview cmdlist`.
#[derive(clap::Args, Debug)]
pub struct CmdlistArgs {
    /// Raw command-list file.
    pub file: PathBuf,
    /// Print a JSON array with one object per register write.
    #[arg(long)]
    pub json: bool,
    /// Width of the header's extra-parameter count (8 = hardware docs, 11 = Citra).
    #[arg(long, value_enum, default_value = "8")]
    pub count_bits: CountBits,
}

/// At most this many diagnostics are printed one by one; the rest are counted.
pub const MAX_LISTED_DIAGNOSTICS: usize = 1000;

/// Diagnostics of a streamed list: the first [`MAX_LISTED_DIAGNOSTICS`], and how many there were.
#[derive(Default)]
struct BoundedDiagnostics {
    first: Vec<Diagnostic>,
    total: u64,
}

impl BoundedDiagnostics {
    fn push(&mut self, d: Diagnostic) {
        self.total += 1;
        if self.first.len() < MAX_LISTED_DIAGNOSTICS {
            self.first.push(d);
        }
    }

    fn print(&self, mut line: impl FnMut(String) -> std::io::Result<()>) -> std::io::Result<()> {
        for d in &self.first {
            line(format!("warning: {d}"))?;
        }
        let more = self.total - self.first.len() as u64;
        if more > 0 {
            line(format!("warning: ... and {more} more warnings"))?;
        }
        Ok(())
    }
}

/// Checks that `path` may be a raw command list: refuses CiTraces and shader binaries (naming
/// the subcommand that reads them) after reading only their first bytes.
fn check_kind(path: &std::path::Path) -> Result<u64> {
    let (kind, _, _, len) =
        filekind::sniff_file(path).with_context(|| format!("cannot read {}", path.display()))?;
    match kind {
        FileKind::CiTrace | FileKind::ShaderBinary | FileKind::ShaderObject => bail!(
            "{} is {}, not a raw command list; use `{}`",
            path.display(),
            kind,
            kind.suggested_command().unwrap_or("another subcommand")
        ),
        FileKind::Text | FileKind::Unknown => {}
    }
    if u32::try_from(len).is_err() {
        bail!(
            "{} has {len} bytes: a command list is smaller than 4 GiB (offsets are 32-bit)",
            path.display()
        );
    }
    Ok(len)
}

fn open(path: &std::path::Path) -> Result<std::io::BufReader<std::fs::File>> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(std::io::BufReader::new(file))
}

/// Runs `picaview cmdlist`.
///
/// The file is decoded in sections ([`cmdlist::parse_reader`]) and the output written as it is
/// produced, so memory use does not grow with the list: the text header's counts come from a
/// first, output-free pass.
pub fn run(args: &CmdlistArgs) -> Result<()> {
    let path = &args.file;
    let len = check_kind(path)?;
    let options = args.count_bits.options();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut diags = BoundedDiagnostics::default();
    let mut checker = ListChecker::new(options);
    let result = if args.json {
        let mut ser = serde_json::Serializer::pretty(&mut out);
        let mut seq = ser.serialize_seq(None)?;
        let result = cmdlist::parse_reader(open(path)?, options, |c| {
            checker.command(c, |d| diags.push(d));
            for w in c.writes() {
                checker.write(&w, |d| diags.push(d));
                with_write_json(&w, |j| seq.serialize_element(j)).map_err(std::io::Error::other)?;
            }
            Ok(())
        });
        SerializeSeq::end(seq)?;
        writeln!(out)?;
        out.flush()?;
        if let Ok(summary) = &result {
            ListChecker::finish(summary.len as u32, |d| diags.push(d));
        }
        diags.print(|l| {
            eprintln!("{l}");
            Ok(())
        })?;
        result
    } else {
        // Pass 1: the counts for the header line.
        let mut commands = 0u64;
        let mut writes = 0u64;
        let _ = cmdlist::parse_reader(open(path)?, options, |c| {
            commands += 1;
            writes += u64::from(c.param_count);
            Ok(())
        });
        writeln!(
            out,
            "{}: {len} bytes, {commands} commands, {writes} register writes",
            path.display(),
        )?;
        let result = cmdlist::parse_reader(open(path)?, options, |c| {
            checker.command(c, |d| diags.push(d));
            for w in c.writes() {
                checker.write(&w, |d| diags.push(d));
            }
            write_command_text(&mut out, c, "")
        });
        if let Ok(summary) = &result {
            ListChecker::finish(summary.len as u32, |d| diags.push(d));
        }
        diags.print(|l| writeln!(out, "{l}"))?;
        out.flush()?;
        result
    };
    match result {
        Ok(_) => Ok(()),
        Err(ReaderError::List(e)) => Err(anyhow::Error::new(e)
            .context(format!("{} is not a valid command list", path.display()))),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot decode {}", path.display()))),
    }
}

/// Prints one command of a streamed list: a header line for bursts, then one line per write
/// (the same lines as [`write_list_text`]).
pub fn write_command_text(
    out: &mut impl Write,
    c: &CommandRef<'_>,
    indent: &str,
) -> std::io::Result<()> {
    if c.param_count > 1 {
        writeln!(
            out,
            "{indent}-- command #{} at 0x{:04X}: {} burst of {} writes (header 0x{:08X})",
            c.index,
            c.offset,
            form_name(c.form()),
            c.param_count,
            c.header.0
        )?;
    }
    for w in c.writes() {
        writeln!(out, "{indent}{}", write_line(&w))?;
    }
    Ok(())
}

fn form_name(form: Form) -> &'static str {
    match form {
        Form::Consecutive => "consecutive",
        Form::Repeated => "repeated",
        Form::Single => "single",
    }
}

/// True if none of the field's bits `lo..=hi` lie in a byte enabled by `mask`.
pub fn masked_out(bits: (u8, u8), mask: u8) -> bool {
    let (lo, hi) = (u32::from(bits.0.min(31)), u32::from(bits.1.min(31)));
    let width = hi.saturating_sub(lo) + 1;
    let field = if width >= 32 {
        u32::MAX
    } else {
        ((1u32 << width) - 1) << lo
    };
    field & expand_mask(mask) == 0
}

/// One decoded field in the JSON of a write (keys in alphabetical order, as a
/// `serde_json::Value` prints them).
#[derive(serde::Serialize)]
struct FieldJson<'a> {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    alias: bool,
    bits: (u8, u8),
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    masked_out: bool,
    meaning: &'a str,
    name: &'a str,
    raw: u32,
}

/// The JSON object of one write, serialised straight to the output (no `Value` tree).
#[derive(serde::Serialize)]
struct WriteJson<'a> {
    command: u32,
    fields: Vec<FieldJson<'a>>,
    id: u16,
    mask: u8,
    name: &'a str,
    offset: u32,
    value: u32,
}

/// Serialises the JSON object of one write (see [`write_json`]) with `f`.
fn with_write_json<R>(w: &CmdWrite, f: impl FnOnce(&WriteJson<'_>) -> R) -> R {
    let d = regs::describe(w.id, w.value);
    let fields = d
        .fields
        .iter()
        .map(|fd| FieldJson {
            alias: fd.alias,
            bits: fd.bits,
            masked_out: masked_out(fd.bits, w.mask),
            meaning: &fd.meaning,
            name: fd.name,
            raw: fd.raw,
        })
        .collect();
    f(&WriteJson {
        command: w.command,
        fields,
        id: w.id,
        mask: w.mask,
        name: &d.name,
        offset: w.offset,
        value: w.value,
    })
}

/// The JSON object of one write: `offset`, `id`, `name`, `mask`, `value`, `fields`, `command`.
/// Fields whose bits are all disabled by the byte mask carry `"masked_out": true`.
pub fn write_json(w: &CmdWrite) -> Value {
    with_write_json(w, |j| serde_json::to_value(j).unwrap_or(Value::Null))
}

/// One text line for a write: offset, mask, the catalogue's one-line decode.
pub fn write_line(w: &CmdWrite) -> String {
    let d = regs::describe(w.id, w.value);
    let note = if w.mask == 0 {
        "  (mask 0: no byte written)"
    } else {
        ""
    };
    format!(
        "0x{:04X}  mask {:04b}  {}{note}",
        w.offset,
        w.mask,
        d.one_line()
    )
}

/// Prints every write of `list`, each line prefixed by `indent`; commands with several
/// parameters get a header line.
pub fn write_list_text(out: &mut impl Write, list: &CmdList, indent: &str) -> std::io::Result<()> {
    for (index, c) in list.commands.iter().enumerate() {
        if c.param_count > 1 {
            writeln!(
                out,
                "{indent}-- command #{index} at 0x{:04X}: {} burst of {} writes (header 0x{:08X})",
                c.offset,
                form_name(c.form()),
                c.param_count,
                c.header.0
            )?;
        }
        for w in list.writes_of(c) {
            writeln!(out, "{indent}{}", write_line(w))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masked_out_fields() {
        assert!(!masked_out((0, 31), 0x1));
        assert!(masked_out((8, 15), 0x1));
        assert!(!masked_out((7, 8), 0x2));
        assert!(masked_out((0, 0), 0));
    }

    #[test]
    fn other_file_kinds_are_refused_by_their_magic() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let err = check_kind(&root.join("assets/demos/cube.ctf")).unwrap_err();
        assert!(err.to_string().contains("picaview trace info"), "{err}");
        let err = check_kind(&root.join("assets/shaders/craftus-world.shbin")).unwrap_err();
        assert!(err.to_string().contains("picaview disasm"), "{err}");
        let list = root.join("pica-cmd/tests/fixtures/gpuResetSequence.pica_cmdlist.bin");
        assert_eq!(check_kind(&list).unwrap(), 1336);
    }

    #[test]
    fn diagnostics_are_bounded() {
        let mut d = BoundedDiagnostics::default();
        for offset in 0..(MAX_LISTED_DIAGNOSTICS as u32 + 5) {
            d.push(Diagnostic::UnknownRegister { offset, id: 0x300 });
        }
        let mut lines = Vec::new();
        d.print(|l| {
            lines.push(l);
            Ok(())
        })
        .unwrap();
        assert_eq!(lines.len(), MAX_LISTED_DIAGNOSTICS + 1);
        assert_eq!(lines.last().unwrap(), "warning: ... and 5 more warnings");
    }

    #[test]
    fn json_object_has_the_documented_keys() {
        let w = CmdWrite {
            offset: 8,
            id: 0x010,
            mask: 0xF,
            value: 0x1234_5678,
            command: 1,
            header_offset: 12,
        };
        let v = write_json(&w);
        for key in ["offset", "id", "name", "mask", "value", "fields"] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["offset"], 8);
        assert_eq!(v["name"], "FINALIZE");
    }
}
