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
//! The write helpers here are shared with `picaview trace dump`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use pica_cmd::cmdlist::{
    self, CmdList, CmdWrite, ExtraParamWidth, Form, ParseOptions, expand_mask,
};
use pica_cmd::regs;
use serde_json::{Value, json};

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

/// Runs `picaview cmdlist`.
pub fn run(args: &CmdlistArgs) -> Result<()> {
    let bytes = std::fs::read(&args.file)
        .with_context(|| format!("cannot read {}", args.file.display()))?;
    let (list, error) = match cmdlist::parse_with(&bytes, args.count_bits.options()) {
        Ok(list) => (list, None),
        Err(e) => {
            let partial = (*e.partial).clone();
            (partial, Some(e))
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        let writes: Vec<Value> = list.writes.iter().map(write_json).collect();
        serde_json::to_writer_pretty(&mut out, &writes)?;
        writeln!(out)?;
        out.flush()?;
        for d in &list.diagnostics {
            eprintln!("warning: {d}");
        }
    } else {
        writeln!(
            out,
            "{}: {} bytes, {} commands, {} register writes",
            args.file.display(),
            bytes.len(),
            list.commands.len(),
            list.writes.len()
        )?;
        write_list_text(&mut out, &list, "")?;
        for d in &list.diagnostics {
            writeln!(out, "warning: {d}")?;
        }
        out.flush()?;
    }
    match error {
        Some(e) => Err(anyhow::Error::new(e).context(format!(
            "{} is not a valid command list",
            args.file.display()
        ))),
        None => Ok(()),
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

/// The JSON object of one write: `offset`, `id`, `name`, `mask`, `value`, `fields`, `command`.
/// Fields whose bits are all disabled by the byte mask carry `"masked_out": true`.
pub fn write_json(w: &CmdWrite) -> Value {
    let d = regs::describe(w.id, w.value);
    let fields: Vec<Value> = d
        .fields
        .iter()
        .map(|f| {
            let mut v = serde_json::to_value(f).unwrap_or(Value::Null);
            if masked_out(f.bits, w.mask)
                && let Value::Object(map) = &mut v
            {
                map.insert("masked_out".into(), Value::Bool(true));
            }
            v
        })
        .collect();
    json!({
        "offset": w.offset,
        "id": w.id,
        "name": d.name,
        "mask": w.mask,
        "value": w.value,
        "fields": fields,
        "command": w.command,
    })
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
            let form = match c.form() {
                Form::Consecutive => "consecutive",
                Form::Repeated => "repeated",
                Form::Single => "single",
            };
            writeln!(
                out,
                "{indent}-- command #{index} at 0x{:04X}: {form} burst of {} writes (header 0x{:08X})",
                c.offset, c.param_count, c.header.0
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
