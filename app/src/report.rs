//! How the `picaview` command line reports failures, following ripgrep/fd/git:
//!
//! * a user error (missing, unreadable or malformed file, bad option value) is one human line on
//!   stderr, `error: FILE: what is wrong` with byte offsets in hex, and exit status 1, never a
//!   backtrace (backtraces are for panics, which are bugs), whatever `RUST_BACKTRACE` says;
//! * with `--json` the same error is one JSON object on stderr (`{"error": ..., "file": ...,
//!   "offset": ...}`), still with a non-zero status;
//! * a closed stdout (`picaview trace dump X | head`) ends the program quietly with status 0.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::json;

/// A problem with an input file: which file, where in it (byte offset) if known, and what is
/// wrong. Displays as `FILE: WHAT`; `what` carries the offset in hex itself where it matters.
#[derive(Debug)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// Byte offset at fault, if one exists.
    pub offset: Option<u64>,
    /// What is wrong, for people (one line).
    pub what: String,
}

impl FileError {
    /// A problem at a byte offset of `path`.
    pub fn at(path: &Path, offset: Option<u64>, what: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            offset,
            what: what.into(),
        }
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.what)
    }
}

impl std::error::Error for FileError {}

/// Checks that `path` names a regular file before a command opens it, so that a missing file, a
/// directory or a pipe is reported as such (and not as an I/O error at offset 0).
/// `expected` names the kind of file wanted ("a CiTrace (.ctf)").
pub fn check_input_file(path: &Path, expected: &str) -> Result<(), FileError> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(FileError::at(
            path,
            None,
            format!("no such file (expected {expected})"),
        )),
        Err(e) => Err(FileError::at(path, None, format!("cannot open: {e}"))),
        Ok(m) if m.is_dir() => Err(FileError::at(
            path,
            None,
            format!("is a directory (expected {expected})"),
        )),
        // Pipes (`<(...)`), sockets and devices: the readers seek, so they need a file.
        Ok(m) if !m.is_file() => Err(FileError::at(
            path,
            None,
            format!(
                "is not a regular file (a pipe or device?); save it to a file first (expected {expected})"
            ),
        )),
        Ok(_) => Ok(()),
    }
}

/// Bytes as hex pairs with their printable ASCII: `44 56 4C 42 ("DVLB")`.
pub fn hex_bytes(bytes: &[u8]) -> String {
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02X}")).collect();
    let ascii: String = bytes
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                '.'
            }
        })
        .collect();
    format!("{} (\"{ascii}\")", hex.join(" "))
}

/// True if the error (or any of its causes) is a write to a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|e| e.io_error_kind() == Some(io::ErrorKind::BrokenPipe))
    })
}

/// The error and its causes on one line, `outer: inner: ...`, without repeating a cause whose
/// text the line already contains, and with any line breaks inside a message turned to spaces.
pub fn one_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() || line.contains(&text) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&text);
    }
    line
}

/// Prints a failed command's error on stderr: `error: ...` or, with `json`, one JSON object.
pub fn print_error(err: &anyhow::Error, json: bool) {
    let line = one_line(err);
    if json {
        let file = err.chain().find_map(|c| c.downcast_ref::<FileError>());
        let v = json!({
            "error": line,
            "file": file.map(|f| f.path.display().to_string()),
            "offset": file.and_then(|f| f.offset),
        });
        eprintln!("{v}");
    } else {
        eprintln!("error: {line}");
    }
}

/// Prints a command-line usage error (unknown option, missing argument) as one JSON object.
pub fn print_usage_error_json(err: &clap::Error) {
    let text = err.render().to_string();
    // clap's first line is "error: <message>"; the rest is usage and hints.
    let first = text
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .to_string();
    let v = json!({ "error": first, "usage": text.trim_end() });
    eprintln!("{v}");
}

/// Makes a panic caused by printing to a closed stdout (`println!` panics on EPIPE because Rust
/// ignores SIGPIPE) end the program quietly with status 0, like every other closed-pipe exit.
/// Every other panic goes to the default hook (message, and a backtrace when asked for).
pub fn install_panic_hook() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        if msg.starts_with("failed printing to stdout") && msg.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_skips_repeated_causes_and_joins_lines() {
        let inner = anyhow::anyhow!("bad magic\nat offset 0x0");
        let err = inner.context("bad magic at offset 0x0").context("x.ctf");
        assert_eq!(one_line(&err), "x.ctf: bad magic at offset 0x0");
    }

    #[test]
    fn broken_pipe_is_found_in_the_chain() {
        let e = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing");
        assert!(is_broken_pipe(&e));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }

    #[test]
    fn hex_bytes_shows_ascii() {
        assert_eq!(hex_bytes(b"DV\0B"), "44 56 00 42 (\"DV.B\")");
    }
}
