//! Human-readable and structured decodes of register writes: [`describe`] for internal
//! registers (and [`crate::regs::external::describe`] for MMIO registers).
//!
//! Stage: presentation (CLI `cmdlist`/`trace dump`, the viewer's command list). Inputs: register
//! id or physical address, 32-bit value. Outputs: [`RegDescription`] (serde-serialisable, with a
//! one-line and a multi-line text form). Registers read: any.

use core::fmt::{self, Write as _};

use serde::Serialize;

use super::{Block, Field, FieldKind, RegDef, fixed_to_f64, lookup, numbers, sign_extend};

/// Which register space a description refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum RegSpace {
    /// PICA internal register, `id` is 0x000-0x2FF (or an undocumented id past that).
    Internal,
    /// GPU / LCD MMIO register, `id` is the physical address.
    External,
}

/// One decoded field of a register value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldDescription {
    /// Field name.
    pub name: &'static str,
    /// Inclusive bit range `(lo, hi)`.
    pub bits: (u8, u8),
    /// Raw field bits, shifted to bit 0.
    pub raw: u32,
    /// The decoded meaning, e.g. `f24 1.5`, `LESS`, `0x18000000 (PA)`.
    pub meaning: String,
    /// True if the field overlaps another one (the same bits described two ways).
    #[serde(skip_serializing_if = "core::ops::Not::not")]
    pub alias: bool,
    /// The field's documentation (number format); not serialised.
    #[serde(skip)]
    pub doc: &'static str,
}

/// A decoded register value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RegDescription {
    /// Register space.
    pub space: RegSpace,
    /// Internal register id, or physical address for external registers.
    pub id: u32,
    /// Register name, or `unknown register 0x2E3` / `unknown MMIO register 0x10400FF0`.
    pub name: String,
    /// False for registers no reference documents.
    pub known: bool,
    /// Block of an internal register (by id range); `None` for external registers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<Block>,
    /// For external addresses in the internal-register window (PA 0x10401000 + 4·id), the
    /// internal register id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub internal_id: Option<u16>,
    /// The register value that was decoded.
    pub value: u32,
    /// Decoded fields in layout order.
    pub fields: Vec<FieldDescription>,
    /// The register's documentation; not serialised.
    #[serde(skip)]
    pub doc: &'static str,
}

/// Decodes `value` written to internal register `id`. Unknown ids (including ids past 0x2FF)
/// give a generic description with one raw `value` field; never panics.
pub fn describe(id: u16, value: u32) -> RegDescription {
    match lookup(id) {
        Some(def) => describe_def(def, value),
        None => RegDescription {
            space: RegSpace::Internal,
            id: u32::from(id),
            name: format!("unknown register 0x{id:03X}"),
            known: false,
            block: Some(Block::of(id)),
            internal_id: None,
            value,
            fields: vec![raw_word_field(value)],
            doc: "",
        },
    }
}

pub(crate) fn describe_def(def: &RegDef, value: u32) -> RegDescription {
    RegDescription {
        space: RegSpace::Internal,
        id: u32::from(def.id),
        name: def.name.to_string(),
        known: true,
        block: Some(def.block),
        internal_id: None,
        value,
        fields: def
            .fields
            .iter()
            .map(|f| describe_field(f, value))
            .collect(),
        doc: def.doc,
    }
}

pub(crate) fn raw_word_field(value: u32) -> FieldDescription {
    FieldDescription {
        name: "value",
        bits: (0, 31),
        raw: value,
        meaning: format!("0x{value:08X}"),
        alias: false,
        doc: "undocumented register: raw 32-bit value",
    }
}

/// Decodes one field of register word `word`.
pub fn describe_field(field: &Field, word: u32) -> FieldDescription {
    let raw = field.extract(word);
    FieldDescription {
        name: field.name,
        bits: (field.lo, field.hi),
        raw,
        meaning: meaning(field, raw),
        alias: field.alias,
        doc: field.doc,
    }
}

/// Hex digits needed for a field of `width` bits.
fn hex_digits(width: u32) -> usize {
    width.div_ceil(4).max(1) as usize
}

