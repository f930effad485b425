//! Keeps `docs/hardware-behaviour.md` (the table of the 76 hardware-measured facts of
//! testdata/hw-facts.md, issue 20) in step with the tests that exist:
//!
//! - the table lists every fact ID exactly once;
//! - every fact graded A or B names at least one test, or its status starts with
//!   "cannot be modelled";
//! - every named test exists in the named file, is called `hw_<id>_...`, and is `#[ignore]`d
//!   only if its status starts with "fails";
//! - every `hw_<id>_...` test function in the scanned test directories names a fact of the table.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The fact IDs of testdata/hw-facts.md: prefix and count per section.
const SECTIONS: [(&str, u32); 10] = [
    ("VL", 7),
    ("SH", 20),
    ("CR", 5),
    ("TX", 9),
    ("TE", 5),
    ("LI", 9),
    ("PT", 3),
    ("FG", 4),
    ("FO", 8),
    ("FB", 6),
];

/// Test directories scanned for `hw_<id>_` functions, relative to the workspace root.
const TEST_DIRS: [&str; 3] = ["shader-unit/tests", "gpu-core/tests", "tests/tests"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The file abbreviations of the table's "File" column.
fn file_of(abbrev: &str) -> Option<&'static str> {
    match abbrev {
        "SU" => Some("shader-unit/tests/hw_facts.rs"),
        "GC" => Some("gpu-core/tests/hw_facts.rs"),
        "D3" => Some("tests/tests/hw_facts_dot3.rs"),
        _ => None,
    }
}

struct Row {
    id: String,
    grade: String,
    tests: Vec<String>,
    file: String,
    status: String,
}

fn rows(doc: &str) -> Vec<Row> {
    let start = doc.find("## Facts").expect("a '## Facts' section");
    let section = &doc[start..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    let mut out = Vec::new();
    for line in section[..end].lines() {
        let line = line.trim();
        if !line.starts_with('|') || line.starts_with("| ID") || line.starts_with("|---") {
            continue;
        }
        // `\|` inside a cell is an escaped pipe.
        let cells: Vec<String> = line
            .replace("\\|", "¦")
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        assert_eq!(cells.len(), 6, "row {line:?} must have 6 cells");
        let tests = cells[3]
            .split(',')
            .map(|t| t.trim().trim_matches('`').to_string())
            .filter(|t| !t.is_empty() && t != "—")
            .collect();
        out.push(Row {
            id: cells[0].clone(),
            grade: cells[1].clone(),
            tests,
            file: cells[4].clone(),
            status: cells[5].clone(),
        });
    }
    out
}

/// `VL-1` → `vl1`.
fn id_key(id: &str) -> String {
    id.replace('-', "").to_lowercase()
}

/// The fact key a test name claims (`hw_te3_foo` → `te3`), if it has the `hw_<id>_` form.
fn claimed_key(name: &str) -> Option<String> {
    let rest = name.strip_prefix("hw_")?;
    let prefix: String = rest.chars().take(2).collect();
    if !SECTIONS.iter().any(|(p, _)| p.to_lowercase() == prefix) {
        return None;
    }
    let digits: String = rest[2..].chars().take_while(char::is_ascii_digit).collect();
    if digits.is_empty() || !rest[2 + digits.len()..].starts_with('_') {
        return None;
    }
    Some(format!("{prefix}{digits}"))
}

/// Test functions in `src`: name → whether an `#[ignore` attribute precedes it.
fn test_fns(src: &str) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    let lines: Vec<&str> = src.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix("fn ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        // Attributes directly above the function.
        let mut is_test = false;
        let mut ignored = false;
        for prev in lines[..i].iter().rev() {
            let p = prev.trim();
            if p.starts_with("#[test]") {
                is_test = true;
            } else if p.starts_with("#[ignore") {
                ignored = true;
            } else if p.starts_with("#[") || p.starts_with("//") || p.ends_with(")]") {
                continue;
            } else {
                break;
            }
        }
        if is_test {
            out.insert(name, ignored);
        }
    }
    out
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn hardware_behaviour_table_matches_the_tests() {
    let root = root();
    let doc = std::fs::read_to_string(root.join("docs/hardware-behaviour.md"))
        .expect("docs/hardware-behaviour.md exists");
    let rows = rows(&doc);

    // Every fact exactly once, in the fact sheet's order.
    let want: Vec<String> = SECTIONS
        .iter()
        .flat_map(|(p, n)| (1..=*n).map(move |k| format!("{p}-{k}")))
        .collect();
    let got: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    assert_eq!(got, want, "the table lists the 76 facts in order");

    let mut problems = Vec::new();
    let mut sources: BTreeMap<&str, BTreeMap<String, bool>> = BTreeMap::new();
    for abbrev in ["SU", "GC", "D3"] {
        let path = file_of(abbrev).expect("known file");
        let src =
            std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        sources.insert(abbrev, test_fns(&src));
    }

    for r in &rows {
        let needs_test = r.grade.contains('A') || r.grade.contains('B');
        if r.tests.is_empty() {
            if needs_test && !r.status.starts_with("cannot be modelled") {
                problems.push(format!(
                    "{} (grade {}) has no test and no 'cannot be modelled' reason",
                    r.id, r.grade
                ));
            }
            continue;
        }
        let Some(fns) = sources.get(r.file.as_str()) else {
            problems.push(format!("{}: unknown file {:?}", r.id, r.file));
            continue;
        };
        let key = id_key(&r.id);
        let mut any_ignored = false;
        for t in &r.tests {
            if claimed_key(t).as_deref() != Some(key.as_str()) {
                problems.push(format!("{}: test {t} is not named hw_{key}_...", r.id));
            }
            match fns.get(t) {
                None => problems.push(format!("{}: no test fn {t} in {}", r.id, r.file)),
                Some(&ignored) => any_ignored |= ignored,
            }
        }
        if any_ignored != r.status.starts_with("fails") {
            problems.push(format!(
                "{}: status {:?} but a test is {}ignored",
                r.id,
                r.status,
                if any_ignored { "" } else { "not " }
            ));
        }
    }

    // Every hw_<id>_ test anywhere in the test directories names a known fact.
    let known: BTreeSet<String> = want.iter().map(|id| id_key(id)).collect();
    let mut files = Vec::new();
    for d in TEST_DIRS {
        rs_files(&root.join(d), &mut files);
    }
    let mut seen = 0;
    for f in &files {
        let src = std::fs::read_to_string(f).expect("readable test source");
        for name in test_fns(&src).keys() {
            if let Some(k) = claimed_key(name) {
                seen += 1;
                if !known.contains(&k) {
                    problems.push(format!(
                        "{}: {name} names no fact of the table",
                        f.display()
                    ));
                }
            }
        }
    }
    assert!(seen >= 50, "only {seen} hw_<id>_ tests found");
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn test_name_parsing() {
    assert_eq!(claimed_key("hw_te3_combiner").as_deref(), Some("te3"));
    assert_eq!(claimed_key("hw_sh16_gs").as_deref(), Some("sh16"));
    assert_eq!(claimed_key("hw_expectations_fp_tests"), None);
    assert_eq!(claimed_key("hw_zz1_x"), None);
    assert_eq!(claimed_key("hw_te_x"), None);
    let src =
        "#[test]\n#[ignore = \"x\"]\nfn hw_te1_a() {}\n#[test]\nfn hw_te2_b() {}\nfn helper() {}\n";
    let fns = test_fns(src);
    assert_eq!(fns.get("hw_te1_a"), Some(&true));
    assert_eq!(fns.get("hw_te2_b"), Some(&false));
    assert!(!fns.contains_key("helper"));
}
