//! Operand syntax of the picasso language: register operands, swizzles, index registers,
//! condition expressions and the small keyword sets of the directives.
//!
//! Stage: assembler front end. Inputs: argument [`Piece`]s cut by the lexer. Outputs: syntactic
//! descriptions ([`RegSyntax`], condition bits, keyword values) or a [`Problem`] naming the
//! offending piece. Name resolution (aliases, register ranges) happens in `codegen`, because it
//! needs the assembler's state. Registers read: none.
//!
//! Operand grammar (picasso 2.7.1 `parseReg`):
//! `[-] name [ '[' (offset | idxreg | idxreg '+' offset) ']' ] [ '.' swizzle ]` where `idxreg` is
//! `a0.x`/`a0` (1), `a0.y`/`a1` (2) or `aL`/`a2`/`lcnt` (3), `offset` is a non-negative decimal
//! number and `swizzle` is 1–4 letters of `xyzw`, `rgba` or `stpq` (the last letter repeats).
//!
//! Like picasso, the offset is read with C `atoi`, so unreadable offsets are not errors: `c0[abc]`,
//! `c0[]` and `c0[a0.x-1]` are offset 0 without an index register (`a0.x-1` is not an index
//! register name and `atoi` reads no number from it), `c0[2x]` is offset 2, and a name before
//! `+` that is not an index register means no index register (`c0[a3+1]` is `c1`). These are
//! accepted with a warning ([`RegSyntax::lenient`]); a negative offset is still an error.

use super::lexer::{Piece, atoi, atoi_len};

/// A problem found while parsing: where, what, and what was expected.
#[derive(Clone, Debug)]
pub(crate) struct Problem<'a> {
    /// The offending text.
    pub at: Piece<'a>,
    /// What is wrong.
    pub message: String,
    /// What would have been accepted.
    pub expected: Option<String>,
}

impl<'a> Problem<'a> {
    /// A problem without an "expected" part.
    pub fn new(at: Piece<'a>, message: impl Into<String>) -> Self {
        Problem {
            at,
            message: message.into(),
            expected: None,
        }
    }

    /// Adds what was expected.
    pub fn expected(mut self, what: impl Into<String>) -> Self {
        self.expected = Some(what.into());
        self
    }
}

/// Parse result with a [`Problem`] as the error.
pub(crate) type PResult<'a, T> = Result<T, Problem<'a>>;

/// Swizzle selector that leaves the components in place (`xyzw`), in the operand-descriptor
/// layout: component for lane x in bits 6–7, y in 4–5, z in 2–3, w in 0–1 (0 = x … 3 = w).
pub(crate) const IDENTITY_SWIZZLE: u32 = 0x1B;

/// Operand source field as picasso keeps it: bit 0 = negate, bits 1–8 = swizzle selector.
pub(crate) const DEFAULT_OPSRC: u32 = IDENTITY_SWIZZLE << 1;

/// The bracket part of an operand.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bracket {
    /// Index register: 0 none, 1 a0.x, 2 a0.y, 3 aL (the IDX field encoding).
    pub idx: u8,
    /// Register offset (non-negative).
    pub offset: i32,
}

/// A register operand taken apart, before name resolution.
#[derive(Clone, Debug)]
pub(crate) struct RegSyntax<'a> {
    /// The whole operand text.
    pub whole: Piece<'a>,
    /// The register or alias name (without sign, bracket and swizzle).
    pub name: Piece<'a>,
    /// The bracket part.
    pub bracket: Option<Bracket>,
    /// The operand source field: negate bit and the swizzle selector (identity when absent).
    pub opsrc: u32,
    /// Text between `]` and the swizzle (or the end) that picasso ignores.
    pub ignored: Option<Piece<'a>>,
    /// Bracket text picasso reads leniently (see the module docs), with what it made of it.
    pub lenient: Option<(Piece<'a>, String)>,
}

/// Index-register names (`convertIdxRegName`), ASCII case-insensitive.
pub(crate) fn index_register(name: &str) -> u8 {
    let is = |s: &str| name.eq_ignore_ascii_case(s);
    if is("a0") || is("a0.x") {
        1
    } else if is("a1") || is("a0.y") {
        2
    } else if is("a2") || is("lcnt") || is("aL") {
        3
    } else {
        0
    }
}

