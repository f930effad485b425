//! Lexical layer of the picasso-syntax assembler: lines, comments, labels, argument splitting and
//! the C library number parsers picasso relies on.
//!
//! Stage: assembler front end. Inputs: source text. Outputs: [`SourceLine`]s (comment removed,
//! labels split off) and [`Piece`]s — slices of a line that remember their byte offset so that
//! diagnostics can point at them. Registers read: none.
//!
//! picasso 2.7.1 does not tokenise: it cuts each line at commas, spaces, `(` or `)` as each
//! directive needs, and reads numbers with `strtoll`/`atoi`/`atof`, which accept a prefix and
//! ignore what follows. Byte compatibility needs the same cuts and the same number prefixes, so
//! this module reproduces them ([`Cursor`], [`strtoll`], [`atoi`], [`atof`]); the callers warn
//! where picasso silently ignores text.

/// C `isspace` in the "C" locale (ASCII only).
pub(crate) fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// A slice of one source line plus its byte offset in that line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Piece<'a> {
    /// The text.
    pub text: &'a str,
    /// Byte offset of `text` within the line.
    pub offset: usize,
}

impl<'a> Piece<'a> {
    /// A piece starting at `offset`.
    pub fn new(text: &'a str, offset: usize) -> Self {
        Piece { text, offset }
    }

    /// Without leading and trailing C white space (picasso's `trim_whitespace`).
    pub fn trim(self) -> Self {
        let bytes = self.text.as_bytes();
        let start = bytes
            .iter()
            .position(|&b| !is_c_space(b))
            .unwrap_or(bytes.len());
        let end = bytes
            .iter()
            .rposition(|&b| !is_c_space(b))
            .map_or(start, |p| p + 1)
            .max(start);
        self.slice(start, end)
    }

    /// Sub-slice by byte range (indices must lie on ASCII boundaries, which all callers ensure by
    /// cutting only at ASCII characters).
    pub fn slice(self, start: usize, end: usize) -> Self {
        let text = self.text.get(start..end).unwrap_or("");
        Piece {
            text,
            offset: self.offset + start,
        }
    }

    /// From byte `start` to the end.
    pub fn from(self, start: usize) -> Self {
        self.slice(start, self.text.len())
    }

    /// Up to byte `end`.
    pub fn to(self, end: usize) -> Self {
        self.slice(0, end)
    }

    /// Byte index of the first occurrence of `c`.
    pub fn find(self, c: u8) -> Option<usize> {
        self.text.bytes().position(|b| b == c)
    }

    /// True when empty.
    pub fn is_empty(self) -> bool {
        self.text.is_empty()
    }

    /// The first byte, if any.
    pub fn first(self) -> Option<u8> {
        self.text.bytes().next()
    }
}

/// picasso's `mystrtok` state over the rest of a line: successive calls cut the next field at a
/// set of delimiter characters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cursor<'a> {
    rest: Piece<'a>,
}

impl<'a> Cursor<'a> {
    /// A cursor over `rest`.
    pub fn new(rest: Piece<'a>) -> Self {
        Cursor { rest }
    }

    /// Everything not consumed yet (picasso's `mystrtok_pos`).
    pub fn rest(&self) -> Piece<'a> {
        self.rest
    }

    /// Cuts the next field at the first byte in `delims` (consuming that one delimiter). `None`
    /// when nothing is left; an empty field (two delimiters in a row) is `Some("")`.
    pub fn tok(&mut self, delims: &[u8]) -> Option<Piece<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let len = self.rest.text.len();
        let pos = self
            .rest
            .text
            .bytes()
            .position(|b| delims.contains(&b))
            .unwrap_or(len);
        let field = self.rest.to(pos);
        self.rest = self.rest.from((pos + 1).min(len));
        Some(field)
    }

    /// Cuts the next field at a space or tab, then skips white space (`mystrtok_spc`).
    pub fn tok_spc(&mut self) -> Option<Piece<'a>> {
        let field = self.tok(b" \t")?;
        let skip = self
            .rest
            .text
            .bytes()
            .take_while(|&b| is_c_space(b))
            .count();
        self.rest = self.rest.from(skip);
        Some(field)
    }

    /// The next comma-separated argument, trimmed (`nextArg`).
    pub fn next_arg(&mut self) -> Option<Piece<'a>> {
        self.tok(b",").map(Piece::trim)
    }

    /// The text up to the next `(`, trimmed (`nextArgCParen`).
    pub fn next_arg_cparen(&mut self) -> Option<Piece<'a>> {
        self.tok(b"(").map(Piece::trim)
    }

    /// The next space-separated argument, trimmed (`nextArgSpc`).
    pub fn next_arg_spc(&mut self) -> Option<Piece<'a>> {
        self.tok_spc().map(Piece::trim)
    }
}

