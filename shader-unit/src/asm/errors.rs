//! Diagnostics of the shader assembler: errors and warnings with a source location.
//!
//! Stage: assembler front end (no hardware stage). Inputs: locations and messages produced while
//! lexing, parsing and generating code. Outputs: [`AsmError`] values (one per problem) and the
//! [`AsmErrors`] list that [`super::assemble`] returns. Registers read: none.
//!
//! Every diagnostic names `file:line:column` (1-based; the column counts characters, and is 0 when
//! a problem concerns a whole file), the offending token when there is one, and what was expected.
//! [`AsmError::render`] adds the source line with a caret marker underneath, like a compiler.

use std::fmt;

/// The assembler keeps at most this many diagnostics per run; the rest are counted in one
/// closing diagnostic (an error if any dropped one was an error), so that a source with a
/// million bad lines cannot make the error list (and its rendering) take gigabytes.
pub const MAX_DIAGNOSTICS: usize = 10_000;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The input cannot be assembled; no output is produced.
    Error,
    /// The input is assembled (byte-compatible with picasso) but probably does not mean what it
    /// says, e.g. text that picasso silently ignores.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One assembler diagnostic (error or warning) with its source location.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.headline())]
pub struct AsmError {
    /// Error or warning.
    pub severity: Severity,
    /// Name of the source file, as given to the assembler (or set by a `# line "file"` marker).
    pub file: String,
    /// 1-based line number (0 when the diagnostic concerns the whole input).
    pub line: u32,
    /// 1-based column in characters of the first offending character (0 = no column).
    pub column: u32,
    /// What is wrong, in one sentence without the location prefix.
    pub message: String,
    /// The offending token as written in the source, if there is one.
    pub token: Option<String>,
    /// What the assembler expected instead, if that can be said.
    pub expected: Option<String>,
    /// The whole source line, for [`AsmError::render`].
    pub source_line: Option<String>,
    /// Length in characters of the marked token (at least 1 when a column is known).
    pub span: u32,
}

impl AsmError {
    /// The one-line form `file:line:column: error: message; expected ...` (`file: error: ...`
    /// for problems that concern a whole file).
    pub fn headline(&self) -> String {
        let mut s = if self.line == 0 {
            format!("{}: {}: {}", self.file, self.severity, self.message)
        } else {
            format!(
                "{}:{}:{}: {}: {}",
                self.file, self.line, self.column, self.severity, self.message
            )
        };
        if let Some(expected) = &self.expected {
            s.push_str("; expected ");
            s.push_str(expected);
        }
        s
    }

    /// The headline plus the source line and a caret marker under the offending token.
    pub fn render(&self) -> String {
        let mut s = self.headline();
        if let (Some(src), true) = (&self.source_line, self.line > 0) {
            let number = self.line.to_string();
            let pad = " ".repeat(number.len());
            let shown: String = src
                .chars()
                .map(|c| if c == '\t' { ' ' } else { c })
                .collect();
            s.push('\n');
            s.push_str(&format!(" {number} | {}", shown.trim_end()));
            if self.column > 0 {
                let indent = " ".repeat(self.column as usize - 1);
                let marks = "^".repeat(self.span.max(1) as usize);
                s.push('\n');
                s.push_str(&format!(" {pad} | {indent}{marks}"));
            }
        }
        s
    }

    /// True for [`Severity::Error`].
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// All diagnostics of a failed assembly (at least one error; warnings are included, everything
/// in source order). Displays as a count plus one headline per error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.summary())]
pub struct AsmErrors(pub Vec<AsmError>);

impl AsmErrors {
    /// Only the errors (no warnings).
    pub fn errors(&self) -> impl Iterator<Item = &AsmError> {
        self.0.iter().filter(|e| e.is_error())
    }

    /// Every diagnostic rendered with its source line, separated by blank lines.
    pub fn render(&self) -> String {
        let parts: Vec<String> = self.0.iter().map(AsmError::render).collect();
        parts.join("\n")
    }
}

impl std::ops::Deref for AsmErrors {
    type Target = [AsmError];
    fn deref(&self) -> &[AsmError] {
        &self.0
    }
}

impl AsmErrors {
    fn summary(&self) -> String {
        let n = self.errors().count();
        let mut s = format!("{n} assembler error{}", if n == 1 { "" } else { "s" });
        for e in self.errors() {
            s.push('\n');
            s.push_str(&e.headline());
        }
        s
    }
}