/// Parses a swizzle such as `xyz` or `wzyx` into the 8-bit selector (`parseSwizzling`). An empty
/// text gives `xxxx`, as in picasso.
pub(crate) fn parse_swizzle(text: &str) -> Option<u32> {
    if text.len() > 4 {
        return None;
    }
    let mut out = 0u32;
    let mut last = 0u32;
    let mut count = 0;
    for c in text.bytes() {
        last = match c.to_ascii_lowercase() {
            b'x' | b'r' | b's' => 0,
            b'y' | b'g' | b't' => 1,
            b'z' | b'b' | b'p' => 2,
            b'w' | b'a' | b'q' => 3,
            _ => return None,
        };
        out |= last << (6 - 2 * count);
        count += 1;
    }
    for j in count..4 {
        out |= last << (6 - 2 * j);
    }
    Some(out)
}

/// Destination write mask from a swizzle selector (`maskFromSwizzling`): every component the
/// selector names is enabled. `reverse` = true gives the operand-descriptor layout (x = bit 3),
/// false the DVLE output-table layout (x = bit 0).
pub(crate) fn mask_from_swizzle(selector: u32, reverse: bool) -> u32 {
    let mut out = 0;
    for i in 0..4 {
        let comp = (selector >> (2 * i)) & 3;
        out |= 1 << if reverse { 3 - comp } else { comp };
    }
    out
}

const SWIZZLE_EXPECTED: &str = "1 to 4 components from `xyzw`, `rgba` or `stpq`";

