//! Differential test against a real picasso 2.7.1 binary, on randomly generated programs that
//! exercise operand-descriptor sharing, MAD descriptor swaps, inverted forms, uniform and
//! constant allocation across files, blocks with padding NOPs, labels, procedures, `.nodvle`,
//! geometry-shader modes and every directive.
//!
//! picasso is not part of this project: the test runs only when the environment variable
//! `PICASSO` names a picasso 2.7.1 executable (build it from devkitPro/picasso tag v2.7.1, e.g.
//! `g++ -O1 -DPACKAGE_STRING='"picasso 2.7.1"' -o picasso source/*.cpp`); otherwise it prints
//! that it was skipped. `PICASSO_CASES` sets the number of programs (default 300).
//!
//! For every program: if picasso accepts it, we must produce the identical file; if picasso
//! rejects it, we must reject it too (the generator avoids the few constructs where we are
//! deliberately stricter or more permissive than picasso, listed in `src/asm/README.md`).

use std::path::PathBuf;
use std::process::Command;

use shader_unit::asm::assemble;

/// Small deterministic PRNG (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const FLOATS: &[&str] = &[
    "0.0", "1.0", "-1.0", "0.5", "3.14159", "1e3", "-2.5e-2", ".25", "7", "0.1", "100000", "1e-30",
    "65504.0",
];
const SWIZZLES: &[&str] = &[
    "", "", "", ".x", ".y", ".z", ".w", ".xy", ".xyz", ".wzyx", ".xxxx", ".yyyy", ".zw", ".xzw",
    ".rgb", ".st", ".q", ".yx",
];
const MASKS: &[&str] = &[
    "", "", ".x", ".y", ".z", ".w", ".xy", ".xyz", ".xw", ".yzw", ".zw",
];

struct FileGen {
    is_gsh: bool,
    /// Float-uniform aliases usable as wide sources: (name, size).
    fnames: Vec<(String, usize)>,
    inames: Vec<String>,
    bnames: Vec<String>,
    onames: Vec<String>,
    labels: Vec<String>,
    label_count: usize,
    lines: Vec<String>,
}

fn wide_src(rng: &mut Rng, g: &FileGen, v: usize, idx_ok: bool) -> String {
    let neg = if rng.chance(15) { "-" } else { "" };
    let sw = rng.pick(SWIZZLES);
    let base = match rng.below(6) {
        0 => format!("v{v}"),
        1 | 2 => format!("r{}", rng.below(16)),
        3 if !g.fnames.is_empty() => {
            let (n, size) = rng.pick(&g.fnames).clone();
            if idx_ok && rng.chance(30) {
                let idx = rng.pick(&["a0.x", "a0.y", "aL"]);
                if rng.chance(50) {
                    format!("{n}[{idx}]")
                } else {
                    format!("{n}[{idx}+{}]", rng.below(size))
                }
            } else if size > 1 || rng.chance(30) {
                format!("{n}[{}]", rng.below(size))
            } else {
                n
            }
        }
        4 if idx_ok && rng.chance(30) => format!("c{}[a0.x+{}]", rng.below(40), rng.below(4)),
        _ => format!("c{}", rng.below(if g.is_gsh { 96 } else { 20 })),
    };
    format!("{neg}{base}{sw}")
}

fn narrow_src(rng: &mut Rng, v: usize) -> String {
    let neg = if rng.chance(15) { "-" } else { "" };
    let sw = rng.pick(SWIZZLES);
    if rng.chance(30) {
        format!("{neg}v{v}{sw}")
    } else {
        format!("{neg}r{}{sw}", rng.below(16))
    }
}

fn dest(rng: &mut Rng, g: &FileGen) -> String {
    let m = rng.pick(MASKS);
    if !g.onames.is_empty() && rng.chance(30) {
        format!("{}{m}", rng.pick(&g.onames))
    } else if rng.chance(15) {
        format!("o{}{m}", rng.below(if g.is_gsh { 7 } else { 16 }))
    } else {
        format!("r{}{m}", rng.below(16))
    }
}