/// One logical source line after comment removal and label extraction.
#[derive(Clone, Debug)]
pub(crate) struct SourceLine<'a> {
    /// The raw line (without the newline), for diagnostics.
    pub raw: &'a str,
    /// Line number for diagnostics (picasso counts `\n`; `# N "file"` markers renumber).
    pub number: u32,
    /// Index into the file-name table for diagnostics (changed by `# N "file"` markers).
    pub file: usize,
    /// Labels defined on this line, in order.
    pub labels: Vec<Piece<'a>>,
    /// The statement after the labels, trimmed; empty when the line has none.
    pub statement: Piece<'a>,
}

/// Result of splitting a file into lines.
pub(crate) struct Lines<'a> {
    /// The lines that carry labels or a statement (blank and comment-only lines are dropped).
    pub lines: Vec<SourceLine<'a>>,
    /// File names: index 0 is the name given by the caller, others come from line markers.
    pub files: Vec<String>,
    /// Byte offset of an embedded NUL that ended the text, if any (picasso reads C strings).
    pub nul_at: Option<usize>,
}

/// Splits `text` into lines the way picasso's `AssembleString` does: lines end at `\n`; a `;`
/// starts a comment; every `name:` at the start is a label; `# N "file"` renumbers lines.
pub(crate) fn split_lines<'a>(name: &str, text: &'a str) -> Lines<'a> {
    let nul_at = text.find('\0');
    let text = &text[..nul_at.unwrap_or(text.len())];
    let mut files = vec![name.to_string()];
    let mut file = 0usize;
    let mut lines = Vec::new();
    let mut number: u32 = 1;
    for raw in text.split('\n') {
        let this_number = number;
        number = number.wrapping_add(1);
        let full = Piece::new(raw, 0);
        let code = match full.find(b';') {
            Some(p) => full.to(p),
            None => full,
        };
        let mut line = code.trim();
        let mut labels = Vec::new();
        while let Some(colon) = line.find(b':') {
            labels.push(line.to(colon));
            line = line.from(colon + 1).trim();
        }
        if line.first() == Some(b'#') {
            // `# N "file"`: the next line is line N of `file`.
            if !labels.is_empty() {
                let statement = line.to(0);
                lines.push(SourceLine {
                    raw,
                    number: this_number,
                    file,
                    labels,
                    statement,
                });
            }
            let marker = line.from(1).trim();
            let mut cur = Cursor::new(marker);
            if let Some(num) = cur.tok(b" \t") {
                number = u32::try_from(atoi(num.text)).unwrap_or(0);
                let mut fname = cur.rest().trim().text;
                if let Some(stripped) = fname.strip_prefix('"') {
                    fname = stripped.strip_suffix('"').unwrap_or(stripped);
                }
                if !fname.is_empty() {
                    files.push(fname.to_string());
                    file = files.len() - 1;
                }
            }
            continue;
        }
        if labels.is_empty() && line.is_empty() {
            continue;
        }
        lines.push(SourceLine {
            raw,
            number: this_number,
            file,
            labels,
            statement: line,
        });
    }
    Lines {
        lines,
        files,
        nul_at,
    }
}

/// picasso's `validateIdentifier`: C identifier characters plus `$`; the empty string passes.
pub(crate) fn is_identifier(id: &str) -> bool {
    id.bytes().enumerate().all(|(i, c)| {
        c.is_ascii_alphabetic() || c == b'_' || c == b'$' || (i > 0 && c.is_ascii_digit())
    })
}

/// Result of a C number parse: the value and how many bytes were consumed (0 = no number).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Parsed<T> {
    /// The value (0 when nothing was consumed).
    pub value: T,
    /// Bytes consumed from the start of the input, including leading white space and sign.
    pub consumed: usize,
}

fn skip_space(b: &[u8]) -> usize {
    b.iter().take_while(|&&c| is_c_space(c)).count()
}