/// A float in plain decimal, or in scientific notation when that would be very long.
fn float_text(v: f32) -> String {
    let a = v.abs();
    if v.is_finite() && a != 0.0 && !(1e-4..1e7).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// The textual meaning of a field's raw bits.
fn meaning(field: &Field, raw: u32) -> String {
    let width = field.width();
    match field.kind {
        FieldKind::Uint => raw.to_string(),
        FieldKind::Int => sign_extend(raw, width).to_string(),
        FieldKind::Bool => (if raw != 0 { "true" } else { "false" }).to_string(),
        FieldKind::Hex | FieldKind::Data => format!("0x{raw:0w$X}", w = hex_digits(width)),
        FieldKind::Enum(names) => match names.iter().find(|(v, _)| *v == raw) {
            Some((_, name)) => (*name).to_string(),
            None => format!("unknown ({raw})"),
        },
        FieldKind::Biased(bias) => format!("{} (stored {raw})", u64::from(raw) + u64::from(bias)),
        FieldKind::Float24 => format!("f24 {}", float_text(numbers::pica_float_to_f32(raw, 16, 7))),
        FieldKind::Float20 => format!("f20 {}", float_text(numbers::pica_float_to_f32(raw, 12, 7))),
        FieldKind::Float16 => format!("f16 {}", float_text(numbers::pica_float_to_f32(raw, 10, 5))),
        FieldKind::Float31 => format!("f31 {}", float_text(numbers::pica_float_to_f32(raw, 23, 7))),
        FieldKind::Fixed {
            signed,
            int_bits,
            frac_bits,
            divisor,
        } => format!(
            "fixed{}.{int_bits}.{frac_bits} {}",
            u8::from(signed),
            fixed_to_f64(raw, signed, int_bits, frac_bits, divisor)
        ),
        FieldKind::Address { shift } => {
            let pa = u64::from(raw) << (shift & 31);
            format!("0x{pa:08X} (PA)")
        }
        FieldKind::Bytes { shift } => {
            let bytes = u64::from(raw) << (shift & 31);
            format!("{bytes} bytes")
        }
        FieldKind::Rgba8 => {
            let [r, g, b, a] = raw.to_le_bytes();
            format!("rgba({r}, {g}, {b}, {a})")
        }
        FieldKind::Rgb8 => {
            let [r, g, b, _] = raw.to_le_bytes();
            format!("rgb({r}, {g}, {b})")
        }
        FieldKind::BitSet => {
            let mut s = String::from("{");
            let mut first = true;
            for bit in 0..width {
                if raw & (1 << bit) != 0 {
                    if !first {
                        s.push_str(", ");
                    }
                    first = false;
                    let _ = write!(s, "{bit}");
                }
            }
            s.push('}');
            s
        }
        FieldKind::Trigger => {
            if raw == 0 {
                "0 (idle)".to_string()
            } else {
                format!("0x{raw:X} (trigger)")
            }
        }
        FieldKind::Const(expected) => {
            if raw == expected {
                format!("0x{raw:X}")
            } else {
                format!("0x{raw:X} (expected 0x{expected:X})")
            }
        }
    }
}

impl RegDescription {
    /// `0x107 DEPTH_COLOR_MASK = 0x00001F41 { depth_test_enable: true, depth_func: LESS, … }`
    /// (the viewer's command-list line).
    pub fn one_line(&self) -> String {
        let mut s = String::new();
        let _ = self.write_one_line(&mut s);
        s
    }

    /// A header line and one indented line per field with its bit range, raw value and
    /// meaning.
    pub fn multi_line(&self) -> String {
        let mut s = String::new();
        let _ = self.write_multi_line(&mut s);
        s
    }

    fn write_location(&self, out: &mut impl fmt::Write) -> fmt::Result {
        match self.space {
            RegSpace::Internal => write!(out, "0x{:03X} ", self.id),
            RegSpace::External => write!(out, "0x{:08X} ", self.id),
        }
    }

    fn write_one_line(&self, out: &mut impl fmt::Write) -> fmt::Result {
        self.write_location(out)?;
        write!(out, "{} = 0x{:08X}", self.name, self.value)?;
        if !self.known {
            return Ok(());
        }
        out.write_str(" {")?;
        for (i, f) in self.fields.iter().enumerate() {
            if i > 0 {
                out.write_str(",")?;
            }
            write!(out, " {}: {}", f.name, f.meaning)?;
        }
        out.write_str(" }")
    }

    fn write_multi_line(&self, out: &mut impl fmt::Write) -> fmt::Result {
        self.write_location(out)?;
        writeln!(out, "{} = 0x{:08X}", self.name, self.value)?;
        for f in &self.fields {
            let bits = if f.bits.0 == f.bits.1 {
                format!("bit {}", f.bits.0)
            } else {
                format!("bits {}-{}", f.bits.0, f.bits.1)
            };
            let alias = if f.alias { " (alias)" } else { "" };
            writeln!(
                out,
                "  {bits:<11} {:<28} = {}  [raw 0x{:X}]{alias}",
                f.name, f.meaning, f.raw
            )?;
        }
        Ok(())
    }
}

/// `{}` gives [`RegDescription::one_line`], `{:#}` gives [`RegDescription::multi_line`].
impl fmt::Display for RegDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            self.write_multi_line(f)
        } else {
            self.write_one_line(f)
        }
    }
}
