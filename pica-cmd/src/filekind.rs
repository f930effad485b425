//! File-type detection from the first bytes of a file, and bounded whole-file reads.
//!
//! Stage: the very front of every command-line tool. Input: a path (or the first bytes of a
//! file). Output: what kind of file it is ([`FileKind`]) and, when asked, its bytes, read only
//! after the kind and the length have been checked against a limit. Registers read: none.
//!
//! Every tool reads the 4-byte magic (at most [`SNIFF_LEN`] bytes) *before* reading the rest,
//! so that a 2 GB file of zeros given to `picaview disasm` costs 16 bytes of memory and a clear
//! error, not 2 GB. The magics known here are CiTrace (`"CiTr"`), DVLB shader binaries
//! (`"DVLB"`) and DVOJ shader objects (`"DVOJ"`); anything else may be a raw command list (which
//! has no magic) or something else entirely.
//!
//! [`read_limited`] checks the file length against the caller's limit before allocating, then
//! reads exactly that many bytes (a file that grows while it is read is cut at the length
//! measured first).

use std::fmt;
use std::io::{self, Read};
use std::path::Path;

use thiserror::Error;

/// Number of bytes [`sniff_file`] reads.
pub const SNIFF_LEN: usize = 16;

/// What a file is, judged from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileKind {
    /// A CiTrace GPU trace (magic `"CiTr"`).
    CiTrace,
    /// A linked shader binary, `.shbin` (magic `"DVLB"`).
    ShaderBinary,
    /// An unlinked shader object (magic `"DVOJ"`).
    ShaderObject,
    /// Text that looks like shader assembly source (starts with printable ASCII or a UTF-8 byte
    /// order mark, no NUL byte in the first bytes).
    Text,
    /// None of the above: possibly a raw command list (command lists have no magic).
    Unknown,
}

impl FileKind {
    /// Judges the first bytes of a file (any length; [`SNIFF_LEN`] is plenty).
    pub fn detect(head: &[u8]) -> FileKind {
        match head.get(0..4) {
            Some(b"CiTr") => return FileKind::CiTrace,
            Some(b"DVLB") => return FileKind::ShaderBinary,
            Some(b"DVOJ") => return FileKind::ShaderObject,
            _ => {}
        }
        let body = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
        let texty = |b: &u8| b.is_ascii_graphic() || matches!(b, b' ' | b'\t' | b'\r' | b'\n');
        if !body.is_empty() && body.iter().all(texty) {
            FileKind::Text
        } else {
            FileKind::Unknown
        }
    }

    /// A short human name ("a CiTrace GPU trace", ...).
    pub const fn describe(self) -> &'static str {
        match self {
            FileKind::CiTrace => "a CiTrace GPU trace (.ctf)",
            FileKind::ShaderBinary => "a compiled shader binary (DVLB, .shbin)",
            FileKind::ShaderObject => "a shader object (DVOJ)",
            FileKind::Text => "a text file",
            FileKind::Unknown => "a file of unknown type",
        }
    }

    /// The `picaview` subcommand that reads this kind of file, if one does.
    pub const fn suggested_command(self) -> Option<&'static str> {
        match self {
            FileKind::CiTrace => Some("picaview trace info FILE (or trace dump / trace check)"),
            FileKind::ShaderBinary | FileKind::ShaderObject => {
                Some("picaview disasm FILE (or shader run FILE)")
            }
            FileKind::Text => Some("picaview asm FILE -o OUT.shbin (if it is shader source)"),
            FileKind::Unknown => None,
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// Why a file could not be read within its limit.
#[derive(Debug, Error)]
pub enum ReadError {
    /// Opening, measuring or reading failed.
    #[error("cannot read the file: {0}")]
    Io(#[from] io::Error),
    /// The file is larger than the caller allows for this kind of file.
    #[error("the file has {len} bytes, more than the {limit} bytes allowed for {what}")]
    TooLarge {
        /// File length in bytes.
        len: u64,
        /// The limit.
        limit: u64,
        /// What the file was read as.
        what: &'static str,
    },
}

/// The first bytes of a file (up to [`SNIFF_LEN`]), its kind and its length, reading nothing
/// else.
pub fn sniff_file(path: &Path) -> io::Result<(FileKind, [u8; SNIFF_LEN], usize, u64)> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut head = [0u8; SNIFF_LEN];
    let mut got = 0;
    let mut reader = file.take(SNIFF_LEN as u64);
    while got < SNIFF_LEN {
        let n = reader.read(&mut head[got..])?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok((FileKind::detect(&head[..got]), head, got, len))
}

/// Reads a whole file whose length (measured before allocating) is at most `limit` bytes.
/// `what` names the kind of file for the error message.
pub fn read_limited(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>, ReadError> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len > limit {
        return Err(ReadError::TooLarge { len, limit, what });
    }
    // ok: `len <= limit`, and callers pass limits far below usize::MAX.
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(len).read_to_end(&mut bytes)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_magics_and_text() {
        assert_eq!(FileKind::detect(b"CiTr\x01\0\0\0"), FileKind::CiTrace);
        assert_eq!(FileKind::detect(b"DVLB\x01\0\0\0"), FileKind::ShaderBinary);
        assert_eq!(FileKind::detect(b"DVOJ"), FileKind::ShaderObject);
        assert_eq!(FileKind::detect(b".proc main\n"), FileKind::Text);
        assert_eq!(FileKind::detect(b"\xEF\xBB\xBF; x"), FileKind::Text);
        assert_eq!(
            FileKind::detect(&[0x78, 0x56, 0x34, 0x12, 0x10, 0, 0x0F, 0]),
            FileKind::Unknown
        );
        assert_eq!(FileKind::detect(b""), FileKind::Unknown);
        assert!(FileKind::CiTrace.suggested_command().is_some());
        assert!(FileKind::Unknown.suggested_command().is_none());
    }

    #[test]
    fn reads_within_the_limit_only() {
        let dir = std::env::temp_dir().join(format!("pica-cmd-filekind-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        std::fs::write(&path, b"DVLB0123456789abcdefXYZ").unwrap();
        let (kind, head, got, len) = sniff_file(&path).unwrap();
        assert_eq!((kind, got, len), (FileKind::ShaderBinary, SNIFF_LEN, 23));
        assert_eq!(&head[..4], b"DVLB");
        assert_eq!(read_limited(&path, 23, "x").unwrap().len(), 23);
        assert!(matches!(
            read_limited(&path, 22, "a test file"),
            Err(ReadError::TooLarge {
                len: 23,
                limit: 22,
                ..
            })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