fn cond(rng: &mut Rng) -> String {
    let f = |rng: &mut Rng, x: &str| format!("{}cmp.{x}", if rng.chance(30) { "!" } else { "" });
    match rng.below(4) {
        0 => f(rng, "x"),
        1 => f(rng, "y"),
        2 => format!("{} && {}", f(rng, "x"), f(rng, "y")),
        _ => format!("{} || {}", f(rng, "y"), f(rng, "x")),
    }
}

fn instruction(rng: &mut Rng, g: &mut FileGen, procs: &[String], depth: usize, in_loop: bool) {
    let v = rng.below(15);
    let line = match rng.below(24) {
        0..=5 => {
            let op = rng.pick(&[
                "add", "dp3", "dp4", "dph", "dst", "mul", "sge", "slt", "max", "min", "dphi",
                "sgei",
            ]);
            let inverted =
                matches!(*op, "dph" | "dst" | "sge" | "slt" | "dphi" | "sgei") && rng.chance(40);
            if inverted {
                format!(
                    "{op} {}, {}, {}",
                    dest(rng, g),
                    narrow_src(rng, v),
                    wide_src(rng, g, v, true)
                )
            } else {
                format!(
                    "{op} {}, {}, {}",
                    dest(rng, g),
                    wide_src(rng, g, v, true),
                    narrow_src(rng, v)
                )
            }
        }
        6..=9 => {
            let op = rng.pick(&[
                "ex2", "lg2", "litp", "flr", "rcp", "rsq", "mov", "mov", "mov",
            ]);
            format!("{op} {}, {}", dest(rng, g), wide_src(rng, g, v, true))
        }
        10 | 11 => {
            if rng.chance(50) {
                format!(
                    "mad {}, {}, {}, {}",
                    dest(rng, g),
                    narrow_src(rng, v),
                    wide_src(rng, g, v, true),
                    narrow_src(rng, v)
                )
            } else {
                format!(
                    "mad {}, {}, {}, {}",
                    dest(rng, g),
                    narrow_src(rng, v),
                    narrow_src(rng, v),
                    wide_src(rng, g, v, true)
                )
            }
        }
        12 => format!(
            "mova {}, {}",
            rng.pick(&["a0.x", "a0.y", "a0.xy", "a0", "a1"]),
            wide_src(rng, g, v, false)
        ),
        13 => {
            let ops = ["eq", "ne", "lt", "le", "gt", "ge"];
            format!(
                "cmp {}, {}, {}, {}",
                wide_src(rng, g, v, true),
                rng.pick(&ops),
                rng.pick(&ops),
                narrow_src(rng, v)
            )
        }
        14 if !procs.is_empty() => {
            let p = rng.pick(procs).clone();
            match rng.below(3) {
                0 => format!("call {p}"),
                1 => format!("callc {}, {p}", cond(rng)),
                _ if !g.bnames.is_empty() => format!("callu {}, {p}", rng.pick(&g.bnames)),
                _ => format!("callu b{}, {p}", rng.below(15)),
            }
        }
        15 => {
            // A jump to a label defined now or later in this file.
            let l = if !g.labels.is_empty() && rng.chance(50) {
                rng.pick(&g.labels).clone()
            } else {
                g.label_count += 1;
                let l = format!("lbl{}", g.label_count);
                g.labels.push(l.clone());
                l
            };
            if rng.chance(50) {
                format!("jmpc {}, {l}", cond(rng))
            } else {
                format!(
                    "jmpu {}b{}, {l}",
                    if rng.chance(50) { "!" } else { "" },
                    rng.below(15)
                )
            }
        }
        16 if in_loop => {
            if rng.chance(50) {
                format!("breakc {}", cond(rng))
            } else {
                "break".to_string()
            }
        }
        17 if g.is_gsh => format!(
            "setemit {}{}",
            rng.below(3),
            rng.pick(&["", ", prim", ", prim inv", ", inv", ", primitive invert"])
        ),
        18 if g.is_gsh => "emit".to_string(),
        19 => "nop".to_string(),
        20 | 21 if depth < 4 => {
            block(rng, g, procs, depth + 1, in_loop);
            return;
        }
        _ => format!("mov {}, {}", dest(rng, g), wide_src(rng, g, v, true)),
    };
    g.lines.push(format!("\t{line}"));
}

