//! Module-cycle check for a library crate's source tree (used by `.ci/check-cycles` on
//! `gpu-core/src`): fails when the modules import each other in a loop.
//!
//! Rule. Every path in non-test code that names a module of the crate (`crate::a::b::Item`,
//! `super::x`, `self::x`, `child::x`, including `use` groups) is an edge from the module that
//! contains the path to the deepest module the path names. An edge between a module and one of
//! its ancestors or descendants is allowed (a folder's `mod.rs` re-exports its children, a child
//! uses its folder's shared types). Any other edge is counted between the two sibling subtrees
//! it connects (the children of the two modules' lowest common ancestor), and at every level
//! the sibling graph must be acyclic. So no loop between files, and none between folders.
//!
//! Test code is left out: items under `#[cfg(test)]` (inline `mod tests { .. }` and `mod tests;`
//! files). Comments, strings and character literals are skipped by a small lexer.
//!
//! Build and run: `rustc --edition 2021 check_cycles.rs -o check-cycles && check-cycles SRC_DIR`
//! (SRC_DIR holds `lib.rs`). Self-test: `rustc --edition 2021 --test check_cycles.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A lexical token with its line number.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    PathSep,
    Punct(char),
}

/// Splits Rust source into identifiers, `::` and single punctuation characters; comments,
/// string/char literals, numbers and lifetimes are dropped.
fn lex(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut line = 1;
    let n = c.len();
    let at = |i: usize| c.get(i).copied().unwrap_or('\0');
    while i < n {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && at(i + 1) == '/' {
            while i < n && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && at(i + 1) == '*' {
            let mut depth = 0;
            while i < n {
                if c[i] == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i += 1;
            while i < n && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                if at(i) == '\n' {
                    line += 1;
                }
                i += 1;
            }
            i += 1;
        } else if (ch == 'r' || ch == 'b') && raw_string_start(&c, i).is_some() {
            let (hashes, body) = raw_string_start(&c, i).unwrap_or((0, i));
            i = body;
            loop {
                if i >= n {
                    break;
                }
                if c[i] == '"' && (0..hashes).all(|k| at(i + 1 + k) == '#') {
                    i += 1 + hashes;
                    break;
                }
                if c[i] == '\n' {
                    line += 1;
                }
                i += 1;
            }
        } else if ch == 'b' && at(i + 1) == '\'' {
            i = skip_char_literal(&c, i + 1);
        } else if ch == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime / label ('a).
            if at(i + 1) == '\\' || at(i + 2) == '\'' {
                i = skip_char_literal(&c, i);
            } else {
                i += 1;
                while i < n && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_ascii_digit() {
            while i < n && (c[i].is_alphanumeric() || c[i] == '_' || c[i] == '.') {
                // Stop at `..` (a range) after a number.
                if c[i] == '.' && at(i + 1) == '.' {
                    break;
                }
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let s = i;
            while i < n && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let mut word: String = c[s..i].iter().collect();
            if let Some(w) = word.strip_prefix("r#") {
                word = w.to_string();
            }
            out.push((Tok::Ident(word), line));
        } else if ch == ':' && at(i + 1) == ':' {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// If a raw (byte) string starts at `i` (`r"`, `r#"`, `br"` ...), the number of `#` and the
/// index just after the opening quote.
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    // Must not be the tail of an identifier such as `for`.
    if i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_') {
        return None;
    }
    j += 1;
    let mut hashes = 0;
    while c.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (c.get(j) == Some(&'"')).then_some((hashes, j + 1))
}

/// Skips a char literal starting at the quote at `i`; returns the index after it.
fn skip_char_literal(c: &[char], i: usize) -> usize {
    let mut j = i + 1;
    if c.get(j) == Some(&'\\') {
        j += 2;
    } else {
        j += 1;
    }
    while j < c.len() && c[j] != '\'' && c[j] != '\n' {
        j += 1;
    }
    j + 1
}

/// A module path from the crate root (`[]` is the root).
type ModPath = Vec<String>;

/// One module of the crate.
struct Module {
    /// Child module names.
    children: BTreeSet<String>,
}

/// One reference from a module to a module path, with where it was written.
struct Reference {
    from: ModPath,
    segments: Vec<String>,
    file: PathBuf,
    line: usize,
}

/// The crate's modules and the references of their non-test code.
struct Crate {
    modules: BTreeMap<ModPath, Module>,
    refs: Vec<Reference>,
    errors: Vec<String>,
}

fn is_ident(t: Option<&(Tok, usize)>, s: &str) -> bool {
    matches!(t, Some((Tok::Ident(w), _)) if w == s)
}

fn is_punct(t: Option<&(Tok, usize)>, p: char) -> bool {
    matches!(t, Some((Tok::Punct(c), _)) if *c == p)
}

/// Index after the `{ .. }` block whose opening brace is at `i`.
fn skip_block(toks: &[(Tok, usize)], i: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < toks.len() {
        match toks[j].0 {
            Tok::Punct('{') => depth += 1,
            Tok::Punct('}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// Index after the item that starts at `i`: up to its `;` or through its first `{ .. }` block.
fn skip_item(toks: &[(Tok, usize)], mut i: usize) -> usize {
    // Further attributes of the same item.
    while is_punct(toks.get(i), '#') {
        i += 1;
        if is_punct(toks.get(i), '[') {
            i = skip_brackets(toks, i);
        }
    }
    while i < toks.len() {
        match toks[i].0 {
            Tok::Punct(';') => return i + 1,
            Tok::Punct('{') => return skip_block(toks, i),
            _ => i += 1,
        }
    }
    i
}

/// Index after the `[ .. ]` group whose opening bracket is at `i`.
fn skip_brackets(toks: &[(Tok, usize)], i: usize) -> usize {
    let mut depth = 0usize;
    let mut j = i;
    while j < toks.len() {
        match toks[j].0 {
            Tok::Punct('[') => depth += 1,
            Tok::Punct(']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            _ => {}
        }
        j += 1;
    }
    j
}

/// True if the attribute whose `[` is at `i` is `#[cfg(test)]`.
fn is_cfg_test(toks: &[(Tok, usize)], i: usize) -> bool {
    is_ident(toks.get(i + 1), "cfg")
        && is_punct(toks.get(i + 2), '(')
        && is_ident(toks.get(i + 3), "test")
        && is_punct(toks.get(i + 4), ')')
        && is_punct(toks.get(i + 5), ']')
}

impl Crate {
    fn load(src_dir: &Path) -> Crate {
        let mut krate = Crate {
            modules: BTreeMap::new(),
            refs: Vec::new(),
            errors: Vec::new(),
        };
        let root = src_dir.join("lib.rs");
        // (module path, file, directory for its children)
        let mut pending = vec![(Vec::new(), root, src_dir.to_path_buf())];
        let mut files = Vec::new();
        while let Some((path, file, child_dir)) = pending.pop() {
            let src = match std::fs::read_to_string(&file) {
                Ok(s) => s,
                Err(e) => {
                    krate
                        .errors
                        .push(format!("cannot read {}: {e}", file.display()));
                    continue;
                }
            };
            let toks = lex(&src);
            let mut decls = Vec::new();
            krate.scan_modules(&toks, &path, &file, &mut decls);
            for (child, is_file) in decls {
                if !is_file {
                    continue;
                }
                let mut p = path.clone();
                p.push(child.clone());
                let flat = child_dir.join(format!("{child}.rs"));
                let nested = child_dir.join(&child).join("mod.rs");
                let (f, dir) = if flat.exists() {
                    (flat, child_dir.join(&child))
                } else if nested.exists() {
                    (nested, child_dir.join(&child))
                } else {
                    krate
                        .errors
                        .push(format!("{}: module {child} has no file", file.display()));
                    continue;
                };
                pending.push((p, f, dir));
            }
            files.push((path, file, toks));
        }
        for (path, file, toks) in &files {
            krate.scan_refs(toks, path, file);
        }
        krate
    }

    /// Registers the module at `path` and its inline modules; collects `mod x;` declarations of
    /// non-test file modules into `decls` as (name, true) and inline ones as (name, false).
    fn scan_modules(
        &mut self,
        toks: &[(Tok, usize)],
        path: &ModPath,
        file: &Path,
        decls: &mut Vec<(String, bool)>,
    ) {
        self.modules.entry(path.clone()).or_insert_with(|| Module {
            children: BTreeSet::new(),
        });
        // Stack of (module path, brace depth at which it closes).
        let mut stack: Vec<(ModPath, usize)> = vec![(path.clone(), 0)];
        let mut depth = 0usize;
        let mut i = 0;
        while i < toks.len() {
            match &toks[i].0 {
                Tok::Punct('#') if is_punct(toks.get(i + 1), '[') && is_cfg_test(toks, i + 1) => {
                    i = skip_item(toks, skip_brackets(toks, i + 1));
                    continue;
                }
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if stack.len() > 1 && stack.last().is_some_and(|(_, d)| *d == depth) {
                        stack.pop();
                    }
                }
                Tok::Ident(w) if w == "mod" => {
                    if let Some((Tok::Ident(name), _)) = toks.get(i + 1) {
                        let current = stack.last().map(|(p, _)| p.clone()).unwrap_or_default();
                        let mut child = current.clone();
                        child.push(name.clone());
                        if let Some(m) = self.modules.get_mut(&current) {
                            m.children.insert(name.clone());
                        }
                        if is_punct(toks.get(i + 2), ';') {
                            if current == *path {
                                decls.push((name.clone(), true));
                            } else {
                                self.errors.push(format!(
                                    "{}: file module {name} inside an inline module is not supported",
                                    file.display()
                                ));
                            }
                            i += 3;
                            continue;
                        }
                        if is_punct(toks.get(i + 2), '{') {
                            self.modules.insert(
                                child.clone(),
                                Module {
                                    children: BTreeSet::new(),
                                },
                            );
                            decls.push((name.clone(), false));
                            depth += 1;
                            stack.push((child, depth - 1));
                            i += 3;
                            continue;
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// Collects the module references of the non-test code in `toks` (the file of `path`).
    fn scan_refs(&mut self, toks: &[(Tok, usize)], path: &ModPath, file: &Path) {
        let mut stack: Vec<(ModPath, usize)> = vec![(path.clone(), 0)];
        let mut depth = 0usize;
        let mut i = 0;
        while i < toks.len() {
            let current = stack.last().map(|(p, _)| p.clone()).unwrap_or_default();
            match &toks[i].0 {
                Tok::Punct('#') if is_punct(toks.get(i + 1), '[') && is_cfg_test(toks, i + 1) => {
                    i = skip_item(toks, skip_brackets(toks, i + 1));
                    continue;
                }
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    depth = depth.saturating_sub(1);
                    if stack.len() > 1 && stack.last().is_some_and(|(_, d)| *d == depth) {
                        stack.pop();
                    }
                }
                Tok::Ident(w) if w == "mod" && is_punct(toks.get(i + 2), '{') => {
                    if let Some((Tok::Ident(name), _)) = toks.get(i + 1) {
                        let mut child = current.clone();
                        child.push(name.clone());
                        depth += 1;
                        stack.push((child, depth - 1));
                        i += 3;
                        continue;
                    }
                }
                Tok::Ident(_) if matches!(toks.get(i + 1), Some((Tok::PathSep, _))) => {
                    // Only at the start of a path.
                    let after_sep = i > 0 && matches!(toks[i - 1].0, Tok::PathSep);
                    if !after_sep {
                        let mut paths = Vec::new();
                        let end = parse_path(toks, i, Vec::new(), &mut paths);
                        for (segments, line) in paths {
                            self.refs.push(Reference {
                                from: current.clone(),
                                segments,
                                file: file.to_path_buf(),
                                line,
                            });
                        }
                        i = end.max(i + 1);
                        continue;
                    }
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The module a reference names, if it names one of this crate's modules.
    fn resolve(&self, r: &Reference) -> Option<ModPath> {
        let mut segs = r.segments.iter();
        let first = segs.next()?;
        let mut base: ModPath = match first.as_str() {
            "crate" => Vec::new(),
            "self" => r.from.clone(),
            "super" => {
                let mut b = r.from.clone();
                b.pop()?;
                b
            }
            name => {
                let m = self.modules.get(&r.from)?;
                if !m.children.contains(name) {
                    return None;
                }
                let mut b = r.from.clone();
                b.push(name.to_string());
                b
            }
        };
        for s in segs {
            if s == "super" {
                base.pop()?;
                continue;
            }
            let mut next = base.clone();
            next.push(s.clone());
            if self.modules.contains_key(&next) {
                base = next;
            } else {
                break;
            }
        }
        Some(base)
    }

    /// The cycles between sibling subtrees, described for a human; empty when there are none.
    fn cycles(&self) -> Vec<String> {
        // For each parent module: edges between its children, each with a witness reference.
        let mut levels: BTreeMap<ModPath, BTreeMap<(String, String), String>> = BTreeMap::new();
        for r in &self.refs {
            let Some(to) = self.resolve(r) else { continue };
            let from = &r.from;
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common == from.len() || common == to.len() {
                continue; // same module, ancestor or descendant
            }
            let parent: ModPath = from[..common].to_vec();
            let witness = format!(
                "{}:{} ({}) uses {}",
                r.file.display(),
                r.line,
                show(from),
                r.segments.join("::")
            );
            levels
                .entry(parent)
                .or_default()
                .entry((from[common].clone(), to[common].clone()))
                .or_insert(witness);
        }
        let mut out = Vec::new();
        for (parent, edges) in &levels {
            for (members, cycle) in find_cycles(edges.keys()) {
                let mut msg = format!(
                    "module cycle in {}: {} (all of {{{}}} reach each other)",
                    show(parent),
                    cycle.join(" -> "),
                    members.join(", ")
                );
                for w in cycle.windows(2) {
                    if let Some(witness) = edges.get(&(w[0].clone(), w[1].clone())) {
                        let _ = write!(msg, "\n    {witness}");
                    }
                }
                out.push(msg);
            }
        }
        out
    }
}

fn show(p: &ModPath) -> String {
    if p.is_empty() {
        "crate".to_string()
    } else {
        format!("crate::{}", p.join("::"))
    }
}

/// Parses the path (or `use` tree) starting at identifier `i`, with `prefix` already parsed;
/// pushes every complete path with its line. Returns the index after it.
fn parse_path(
    toks: &[(Tok, usize)],
    mut i: usize,
    mut prefix: Vec<String>,
    out: &mut Vec<(Vec<String>, usize)>,
) -> usize {
    let line = toks.get(i).map(|t| t.1).unwrap_or(0);
    loop {
        match toks.get(i) {
            Some((Tok::Ident(w), _)) => {
                prefix.push(w.clone());
                i += 1;
            }
            Some((Tok::Punct('*'), _)) => {
                i += 1;
                break;
            }
            Some((Tok::Punct('{'), _)) => {
                // A use group: each comma-separated subtree under `prefix`.
                i += 1;
                loop {
                    match toks.get(i) {
                        Some((Tok::Punct('}'), _)) | None => {
                            i += 1;
                            return i;
                        }
                        Some((Tok::Punct(','), _)) => i += 1,
                        Some((Tok::Ident(w), _)) if w == "self" => {
                            out.push((prefix.clone(), line));
                            i += 1;
                        }
                        Some((Tok::Ident(_), _))
                        | Some((Tok::Punct('*'), _))
                        | Some((Tok::Punct('{'), _)) => {
                            i = parse_path(toks, i, prefix.clone(), out);
                        }
                        Some(_) => i += 1, // `as name`, etc.
                    }
                }
            }
            _ => break,
        }
        if matches!(toks.get(i), Some((Tok::PathSep, _))) {
            i += 1;
        } else {
            break;
        }
    }
    // `use a::b as c`: skip the rename.
    if is_ident(toks.get(i), "as") {
        i += 2;
    }
    out.push((prefix, line));
    i
}

/// One cycle per strongly connected component of more than one node: the component's members,
/// and a shortest path around it from its first member (repeated at the end).
fn find_cycles<'a>(
    edges: impl Iterator<Item = &'a (String, String)>,
) -> Vec<(Vec<String>, Vec<String>)> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges {
        adj.entry(a).or_default().push(b);
        adj.entry(b).or_default();
    }
    let nodes: Vec<&str> = adj.keys().copied().collect();
    // Reachability by DFS (the graphs are tiny).
    let reach = |from: &str| -> BTreeSet<&str> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for &m in adj.get(n).map(|v| v.as_slice()).unwrap_or(&[]) {
                if seen.insert(m) {
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reach_of: BTreeMap<&str, BTreeSet<&str>> = nodes.iter().map(|&n| (n, reach(n))).collect();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut out = Vec::new();
    for &n in &nodes {
        if done.contains(n) || !reach_of[n].contains(n) {
            continue;
        }
        let scc: BTreeSet<&str> = nodes
            .iter()
            .copied()
            .filter(|&m| reach_of[n].contains(m) && reach_of[m].contains(n))
            .collect();
        done.extend(scc.iter().copied());
        // A shortest path n -> ... -> n inside the component (BFS).
        let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([n]);
        let mut closing = None;
        while let Some(x) = queue.pop_front() {
            for &y in &adj[x] {
                if !scc.contains(y) {
                    continue;
                }
                if y == n {
                    closing = Some(x);
                    queue.clear();
                    break;
                }
                if !prev.contains_key(y) {
                    prev.insert(y, x);
                    queue.push_back(y);
                }
            }
        }
        let mut path = vec![n.to_string()];
        if let Some(mut x) = closing {
            let mut back = vec![x];
            while x != n {
                x = prev[x];
                back.push(x);
            }
            back.pop();
            path.extend(back.iter().rev().map(|s| s.to_string()));
        }
        path.push(n.to_string());
        out.push((scc.iter().map(|s| s.to_string()).collect(), path));
    }
    out
}

/// Runs the check on `src_dir`; the report lines, or `Err` with the problems.
fn check(src_dir: &Path) -> Result<String, String> {
    let krate = Crate::load(src_dir);
    let mut problems = krate.errors.clone();
    problems.extend(krate.cycles());
    if problems.is_empty() {
        let edges = krate
            .refs
            .iter()
            .filter(|r| krate.resolve(r).is_some())
            .count();
        Ok(format!(
            "module cycles: none ({} modules, {edges} internal references in {})",
            krate.modules.len(),
            src_dir.display()
        ))
    } else {
        Err(problems.join("\n"))
    }
}

fn main() {
    let Some(dir) = std::env::args().nth(1) else {
        eprintln!("usage: check-cycles SRC_DIR");
        std::process::exit(2);
    };
    match check(Path::new(&dir)) {
        Ok(report) => println!("{report}"),
        Err(problems) => {
            eprintln!("{problems}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `files` (relative path, contents) into a fresh temporary directory.
    fn tree(name: &str, files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("check-cycles-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (path, text) in files {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        dir
    }

    #[test]
    fn acyclic_tree_passes() {
        let dir = tree(
            "ok",
            &[
                ("lib.rs", "pub mod a;\npub mod b;\npub use a::X;\n"),
                ("a.rs", "use crate::b::Y;\npub struct X(Y);\n"),
                ("b.rs", "pub struct Y;\n"),
            ],
        );
        assert!(check(&dir).is_ok(), "{:?}", check(&dir));
    }

    #[test]
    fn planted_file_cycle_fails() {
        let dir = tree(
            "files",
            &[
                ("lib.rs", "pub mod a;\npub mod b;\n"),
                ("a.rs", "use crate::b::Y;\npub struct X;\n"),
                (
                    "b.rs",
                    "pub struct Y;\npub fn f() -> crate::a::X { crate::a::X }\n",
                ),
            ],
        );
        let err = check(&dir).unwrap_err();
        assert!(err.contains("module cycle in crate: a -> b -> a"), "{err}");
        assert!(err.contains("a.rs:1"), "{err}");
    }

    #[test]
    fn planted_folder_cycle_through_a_use_group_fails() {
        let dir = tree(
            "folders",
            &[
                ("lib.rs", "pub mod pixel;\npub mod command;\n"),
                ("pixel/mod.rs", "pub mod stages;\n"),
                ("pixel/stages.rs", "use crate::{command::gpu::Gpu};\n"),
                ("command/mod.rs", "pub mod gpu;\n"),
                (
                    "command/gpu.rs",
                    "use super::super::pixel::stages as s;\npub struct Gpu;\n",
                ),
            ],
        );
        let err = check(&dir).unwrap_err();
        assert!(err.contains("command -> pixel -> command"), "{err}");
    }

    #[test]
    fn three_module_cycle_via_child_paths_fails() {
        let dir = tree(
            "three",
            &[
                ("lib.rs", "mod a;\nmod b;\nmod c;\n"),
                ("a.rs", "fn f() { crate::b::g() }\n"),
                ("b.rs", "pub fn g() { super::c::h() }\n"),
                ("c.rs", "pub fn h() { let _ = self::inner::K; }\nmod inner { pub const K: u8 = crate::a::Z; }\n"),
            ],
        );
        let err = check(&dir).unwrap_err();
        assert!(err.contains("a -> b -> c -> a"), "{err}");
    }

    #[test]
    fn tests_comments_strings_and_ancestors_are_not_edges() {
        let dir = tree(
            "ignored",
            &[
                ("lib.rs", "pub mod a;\npub mod b;\n"),
                (
                    "a.rs",
                    "use crate::b::Y;\npub mod child;\npub use child::Z;\n\
                     // crate::b is fine, so is crate::a\n",
                ),
                (
                    "a/child.rs",
                    "use super::super::b::Y;\nuse super::Z as _;\npub struct Z;\n",
                ),
                (
                    "b.rs",
                    "pub struct Y;\n/* crate::a::X */\nconst S: &str = \"crate::a::X\";\n\
                     const R: &str = r#\"crate::a::X\"#;\nconst C: char = '{';\n\
                     fn l<'a>(x: &'a str) -> &'a str { x }\n\
                     #[cfg(test)]\nmod tests { use crate::a::child::Z; }\n\
                     #[cfg(test)]\nmod more;\n",
                ),
            ],
        );
        assert!(check(&dir).is_ok(), "{:?}", check(&dir));
    }

    #[test]
    fn missing_module_file_is_an_error() {
        let dir = tree("missing", &[("lib.rs", "pub mod gone;\n")]);
        assert!(check(&dir).unwrap_err().contains("module gone has no file"));
    }
}