/// Reads a register offset inside brackets the way picasso does, with C `atoi`: leading white
/// space, an optional sign and decimal digits; no number reads 0 and text after the number is
/// ignored. Returns the offset and, when picasso's reading is not the plain number written, a
/// note saying what it read. A negative offset is an error (as in picasso).
fn bracket_offset(p: Piece<'_>) -> PResult<'_, (i32, Option<String>)> {
    let value = atoi(p.text);
    if value < 0 {
        return Err(
            Problem::new(p, format!("negative register offset `{}`", p.text))
                .expected("a non-negative decimal number (picasso has no negative offsets)"),
        );
    }
    let note = (p.is_empty() || atoi_len(p.text) != p.text.len()).then(|| {
        format!(
            "register offset `{}` is read as {value} (picasso reads it with atoi: no number reads 0, text after the number is ignored)",
            p.text
        )
    });
    Ok((value, note))
}

/// Takes a register operand apart. `allow_idx` says whether relative addressing is allowed here.
pub(crate) fn parse_reg_syntax(whole: Piece<'_>, allow_idx: bool) -> PResult<'_, RegSyntax<'_>> {
    let mut pos = whole;
    let negate = pos.first() == Some(b'-');
    if negate {
        pos = pos.from(1);
    }
    let mut bracket = None;
    let mut ignored = None;
    let mut lenient = None;
    let (name_end, tail) = match pos.find(b'[') {
        Some(ob) => {
            let after = pos.from(ob + 1);
            let Some(cb) = after.find(b']') else {
                return Err(
                    Problem::new(whole, format!("missing `]` in `{}`", whole.text)).expected("`]`"),
                );
            };
            let inner = after.to(cb).trim();
            let idx = index_register(inner.text);
            let b = if idx > 0 {
                if !allow_idx {
                    return Err(Problem::new(
                        inner,
                        format!("index register `{}` not allowed here", inner.text),
                    )
                    .expected("a plain register offset such as `[2]`"));
                }
                Bracket { idx, offset: 0 }
            } else if let Some(plus) = inner.find(b'+') {
                let idx_name = inner.to(plus).trim();
                if !allow_idx {
                    return Err(Problem::new(
                        inner,
                        format!("index register `{}` not allowed here", idx_name.text),
                    )
                    .expected("a plain register offset such as `[2]`"));
                }
                let idx = index_register(idx_name.text);
                let off_p = inner.from(plus + 1).trim();
                let (offset, note) = bracket_offset(off_p)?;
                if idx == 0 {
                    // picasso 2.7.1: an unknown name before `+` gives no index register.
                    lenient = Some((
                        idx_name,
                        format!(
                            "`{}` is not an index register: picasso uses no index register here (offset {offset} only)",
                            idx_name.text
                        ),
                    ));
                } else if let Some(n) = note {
                    lenient = Some((off_p, n));
                }
                Bracket { idx, offset }
            } else {
                let (offset, note) = bracket_offset(inner)?;
                lenient = note.map(|n| (inner, n));
                Bracket { idx: 0, offset }
            };
            bracket = Some(b);
            (ob, after.from(cb + 1))
        }
        None => (pos.text.len(), pos),
    };
    let mut opsrc = DEFAULT_OPSRC | u32::from(negate);
    let mut name = pos.to(name_end);
    match tail.find(b'.') {
        Some(dot) => {
            let swz = tail.from(dot + 1);
            let Some(sel) = parse_swizzle(swz.text) else {
                return Err(Problem::new(swz, format!("invalid swizzle `{}`", swz.text))
                    .expected(SWIZZLE_EXPECTED));
            };
            opsrc = (sel << 1) | u32::from(negate);
            if bracket.is_none() {
                name = pos.to(dot);
            } else if dot > 0 {
                ignored = Some(tail.to(dot));
            }
        }
        None => {
            if bracket.is_some() && !tail.is_empty() {
                ignored = Some(tail);
            }
        }
    }
    Ok(RegSyntax {
        whole,
        name,
        bracket,
        opsrc,
        ignored,
        lenient,
    })
}

/// Comparison operator of CMP (`parseCondOp`): eq 0, ne 1, lt 2, le 3, gt 4, ge 5.
pub(crate) fn cmp_op(text: &str) -> Option<u32> {
    ["eq", "ne", "lt", "le", "gt", "ge"]
        .iter()
        .position(|n| text.eq_ignore_ascii_case(n))
        .map(|i| i as u32) // ok: i < 6
}

/// One flag of a condition: `[!]* cmp.x` or `cmp.y`. Returns (which: 0 = x, 1 = y, negated).
fn cond_flag(p: Piece<'_>) -> PResult<'_, (u32, bool)> {
    let bangs = p.text.bytes().take_while(|&b| b == b'!').count();
    let flag = p.from(bangs);
    let neg = bangs % 2 == 1;
    if flag.text.eq_ignore_ascii_case("cmp.x") {
        Ok((0, neg))
    } else if flag.text.eq_ignore_ascii_case("cmp.y") {
        Ok((1, neg))
    } else {
        Err(Problem::new(p, format!("invalid condition `{}`", p.text))
            .expected("`cmp.x`, `cmp.y`, `!cmp.x` or `!cmp.y`"))
    }
}

/// Condition expression of IFC/CALLC/JMPC/BREAKC (`parseCondExp`). Returns the instruction bits:
/// REFX (bit 25), REFY (bit 24) and CONDOP (bits 22–23: 0 OR, 1 AND, 2 X only, 3 Y only).
pub(crate) fn parse_cond_exp(p: Piece<'_>) -> PResult<'_, u32> {
    let mut flags = (1 << 24) | (1 << 25);
    let apply = |flags: &mut u32, (which, neg): (u32, bool)| {
        if neg {
            *flags ^= 1 << (25 - which);
        }
    };
    match p.text.bytes().position(|b| b == b'&' || b == b'|') {
        Some(op) => {
            let kind = p.text.as_bytes()[op];
            let mut second = p.from(op + 1);
            if second.first() == Some(kind) {
                second = second.from(1);
            }
            let first = p.to(op).trim();
            let second = second.trim();
            if kind == b'&' {
                flags |= 1 << 22;
            }
            let f2 = cond_flag(second)?;
            let f1 = cond_flag(first)?;
            if f1.0 == f2.0 {
                return Err(Problem::new(
                    p,
                    format!("condition `{}` tests the same flag twice", p.text),
                )
                .expected("one test of `cmp.x` and one of `cmp.y`"));
            }
            apply(&mut flags, f2);
            apply(&mut flags, f1);
        }
        None => {
            let f1 = cond_flag(p)?;
            apply(&mut flags, f1);
            flags |= (f1.0 + 2) << 22;
        }
    }
    Ok(flags)
}

/// `.setb` values (`parseBool`).
pub(crate) fn parse_bool(text: &str) -> Option<bool> {
    let is = |s: &str| text.eq_ignore_ascii_case(s);
    if is("true") || is("on") || is("1") {
        Some(true)
    } else if is("false") || is("off") || is("0") {
        Some(false)
    } else {
        None
    }
}

/// Output semantic names of `.out` (`parseOutType`) and their DVLE output-table type codes.
pub(crate) fn output_type(text: &str) -> Option<u16> {
    const TYPES: &[(&str, &str, u16)] = &[
        ("pos", "position", 0),
        ("nquat", "normalquat", 1),
        ("clr", "color", 2),
        ("tcoord0", "texcoord0", 3),
        ("tcoord0w", "texcoord0w", 4),
        ("tcoord1", "texcoord1", 5),
        ("tcoord2", "texcoord2", 6),
        ("view", "view", 8),
        ("dummy", "dummy", 9),
    ];
    TYPES
        .iter()
        .find(|(a, b, _)| text.eq_ignore_ascii_case(a) || text.eq_ignore_ascii_case(b))
        .map(|t| t.2)
}

/// Geometry-shader modes of `.gsh` (`parseGshType`): point 0, variable/subdivision 1,
/// fixed/particle 2.
pub(crate) fn gsh_mode(text: &str) -> Option<u8> {
    let is = |s: &str| text.eq_ignore_ascii_case(s);
    if is("point") {
        Some(0)
    } else if is("variable") || is("subdivision") {
        Some(1)
    } else if is("fixed") || is("particle") {
        Some(2)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Piece<'_> {
        Piece::new(s, 0)
    }

    #[test]
    fn swizzles() {
        assert_eq!(parse_swizzle("xyzw"), Some(0x1B));
        assert_eq!(parse_swizzle("x"), Some(0x00));
        assert_eq!(parse_swizzle("xy"), Some(0b00_01_01_01));
        assert_eq!(parse_swizzle("WZYX"), Some(0b11_10_01_00));
        assert_eq!(parse_swizzle(""), Some(0));
        assert_eq!(parse_swizzle("xyzwx"), None);
        assert_eq!(parse_swizzle("xq1"), None);
        assert_eq!(
            mask_from_swizzle(parse_swizzle("xy").unwrap(), true),
            0b1100
        );
        assert_eq!(
            mask_from_swizzle(parse_swizzle("xy").unwrap(), false),
            0b0011
        );
    }

    #[test]
    fn operands() {
        let r = parse_reg_syntax(p("-c4[a0.y+3].zw"), true).unwrap();
        assert_eq!(r.opsrc & 1, 1);
        assert_eq!(r.name.text, "c4");
        let b = r.bracket.unwrap();
        assert_eq!((b.idx, b.offset), (2, 3));
        assert_eq!(r.opsrc, (parse_swizzle("zw").unwrap() << 1) | 1);
        let r = parse_reg_syntax(p("neighbors[     1]"), false).unwrap();
        assert_eq!(r.bracket.unwrap().offset, 1);
        assert!(parse_reg_syntax(p("c0[a0.x]"), false).is_err());
        assert!(parse_reg_syntax(p("c0[1"), true).is_err());
        assert!(parse_reg_syntax(p("c0[-1]"), true).is_err());
        assert!(parse_reg_syntax(p("c0[q+1]"), false).is_err());
        assert!(
            parse_reg_syntax(p("c0[1]"), true)
                .unwrap()
                .lenient
                .is_none()
        );
        // picasso's atoi reading: no number is 0, text after a number is ignored, an unknown
        // name before `+` is no index register.
        for (text, idx, offset) in [
            ("c0[a0.x-1]", 0, 0),
            ("c0[abc]", 0, 0),
            ("c0[]", 0, 0),
            ("c0[ 2x ]", 0, 2),
            ("c0[q+1]", 0, 1),
            ("c0[a3+1]", 0, 1),
            ("c0[a0.y+2z]", 2, 2),
            ("c0[+3]", 0, 3),
        ] {
            let r = parse_reg_syntax(p(text), true).unwrap();
            let b = r.bracket.unwrap();
            assert_eq!((b.idx, b.offset), (idx, offset), "{text}");
            assert!(r.lenient.is_some(), "{text}");
        }
        assert!(
            parse_reg_syntax(p("r0[abc]"), false)
                .unwrap()
                .lenient
                .is_some()
        );
        let r = parse_reg_syntax(p("foo.bar.x"), true);
        assert!(r.is_err());
    }

    #[test]
    fn conditions() {
        assert_eq!(parse_cond_exp(p("cmp.x")).unwrap(), (3 << 24) | (2 << 22));
        assert_eq!(parse_cond_exp(p("!cmp.y")).unwrap(), (1 << 25) | (3 << 22));
        assert_eq!(
            parse_cond_exp(p("cmp.x && !cmp.y")).unwrap(),
            (1 << 25) | (1 << 22)
        );
        assert_eq!(parse_cond_exp(p("!cmp.x | cmp.y")).unwrap(), 1 << 24);
        assert!(parse_cond_exp(p("cmp.x && cmp.x")).is_err());
        assert!(parse_cond_exp(p("cmp.z")).is_err());
    }
}