/// C `strtoll(s, &end, base)` for base 0 or 10: leading white space, optional sign, then (base 0)
/// `0x` hex, `0` octal or decimal digits. Saturates at the `i64` range like glibc.
pub(crate) fn strtoll(s: &str, base0: bool) -> Parsed<i64> {
    let b = s.as_bytes();
    let mut i = skip_space(b);
    let mut neg = false;
    if let Some(&c) = b.get(i)
        && (c == b'+' || c == b'-')
    {
        neg = c == b'-';
        i += 1;
    }
    let mut radix = 10u32;
    if base0 && b.get(i) == Some(&b'0') {
        if matches!(b.get(i + 1), Some(b'x' | b'X'))
            && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            radix = 16;
            i += 2;
        } else {
            radix = 8;
        }
    }
    let start = i;
    let mut acc: i128 = 0;
    while let Some(d) = b.get(i).and_then(|&c| (c as char).to_digit(radix)) {
        // Saturate well above the i64 range; the clamp below gives glibc's result.
        acc = (acc * i128::from(radix) + i128::from(d)).min(i128::from(u64::MAX));
        i += 1;
    }
    if i == start {
        return Parsed {
            value: 0,
            consumed: 0,
        };
    }
    let signed = if neg { -acc } else { acc };
    let value = signed.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64; // ok: clamped
    Parsed { value, consumed: i }
}

/// C `atoi`: glibc's `(int) strtol(s, NULL, 10)`, i.e. a saturated 64-bit value truncated to 32
/// bits.
pub(crate) fn atoi(s: &str) -> i32 {
    strtoll(s, false).value as i32 // ok: C truncation is the emulated behaviour
}

/// How many bytes of `s` `atoi` would consume (0 when there is no number).
pub(crate) fn atoi_len(s: &str) -> usize {
    strtoll(s, false).consumed
}