fn block(rng: &mut Rng, g: &mut FileGen, procs: &[String], depth: usize, in_loop: bool) {
    let kind = rng.below(3);
    let mut is_loop = in_loop;
    match kind {
        0 => {
            let reg = if !g.inames.is_empty() && rng.chance(50) {
                rng.pick(&g.inames).clone()
            } else {
                format!("i{}", rng.below(4))
            };
            g.lines.push(format!("\tfor {reg}"));
            is_loop = true;
        }
        1 => g.lines.push(format!("\tifc {}", cond(rng))),
        _ => {
            let b = if !g.bnames.is_empty() && rng.chance(50) {
                rng.pick(&g.bnames).clone()
            } else {
                format!("b{}", rng.below(15))
            };
            g.lines.push(format!("\tifu {b}"));
        }
    }
    let n = rng.below(4);
    for _ in 0..n {
        instruction(rng, g, procs, depth, is_loop);
    }
    if kind != 0 && rng.chance(40) {
        g.lines.push("\t.else".to_string());
        for _ in 0..rng.below(3) {
            instruction(rng, g, procs, depth, is_loop);
        }
    }
    g.lines.push("\t.end".to_string());
}

/// One source file. `globals` are shared vertex-shader uniform names (reused across files).
fn gen_file(
    rng: &mut Rng,
    file_no: usize,
    shared_procs: &[String],
    own_procs: &mut Vec<String>,
    is_gsh: bool,
    nodvle: bool,
) -> String {
    let mut g = FileGen {
        is_gsh,
        fnames: Vec::new(),
        inames: Vec::new(),
        bnames: Vec::new(),
        onames: Vec::new(),
        labels: Vec::new(),
        label_count: 0,
        lines: vec![format!("; generated file {file_no}")],
    };
    if is_gsh {
        match rng.below(4) {
            0 => g.lines.push(".gsh point c0".to_string()),
            1 => g.lines.push(format!(
                ".gsh variable c{} {}",
                40 + rng.below(20),
                rng.below(4)
            )),
            2 => g.lines.push(format!(
                ".gsh fixed c{} c0 {}",
                40 + rng.below(20),
                1 + rng.below(4)
            )),
            _ => g.lines.push(".gsh".to_string()),
        }
    }
    if nodvle {
        g.lines.push(".nodvle".to_string());
    }
    // Uniforms: names shared between files on purpose (u0..u3), plus private ones.
    for k in 0..rng.below(4) {
        let id = k + rng.below(2) * 10;
        let name = format!("u{id}");
        // Keep sizes consistent across files for shared names.
        let size = if k < 2 { 4 } else { 1 + id % 3 };
        g.lines.push(format!(
            ".fvec {name}{}",
            if size > 1 {
                format!("[{size}]")
            } else {
                String::new()
            }
        ));
        g.fnames.push((name, size));
    }
    if rng.chance(40) {
        g.lines
            .push(format!(".fvec _priv{file_no}, pub{file_no}$x[2]"));
        g.fnames.push((format!("_priv{file_no}"), 1));
    }
    if rng.chance(50) {
        g.lines.push(format!(".ivec iv{file_no}"));
        g.inames.push(format!("iv{file_no}"));
    }
    if rng.chance(50) {
        g.lines.push(format!(".bool bo{file_no}, bb{file_no}[2]"));
        g.bnames.push(format!("bo{file_no}"));
    }
    for k in 0..rng.below(5) {
        let vals: Vec<&str> = (0..4).map(|_| *rng.pick(FLOATS)).collect();
        g.lines.push(format!(
            ".constf k{k}({}, {}, {}, {})",
            vals[0], vals[1], vals[2], vals[3]
        ));
        g.fnames.push((format!("k{k}"), 1));
    }
    if rng.chance(50) {
        g.lines.push(format!(
            ".consti ki({}, {}, {}, 0)",
            rng.below(256),
            rng.below(256),
            rng.below(256)
        ));
        g.inames.push("ki".to_string());
    }
    if rng.chance(40) {
        let sized = rng.chance(50);
        let n = 1 + rng.below(3);
        g.lines.push(if sized {
            format!(".constfa arr[{}]", n + rng.below(2))
        } else {
            ".constfa arr[]".to_string()
        });
        for _ in 0..n {
            let vals: Vec<&str> = (0..4).map(|_| *rng.pick(FLOATS)).collect();
            g.lines.push(format!(
                ".constfa ({}, {}, {}, {})",
                vals[0], vals[1], vals[2], vals[3]
            ));
        }
        g.lines.push(".end".to_string());
        g.fnames.push(("arr".to_string(), n));
    }
    if rng.chance(30) {
        g.lines
            .push(format!(".setf c{}(1.0, 2.0, 3.0, 4.0)", rng.below(96)));
    }
    if rng.chance(30) {
        g.lines.push(format!(".seti i{}(3, 0, 1, 0)", rng.below(4)));
    }
    if rng.chance(30) {
        g.lines.push(format!(
            ".setb b{} {}",
            rng.below(15),
            rng.pick(&["true", "false", "on", "0"])
        ));
    }
    // Aliases with swizzles, including aliases of aliases.
    if rng.chance(60) {
        g.lines.push(format!(
            ".alias tmp{file_no} r{}{}",
            rng.below(16),
            rng.pick(SWIZZLES)
        ));
        if let Some((n, _)) = g.fnames.first().cloned() {
            g.lines.push(format!(
                ".alias al{file_no} {n}{}",
                rng.pick(&[".xxxx", ".wzyx", ".y", ""])
            ));
        }
    }
    // Inputs and outputs.
    for k in 0..rng.below(3) {
        if rng.chance(50) {
            g.lines.push(format!(".in in{k}"));
        } else {
            g.lines.push(format!(".in in{k} v{}", rng.below(15)));
        }
    }
    let sems = [
        "position",
        "color",
        "texcoord0",
        "texcoord1",
        "normalquat",
        "view",
        "dummy",
        "texcoord0w",
        "tcoord2",
    ];
    let max_o = if is_gsh { 7 } else { 16 };
    // Registers in use, to avoid overlapping outputs (picasso rejects those; and it wrongly
    // rejects explicit o8-o15 overlapping o0-o7 because its 32-bit bookkeeping overflows, which we
    // deliberately do not copy, so explicit registers stay below 8 here).
    let mut used = 0u32;
    for k in 0..rng.below(5) {
        let sem = *rng.pick(&sems);
        if rng.chance(50) {
            let Some(reg) = (0..max_o).find(|r| used & (1 << r) == 0) else {
                continue;
            };
            used |= 1 << reg;
            let m = rng.pick(&["", ".xy", ".x", ".zw", ".xyzw", ".rgba", ".st"]);
            g.lines.push(format!(".out ou{k} {sem}{m}"));
            g.onames.push(format!("ou{k}"));
        } else {
            let reg = rng.below(if sem == "dummy" { max_o.min(8) } else { 7 });
            if used & (1 << reg) != 0 {
                continue;
            }
            used |= 1 << reg;
            let alias = rng.chance(70);
            g.lines.push(format!(
                ".out {} {sem} o{reg}{}",
                if alias {
                    format!("ou{k}")
                } else {
                    "-".to_string()
                },
                rng.pick(&["", ".xy", ".zw", ".w"])
            ));
            if alias {
                g.onames.push(format!("ou{k}"));
            }
        }
    }
    // Procedures: helpers first, then the entry.
    let n_helpers = rng.below(3);
    let mut callable: Vec<String> = shared_procs.to_vec();
    for h in 0..n_helpers {
        let name = format!("helper{file_no}_{h}");
        g.lines.push(format!(".proc {name}"));
        for _ in 0..rng.below(5) {
            instruction(rng, &mut g, &callable, 0, false);
        }
        g.lines.push(".end".to_string());
        callable.push(name.clone());
        own_procs.push(name);
    }
    let entry = if file_no > 0 || rng.chance(30) {
        let e = format!("entry{file_no}");
        g.lines.push(format!(".entry {e}"));
        e
    } else {
        "main".to_string()
    };
    if !nodvle {
        g.lines.push(format!(".proc {entry}"));
        // Mostly short bodies; some long ones push the descriptor table past 32 (MAD swaps)
        // and towards its 128-entry limit.
        let len = if rng.chance(20) {
            40 + rng.below(200)
        } else {
            1 + rng.below(12)
        };
        for _ in 0..len {
            instruction(rng, &mut g, &callable, 0, false);
            if rng.chance(10) && !g.labels.is_empty() {
                let l = g.labels.remove(0);
                g.lines.push(format!("{l}:"));
            }
        }
        // Define every label still pending.
        for l in std::mem::take(&mut g.labels) {
            g.lines.push(format!("{l}:"));
            g.lines.push("\tnop".to_string());
        }
        g.lines.push("\tend".to_string());
        g.lines.push(".end".to_string());
    }
    // Any labels still undefined in a .nodvle file get a home at the end.
    if !g.labels.is_empty() {
        g.lines.push(format!(".proc tail{file_no}"));
        for l in std::mem::take(&mut g.labels) {
            g.lines.push(format!("{l}:"));
            g.lines.push("\tnop".to_string());
        }
        g.lines.push(".end".to_string());
    }
    g.lines.join("\n") + "\n"
}

