//! File > Open without a native dialog: a path field with completion from the file system
//! (relative paths start in the current directory). Used when no desktop portal or zenity can
//! show a native dialog, and always available as File > Open path….
//!
//! Stage: viewer input. Input: the typed text and directory listings. Output: a path to open.
//! Listings are bounded ([`MAX_ENTRIES`]) so a huge directory cannot stall the UI.

use std::path::{Path, PathBuf};

/// Most directory entries listed as completions.
pub const MAX_ENTRIES: usize = 500;

/// One completion candidate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The text the field becomes when this candidate is chosen (directories end in `/`).
    pub text: String,
    /// Shown name (file name; directories end in `/`).
    pub name: String,
    /// True for a directory.
    pub dir: bool,
}

/// Splits typed text into the directory to list and the file-name prefix to match.
fn split(text: &str) -> (PathBuf, String, String) {
    match text.rfind(['/', std::path::MAIN_SEPARATOR]) {
        Some(i) => {
            let (dir, rest) = text.split_at(i + 1);
            let list = if dir.is_empty() {
                PathBuf::from(".")
            } else {
                PathBuf::from(dir)
            };
            (list, dir.to_string(), rest.to_string())
        }
        None => (PathBuf::from("."), String::new(), text.to_string()),
    }
}

/// The entries of the directory named by `text` whose names start with its last component,
/// directories first, then by name; hidden entries only when the prefix starts with `.`.
/// Relative paths are taken from `cwd`.
pub fn complete(text: &str, cwd: &Path) -> Vec<Candidate> {
    let (dir, typed_dir, prefix) = split(text);
    let dir = if dir.is_absolute() {
        dir
    } else {
        cwd.join(dir)
    };
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<Candidate> = rd
        .filter_map(Result::ok)
        .take(MAX_ENTRIES * 8)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with(&prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let is_dir = e.path().is_dir();
            let shown = if is_dir { format!("{name}/") } else { name };
            Some(Candidate {
                text: format!("{typed_dir}{shown}"),
                name: shown,
                dir: is_dir,
            })
        })
        .collect();
    out.sort_by(|a, b| b.dir.cmp(&a.dir).then_with(|| a.name.cmp(&b.name)));
    out.truncate(MAX_ENTRIES);
    out
}

/// The longest text every candidate starts with (what Tab completes to); `None` if there are
/// no candidates.
pub fn common_prefix(cands: &[Candidate]) -> Option<String> {
    let first = cands.first()?;
    let mut len = first.text.len();
    for c in cands.iter().skip(1) {
        let same = first
            .text
            .bytes()
            .zip(c.text.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        len = len.min(same);
    }
    while !first.text.is_char_boundary(len) {
        len -= 1;
    }
    first.text.get(..len).map(str::to_string)
}

/// `text` as a path, relative to `cwd` unless absolute.
pub fn resolve(text: &str, cwd: &Path) -> PathBuf {
    let p = PathBuf::from(text.trim());
    if p.is_absolute() { p } else { cwd.join(p) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_files_and_directories_with_common_prefix() {
        let d = std::env::temp_dir().join(format!("picaview-complete-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("traces")).expect("dir");
        std::fs::write(d.join("trace-a.ctf"), b"x").expect("file");
        std::fs::write(d.join("trace-b.ctf"), b"x").expect("file");
        std::fs::write(d.join(".hidden"), b"x").expect("file");
        let c = complete("tra", &d);
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["traces/", "trace-a.ctf", "trace-b.ctf"]);
        assert_eq!(common_prefix(&c).as_deref(), Some("trace"));
        let c = complete("trace-", &d);
        assert_eq!(common_prefix(&c).as_deref(), Some("trace-"));
        let c = complete("traces/", &d);
        assert!(c.is_empty());
        let c = complete("", &d);
        assert_eq!(c.len(), 3, "hidden files are left out: {c:?}");
        assert_eq!(complete(".h", &d).len(), 1);
        assert_eq!(resolve("trace-a.ctf", &d), d.join("trace-a.ctf"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