/// C `atof`/`strtod`: white space, sign, then a decimal or hexadecimal floating-point number,
/// `inf`/`infinity` or `nan`/`nan(...)`; the longest valid prefix is used and 0.0 results when
/// there is none. The decimal conversion is correctly rounded, as glibc's is.
pub(crate) fn atof(s: &str) -> Parsed<f64> {
    let b = s.as_bytes();
    let mut i = skip_space(b);
    let mut neg = false;
    if let Some(&c) = b.get(i)
        && (c == b'+' || c == b'-')
    {
        neg = c == b'-';
        i += 1;
    }
    let sign = if neg { -1.0 } else { 1.0 };
    let rest = &s[i..];
    let lower: String = rest
        .chars()
        .take(8)
        .collect::<String>()
        .to_ascii_lowercase();
    if lower.starts_with("inf") {
        let n = if lower.starts_with("infinity") { 8 } else { 3 };
        return Parsed {
            value: sign * f64::INFINITY,
            consumed: i + n,
        };
    }
    if lower.starts_with("nan") {
        let mut n = 3;
        if b.get(i + 3) == Some(&b'(') {
            let close = b[i + 4..]
                .iter()
                .position(|&c| !(c.is_ascii_alphanumeric() || c == b'_'));
            if let Some(p) = close
                && b.get(i + 4 + p) == Some(&b')')
            {
                n = 4 + p + 1;
            }
        }
        return Parsed {
            value: f64::NAN.copysign(sign),
            consumed: i + n,
        };
    }
    if b.get(i) == Some(&b'0') && matches!(b.get(i + 1), Some(b'x' | b'X')) {
        if let Some(p) = hex_float(&b[i + 2..]) {
            return Parsed {
                value: sign * p.value,
                consumed: i + 2 + p.consumed,
            };
        }
        // "0x" without hex digits: only the "0" is a number.
        return Parsed {
            value: sign * 0.0,
            consumed: i + 1,
        };
    }
    // Decimal: digits [. digits] [e[sign]digits], at least one mantissa digit.
    let start = i;
    let mut j = i;
    let int_digits = b[j..].iter().take_while(|c| c.is_ascii_digit()).count();
    j += int_digits;
    let mut frac_digits = 0;
    if b.get(j) == Some(&b'.') {
        frac_digits = b[j + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if int_digits + frac_digits > 0 {
            j += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return Parsed {
            value: 0.0,
            consumed: 0,
        };
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let exp_digits = b[k.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        if exp_digits > 0 {
            j = k + exp_digits;
        }
    }
    let text = &s[start..j];
    // Rust's parser rejects only forms we never pass (checked above); fall back to 0 regardless.
    let value: f64 = text.parse().unwrap_or(0.0);
    Parsed {
        value: sign * value,
        consumed: j,
    }
}

/// Hexadecimal float body after `0x`: hex digits, optional `.` and digits, optional `p` exponent.
fn hex_float(b: &[u8]) -> Option<Parsed<f64>> {
    let mut i = 0;
    let mut mant: u64 = 0;
    let mut sticky = false;
    let mut exp: i64 = 0;
    let mut digits = 0;
    let mut seen_dot = false;
    while let Some(&c) = b.get(i) {
        if c == b'.' && !seen_dot {
            seen_dot = true;
            i += 1;
            continue;
        }
        let Some(d) = (c as char).to_digit(16) else {
            break;
        };
        digits += 1;
        if mant >> 56 == 0 {
            mant = (mant << 4) | u64::from(d);
            if seen_dot {
                exp -= 4;
            }
        } else {
            sticky |= d != 0;
            if !seen_dot {
                exp += 4;
            }
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    if matches!(b.get(i), Some(b'p' | b'P')) {
        let e = strtoll(std::str::from_utf8(&b[i + 1..]).unwrap_or(""), false);
        if e.consumed > 0 && !is_c_space(b[i + 1]) {
            exp = exp.saturating_add(e.value.clamp(-100_000, 100_000));
            i += 1 + e.consumed;
        }
    }
    if sticky {
        mant |= 1;
    }
    // `mant` has at most 60 significant bits, so the sticky bit sits below the f64 rounding point.
    let value = (mant as f64) * 2f64.powi(exp.clamp(-2000, 2000) as i32); // ok: clamped
    Some(Parsed { value, consumed: i })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_cuts_like_mystrtok() {
        let line = Piece::new("r0, r1 ,  r2,", 0);
        let mut c = Cursor::new(line);
        assert_eq!(c.next_arg().map(|p| p.text), Some("r0"));
        let second = c.next_arg().unwrap();
        assert_eq!((second.text, second.offset), ("r1", 4));
        assert_eq!(c.next_arg().map(|p| p.text), Some("r2"));
        assert_eq!(c.next_arg(), None);
        let mut c = Cursor::new(Piece::new("a,,b", 0));
        assert_eq!(c.next_arg().map(|p| p.text), Some("a"));
        assert_eq!(c.next_arg().map(|p| p.text), Some(""));
        assert_eq!(c.next_arg().map(|p| p.text), Some("b"));
    }

    #[test]
    fn strtoll_matches_glibc() {
        assert_eq!(
            strtoll("12x", true),
            Parsed {
                value: 12,
                consumed: 2
            }
        );
        assert_eq!(strtoll("0x1f", true).value, 31);
        assert_eq!(strtoll("010", true).value, 8);
        assert_eq!(
            strtoll("08", true),
            Parsed {
                value: 0,
                consumed: 1
            }
        );
        assert_eq!(
            strtoll("0x", true),
            Parsed {
                value: 0,
                consumed: 1
            }
        );
        assert_eq!(strtoll("  -5", true).value, -5);
        assert_eq!(strtoll("x", true).consumed, 0);
        assert_eq!(strtoll("99999999999999999999999", true).value, i64::MAX);
        assert_eq!(strtoll("-99999999999999999999999", true).value, i64::MIN);
        assert_eq!(atoi("0x10"), 0);
        assert_eq!(atoi("300"), 300);
        assert_eq!(atoi("4294967297"), 1);
    }

    #[test]
    fn atof_prefixes() {
        assert_eq!(atof("1.5f").value, 1.5);
        assert_eq!(atof(" -.25").value, -0.25);
        assert_eq!(atof("1e3").value, 1000.0);
        assert_eq!(atof("1e").value, 1.0);
        assert_eq!(atof("abc").consumed, 0);
        assert_eq!(atof("0x1p4").value, 16.0);
        assert_eq!(atof("0x.8").value, 0.5);
        assert!(atof("-inf").value.is_infinite());
        assert!(atof("nan").value.is_nan());
        assert_eq!(atof("5.").value, 5.0);
    }

    #[test]
    fn labels_and_comments() {
        let l = split_lines(
            "t",
            "a: b:  mov r0, r1 ; c\n\n; only\nx:\n# 10 \"other.pica\"\nend",
        );
        assert_eq!(l.lines.len(), 3);
        assert_eq!(
            l.lines[0].labels.iter().map(|p| p.text).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(l.lines[0].statement.text, "mov r0, r1");
        assert_eq!(l.lines[0].statement.offset, 7);
        assert_eq!(l.lines[1].statement.text, "");
        assert_eq!(
            (l.lines[2].number, l.files[l.lines[2].file].as_str()),
            (10, "other.pica")
        );
    }
}