#[test]
fn matches_picasso_on_generated_programs() {
    let Some(picasso) = std::env::var_os("PICASSO").map(PathBuf::from) else {
        eprintln!(
            "skipped: set PICASSO to a picasso 2.7.1 executable to run the differential test"
        );
        return;
    };
    let cases: u64 = std::env::var("PICASSO_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300);
    let dir = std::env::temp_dir().join(format!("picaview-asm-diff-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut accepted, mut rejected, mut over32, mut max_desc) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for case in 0..cases {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (case + 1).wrapping_mul(0x1234_5678_9ABC_DEF1));
        let nfiles = 1 + rng.below(3);
        let mut shared = Vec::new();
        let mut files = Vec::new();
        for f in 0..nfiles {
            let is_gsh = f > 0 && rng.chance(40);
            let nodvle = nfiles > 1 && rng.chance(15);
            let mut own = Vec::new();
            let text = gen_file(&mut rng, f, &shared, &mut own, is_gsh, nodvle);
            shared.extend(own);
            let name = format!("case{case}_f{f}.pica");
            std::fs::write(dir.join(&name), &text).unwrap();
            files.push((name, text));
        }
        let out = dir.join(format!("case{case}.shbin"));
        let _ = std::fs::remove_file(&out);
        let status = Command::new(&picasso)
            .current_dir(&dir)
            .arg("-o")
            .arg(&out)
            .args(files.iter().map(|(n, _)| n))
            .output()
            .unwrap();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let ours = assemble(&refs);
        match (status.status.success(), ours) {
            (true, Ok(a)) => {
                accepted += 1;
                max_desc = max_desc.max(a.opdescs.len());
                if a.opdescs.len() > 32 && a.program.iter().any(|w| w >> 29 >= 6) {
                    over32 += 1;
                }
                let theirs = std::fs::read(&out).unwrap();
                if a.to_shbin() != theirs {
                    failures.push(format!("case {case}: output differs"));
                }
            }
            (false, Err(_)) => rejected += 1,
            (true, Err(e)) => failures.push(format!(
                "case {case}: picasso accepts, we reject:\n{}",
                e.render()
            )),
            (false, Ok(_)) => failures.push(format!(
                "case {case}: picasso rejects ({}), we accept",
                String::from_utf8_lossy(&status.stderr).trim()
            )),
        }
    }
    eprintln!(
        "{accepted} programs identical ({over32} with MAD and more than 32 descriptors; at most {max_desc} descriptors), {rejected} rejected by both, {} failures",
        failures.len()
    );
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "sources kept in {}:\n{}",
        dir.display(),
        failures.join("\n")
    );
}
