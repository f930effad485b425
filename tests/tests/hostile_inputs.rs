//! Hostile and huge inputs (issue 18), outside the GPU model: every class of input that made a
//! parser or a CLI tool panic, hang, run superlinearly or grow memory without bound, built in
//! code (large ones) or read from `tests/fixtures/hostile/` (minimised fuzzer finds), and the
//! fuzz targets' checks (`fuzz/src/checks.rs`, included below) run on the repository's seeds
//! and on random inputs with stable Rust.
//!
//! No timing assertions: a regression to quadratic or unbounded behaviour shows up as a test
//! that does not finish (or runs out of memory) instead.

#[allow(dead_code)]
#[path = "../../fuzz/src/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};

use pica_cmd::citrace::{CiTrace, MAX_SECTION_WORDS, MAX_WARNINGS, Section, TraceWarning};
use pica_cmd::cmdlist::{self, ParseOptions};
use proptest::prelude::*;
use shader_unit::asm::assemble;
use shader_unit::disasm::{disassemble, disassemble_all, disassemble_all_to};
use shader_unit::dvlb::{ConstantValue, Dvlb, DvlbErrorKind};

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(rel)
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Every seed file of the repository and every minimised input, through the check of its kind
/// (by extension, or by the `KIND-` prefix of the files in `tests/fixtures/hostile/`).
#[test]
fn fuzz_checks_pass_on_seeds_and_minimised_inputs() {
    let mut files = Vec::new();
    for dir in [
        "assets",
        "shader-unit/tests/fixtures",
        "pica-cmd/tests/fixtures",
        "tests/fixtures/hostile",
        "tests/data/fuzz",
    ] {
        files_under(&repo(dir), &mut files);
    }
    files.sort();
    let mut ran = 0;
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ext = f.extension().and_then(|e| e.to_str()).unwrap_or("");
        // Traces of the replay target also go through the linter target's check.
        fn replay_and_lint(data: &[u8]) {
            checks::replay(data);
            checks::linter(data);
        }
        let check: fn(&[u8]) = if name.starts_with("dvlb-") || ext == "shbin" {
            checks::dvlb
        } else if name.starts_with("asm-") || ext == "pica" || ext == "vsh" {
            checks::asm
        } else if name.starts_with("cmdlist-") || name.contains("cmdlist") {
            checks::cmdlist
        } else if name.starts_with("replay-") || name.starts_with("linter-") {
            replay_and_lint
        } else if name.starts_with("citrace-") || ext == "ctf" {
            checks::citrace
        } else {
            continue;
        };
        let bytes = std::fs::read(f).unwrap();
        check(&bytes);
        ran += 1;
    }
    assert!(ran >= 20, "only {ran} seed files found");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn random_command_lists(words in proptest::collection::vec(any::<u32>(), 0..64), tail in 0usize..4) {
        let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        // Small extra counts so that most headers fit; a few bytes more for trailing-byte cases.
        for chunk in bytes.chunks_mut(8) {
            if let Some(b) = chunk.get_mut(6) {
                *b &= 0x3F;
            }
            if let Some(b) = chunk.get_mut(7) {
                *b &= 0x80;
            }
        }
        bytes.extend(std::iter::repeat_n(0xAB, tail));
        checks::cmdlist(&bytes);
    }

    #[test]
    fn random_shader_binaries(body in proptest::collection::vec(any::<u8>(), 0..400), n in 0u32..4) {
        let mut b = b"DVLB".to_vec();
        b.extend_from_slice(&n.to_le_bytes());
        for k in 0..n {
            b.extend_from_slice(&(0x40 + 0x30 * k).to_le_bytes());
        }
        b.extend_from_slice(b"DVLP");
        b.extend_from_slice(&body);
        checks::dvlb(&b);
    }

    #[test]
    fn random_sources(text in "[ -~\n]{0,200}") {
        checks::asm(text.as_bytes());
    }

    #[test]
    fn mutated_demo_trace(edits in proptest::collection::vec((0usize..2048, any::<u8>()), 1..6)) {
        let mut bytes = std::fs::read(repo("assets/demos/geoshader.ctf")).unwrap();
        for (at, v) in edits {
            if let Some(b) = bytes.get_mut(at) {
                *b = v;
            }
        }
        checks::citrace(&bytes);
    }
}

// ---------------------------------------------------------------------------------------------
// Command lists
// ---------------------------------------------------------------------------------------------

/// A 4 MiB list of 256-write bursts (what made `cmdlist --json` peak at 2.75 GB): the
/// sectioned reader decodes it with bounded memory and gives exactly the whole-list parse.
#[test]
fn a_4_mib_burst_list_decodes_in_sections_like_the_whole_parse() {
    let mut b = cmdlist::CmdListBuilder::new();
    let values: Vec<u32> = (0..256).collect();
    while b.len_bytes() < 4 << 20 {
        b.repeated(0x0C0, 0xF, &values).unwrap();
    }
    let bytes: Vec<u8> = b.words().iter().flat_map(|w| w.to_le_bytes()).collect();
    let whole = cmdlist::parse(&bytes).unwrap();
    let mut n = 0usize;
    let mut same = true;
    let summary = cmdlist::parse_reader(&bytes[..], ParseOptions::default(), |c| {
        for w in c.writes() {
            same &= whole.writes.get(n) == Some(&w);
            n += 1;
        }
        Ok(())
    })
    .unwrap();
    assert!(same);
    assert_eq!(n, whole.writes.len());
    assert_eq!(summary.writes as usize, n);
    assert_eq!(summary.commands as usize, whole.commands.len());
    assert_eq!(summary.len, bytes.len() as u64);
}

/// A malformed list is reported at the same offset by the sectioned reader, after the same
/// writes, even when the bad command sits past the first section.
#[test]
fn sectioned_reader_reports_errors_at_absolute_offsets() {
    let mut b = cmdlist::CmdListBuilder::new();
    let values: Vec<u32> = (0..200).collect();
    while b.len_bytes() < (cmdlist::READER_SECTION * 2 + 100) {
        b.consecutive(0x100, 0xF, &values).unwrap();
    }
    let mut bytes: Vec<u8> = b.words().iter().flat_map(|w| w.to_le_bytes()).collect();
    // A header that declares 255 extra parameters right at the end.
    bytes.extend_from_slice(&1u32.to_le_bytes());
    bytes.extend_from_slice(&0x0FF0_0010u32.to_le_bytes());
    let whole = cmdlist::parse(&bytes).unwrap_err();
    let err = cmdlist::parse_reader(&bytes[..], ParseOptions::default(), |_| Ok(())).unwrap_err();
    match err {
        cmdlist::ReaderError::List(e) => assert_eq!((e.offset, e.kind), (whole.offset, whole.kind)),
        other => panic!("{other}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Shader binaries
// ---------------------------------------------------------------------------------------------

fn le(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A DVLB whose offset table lists the DVLEs at `dvle_offsets` (absolute; pass `None` to get
/// one DVLE header right after the program, listed `count` times), with `program` as code and
/// one DVLE per distinct header: entry `start..end`, one constant `(type, reg, data)`.
fn dvlb_with(
    program: &[u32],
    entries: &[(u32, u32)],
    listed: &[usize],
    version: u16,
    constant: Option<(u16, u16, [u32; 4])>,
) -> Vec<u8> {
    let count = listed.len() as u32;
    let dvlp = 8 + 4 * count;
    let dvlp_size = 0x28 + 4 * program.len() as u32 + 8;
    let header_size = 0x40 + if constant.is_some() { 0x14 } else { 0 };
    let first_dvle = dvlp + dvlp_size;
    let mut b = b"DVLB".to_vec();
    b.extend(le(&[count]));
    for &k in listed {
        b.extend(le(&[first_dvle + header_size * k as u32]));
    }
    b.extend_from_slice(b"DVLP");
    b.extend(le(&[
        0,
        0x28,
        program.len() as u32,
        0x28 + 4 * program.len() as u32,
        1,
        0,
        0,
        0,
        0,
    ]));
    b.extend(le(program));
    b.extend(le(&[0x0000_036F, 0]));
    for &(start, end) in entries {
        b.extend_from_slice(b"DVLE");
        b.extend_from_slice(&version.to_le_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend(le(&[start, end, 0, 0]));
        let nconst = u32::from(constant.is_some());
        b.extend(le(&[
            0x40,
            nconst,
            header_size,
            0,
            header_size,
            0,
            header_size,
            0,
            header_size,
            0,
        ]));
        if let Some((ty, reg, data)) = constant {
            b.extend_from_slice(&ty.to_le_bytes());
            b.extend_from_slice(&reg.to_le_bytes());
            b.extend(le(&data));
        }
    }
    b
}

const MOV_END: [u32; 2] = [0x4C00_0000, 0x8800_0000];

/// One DVLE listed 100,000 times (what made `disasm --json` take 865 MB): parses, and the
/// streamed disassembly is one section per DVLE.
#[test]
fn one_dvle_listed_100000_times_parses_and_streams() {
    let listed = vec![0usize; 100_000];
    let bytes = dvlb_with(&MOV_END, &[(0, 2)], &listed, 0x1002, None);
    let d = Dvlb::parse(&bytes).unwrap();
    assert_eq!(d.dvles.len(), 100_000);
    let mut counter = LineCounter::default();
    disassemble_all_to(&d, &mut counter).unwrap();
    assert_eq!(counter.sections, 100_000);
}

/// Counts `; ======== file` section markers without keeping the text.
#[derive(Default)]
struct LineCounter {
    sections: usize,
    carry: Vec<u8>,
}

impl std::io::Write for LineCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.carry.extend_from_slice(buf);
        while let Some(pos) = self.carry.iter().position(|&b| b == b'\n') {
            if self.carry.starts_with(b"; ======== file ") {
                self.sections += 1;
            }
            self.carry.drain(..=pos);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Many DVLEs with distinct entry ranges over a long program (the disassembler used to check
/// each against every procedure: quadratic): the analysis stays linear and every DVLE gets a
/// section that names the procedure it enters.
#[test]
fn thousands_of_distinct_dvle_entry_ranges_disassemble() {
    let mut program = vec![0x4C00_0000u32; 4095];
    program.push(0x8800_0000);
    let entries: Vec<(u32, u32)> = (0..4000u32).map(|k| (k, 4096)).collect();
    let listed: Vec<usize> = (0..4000).flat_map(|k| [k, k]).collect();
    let bytes = dvlb_with(&program, &entries, &listed, 0x1002, None);
    let d = Dvlb::parse(&bytes).unwrap();
    assert_eq!(d.dvles.len(), 8000);
    let mut counter = LineCounter::default();
    disassemble_all_to(&d, &mut counter).unwrap();
    assert_eq!(counter.sections, 8000);
    // The listing of one DVLE works the same way.
    let one = disassemble(&d, 3999).unwrap();
    assert!(
        one.contains(".proc main"),
        "{}",
        &one[..one.len().min(2000)]
    );
}

/// A DVLE table far longer than the input can justify is refused with a typed error before
/// anything is parsed.
#[test]
fn absurd_dvle_counts_are_refused_up_front() {
    let listed = vec![0usize; 400_000];
    let bytes = dvlb_with(&MOV_END, &[(0, 2)], &listed, 0x1002, None);
    let e = Dvlb::parse(&bytes).unwrap_err();
    assert!(
        matches!(e.kind, DvlbErrorKind::TooManyDvles { count: 400_000, .. }),
        "{e}"
    );
}

/// aemstro before 2014-12-09 wrote every `.const` as type 0 with four float24 words: those are
/// float uniforms, while a picasso-style bool (type 0, word 0/1) stays a bool.
#[test]
fn early_aemstro_type_0_constants_are_floats() {
    // `.const 5, 0.0, 1.0, 2.0, 3.0` (aemstro's test.vsh): c5 = (0, 1, 2, 3) as float24.
    let data = [0, 0x3F_0000, 0x40_0000, 0x40_8000];
    let bytes = dvlb_with(&MOV_END, &[(0, 2)], &[0], 0, Some((0, 5, data)));
    let d = Dvlb::parse(&bytes).unwrap();
    assert_eq!(d.dvles[0].constants[0].value, ConstantValue::Float(data));
    assert_eq!(d.dvles[0].constants[0].type_raw, 0);
    let text = disassemble(&d, 0).unwrap();
    assert!(text.contains(".setf c5(0.0, 1.0, 2.0, 3.0)"), "{text}");
    assert!(text.contains("early aemstro"), "{text}");

    // picasso: `.setb b5 true` is type 0, word 1, zeros.
    let bytes = dvlb_with(
        &MOV_END,
        &[(0, 2)],
        &[0],
        0x1002,
        Some((0, 5, [1, 0, 0, 0])),
    );
    assert_eq!(
        Dvlb::parse(&bytes).unwrap().dvles[0].constants[0].value,
        ConstantValue::Bool(true)
    );
    // Version 0 (old tools) with a plain bool stays a bool too.
    let bytes = dvlb_with(&MOV_END, &[(0, 2)], &[0], 0, Some((0, 5, [1, 0, 0, 0])));
    assert_eq!(
        Dvlb::parse(&bytes).unwrap().dvles[0].constants[0].value,
        ConstantValue::Bool(true)
    );
}

/// An empty `main` assembles, and its disassembly assembles again to the same bytes.
#[test]
fn empty_main_round_trips() {
    for src in [
        ".proc main\n.end\n.out o0 position\n",
        ".out o0 position\n.out o1 color\n.proc main\n.end\n",
    ] {
        let first = assemble(&[("a.v.pica", src)]).unwrap().to_shbin();
        let d = Dvlb::parse(&first).unwrap();
        let text = disassemble_all(&d);
        let second = assemble(&[("b.v.pica", text.as_str())])
            .unwrap_or_else(|e| panic!("{}\n{text}", e.render()))
            .to_shbin();
        assert_eq!(first, second, "{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// CiTrace
// ---------------------------------------------------------------------------------------------

/// A CiTrace header followed by `body_words` words of `fill`, every section pointing at the
/// same bytes (offset 0x64, all of them), no stream.
fn overlapping_sections_trace(body_words: u32, fill: u32) -> Vec<u8> {
    let mut b = b"CiTr".to_vec();
    b.extend(le(&[1, 0x64]));
    for _ in 0..10 {
        b.extend(le(&[0x64, body_words]));
    }
    b.extend(le(&[0x64, 0]));
    b.extend(std::iter::repeat_n(fill.to_le_bytes(), body_words as usize).flatten());
    b
}

/// Ten sections over the same 4 MiB: read once, each loaded only up to MAX_SECTION_WORDS, and
/// the file still writes back byte for byte.
#[test]
fn overlapping_huge_sections_are_read_once_and_bounded() {
    let words = 1 << 20;
    let bytes = overlapping_sections_trace(words, 0x1234_5678);
    let mut t = CiTrace::from_bytes(bytes.clone()).unwrap();
    for s in Section::ALL {
        assert_eq!(
            t.initial_state().section(s).len(),
            MAX_SECTION_WORDS as usize
        );
    }
    let truncated = t
        .warnings()
        .iter()
        .filter(|w| {
            matches!(
                w,
                TraceWarning::SectionTruncated {
                    words: 0x10_0000,
                    ..
                }
            )
        })
        .count();
    assert_eq!(truncated, 10);
    assert!(
        t.warnings()
            .iter()
            .any(|w| matches!(w, TraceWarning::RegionsOverlap { .. }))
    );
    assert_eq!(t.to_bytes().unwrap(), bytes);
}

/// A stream of 50,000 unknown elements: the warnings stop at MAX_WARNINGS plus one summary.
#[test]
fn reader_warnings_are_bounded() {
    let mut b = overlapping_sections_trace(0, 0);
    let n = 50_000u32;
    // Stream right after the header.
    b[0x5C..0x60].copy_from_slice(&0x64u32.to_le_bytes());
    b[0x60..0x64].copy_from_slice(&n.to_le_bytes());
    for k in 0..n {
        b.extend(le(&[0xEE, k, 0, 0, 0]));
    }
    let t = CiTrace::from_bytes(b).unwrap();
    assert_eq!(t.warnings().len(), MAX_WARNINGS + 1);
    assert!(matches!(
        t.warnings().last(),
        Some(TraceWarning::WarningsOmitted { count }) if *count == u64::from(n) - MAX_WARNINGS as u64
    ));
}

// ---------------------------------------------------------------------------------------------
// The replay timeout under load (fuzz campaign of 2026-11-26)
// ---------------------------------------------------------------------------------------------

/// The minimised input of the replay target's one timeout (see [`slow_mutant_signature`]).
const SLOW_MUTANT: &str = "tests/fixtures/hostile/replay-timeout-under-load-d6b8c61a.ctf";

/// Frames, per-draw counters, engine operations and diagnostic kinds (see
/// [`slow_mutant_signature`]).
type SlowMutantSignature = (usize, Vec<String>, Vec<String>, Vec<String>);

/// What the replay fuzz target does with a trace, as numbers that do not depend on timing: the
/// index pass under [`checks::FUZZ_WORK_BUDGET`] gives frames, each draw's counters (vertices,
/// fragments, texture samples, ...), each fill/transfer/copy the engines ran (addresses and
/// sizes) and the kinds of diagnostics; `None` when the bytes are not a trace.
fn slow_mutant_signature(bytes: &[u8]) -> Option<SlowMutantSignature> {
    let trace = CiTrace::from_bytes(bytes.to_vec()).ok()?;
    let mut r = gpu_core::replay::Replay::new(trace);
    r.set_work_budget(gpu_core::budget::WorkBudget::parse(checks::FUZZ_WORK_BUDGET).ok()?);
    let index = r.build_index_streaming(&mut |_| true)?;
    let draws = index
        .draws
        .iter()
        .map(|d| format!("{:?}", d.stats))
        .collect();
    let engines = index
        .engine_events
        .iter()
        .map(|e| format!("{:?}", e.event))
        .collect();
    let mut kinds: Vec<String> = index
        .diagnostics
        .iter()
        .map(|(_, d)| {
            let k = format!("{:?}", d.kind);
            k.split(|c: char| !c.is_alphanumeric())
                .next()
                .unwrap_or("")
                .to_owned()
        })
        .collect();
    kinds.sort();
    kinds.dedup();
    Some((index.frames.len(), draws, engines, kinds))
}

/// The replay target's only timeout of the 2026-11-26 campaign (libFuzzer's 10 s at nice 19,
/// load 12 on 2 cores), minimised. **Not a hang: slow under load.** The found input was the
/// bundled `cube.ctf` with 1,000+ stream elements garbled and the command lists of frames 0-2
/// cut short by a burst header that runs past the list's end (236 ms alone in the instrumented
/// fuzz build at the time, 40-80 ms on a quieter machine; 0.09 s for `picaview trace info`).
/// The unmutated cube is cheap under the fuzz budget because its first draw (a 96,000-fragment
/// background) exhausts `fragments-per-trace=2^16` before any display transfer and the rest of
/// the trace is skipped. Here frames 0-2 draw nothing, so their memory fills (~384 KB each),
/// display transfers (240x400 and 240x320, RGBA8 to RGB8) and LCD scan-out all run, and the
/// fragment budget only runs out after draw 4 in the last frame: perf of the fuzz binary puts
/// ~25% of the time in display-transfer pixel conversion, ~23% in fragments and ~25% in the
/// coverage instrumentation. Fills and transfers are bounded per operation
/// (`MAX_TRANSFER_PIXELS`, `MAX_TRANSFER_BYTES`) but counted by no work budget, which is why
/// no budget cut this input sooner.
///
/// Minimised by [`minimise_slow_mutant`] (element-level delta debugging, then the shortest
/// prefix of each initial-state section, keeping [`slow_mutant_signature`]: the same frames,
/// draw counters, engine operations and diagnostic kinds, so the same path and the same work):
/// 112,260 -> 17,272 bytes, 342 -> 76 stream elements. This test replays it through both fuzz
/// checks and asserts that path: fills and transfers in every frame, then the trace's fragment
/// budget ends it.
#[test]
fn the_replay_timeout_under_load_runs_its_fills_and_transfers_then_hits_the_fragment_budget() {
    let bytes = std::fs::read(repo(SLOW_MUTANT)).unwrap();
    checks::replay(&bytes);
    checks::linter(&bytes);
    let (frames, draws, engines, kinds) = slow_mutant_signature(&bytes).expect("a trace");
    assert_eq!(frames, 4, "{frames} frames");
    assert!(!draws.is_empty());
    assert!(kinds.iter().any(|k| k == "Budget"), "{kinds:?}");
    let transfers = engines.iter().filter(|e| e.starts_with("Transfer")).count();
    let fills = engines
        .iter()
        .filter(|e| e.starts_with("MemoryFill"))
        .count();
    assert!(
        transfers >= 6 && fills >= 8,
        "{transfers} transfers, {fills} fills: {engines:?}"
    );
}

/// Delta debugging over the stream elements of `$PICAVIEW_MINIMISE_IN` (the original fuzz
/// find), then the shortest prefix of each initial-state section, keeping
/// [`slow_mutant_signature`]; writes `$PICAVIEW_MINIMISE_OUT`. How the committed
/// [`SLOW_MUTANT`] was made.
#[test]
#[ignore = "minimiser, run by hand"]
fn minimise_slow_mutant() {
    let (Some(input), Some(output)) = (
        std::env::var_os("PICAVIEW_MINIMISE_IN"),
        std::env::var_os("PICAVIEW_MINIMISE_OUT"),
    ) else {
        return;
    };
    enum Item {
        Load(u32, Vec<u8>),
        Raw(pica_cmd::citrace::RawElement),
    }
    let original = std::fs::read(input).unwrap();
    let mut trace = CiTrace::from_bytes(original.clone()).unwrap();
    let mut items = Vec::new();
    let mut buf = Vec::new();
    for i in 0..trace.elements().len() {
        let raw = trace.elements()[i];
        match trace.event(i) {
            Some(pica_cmd::citrace::StreamEvent::MemoryLoad(m)) => {
                trace.read_blob_into(i, &mut buf).unwrap();
                items.push(Item::Load(m.physical_address, buf.clone()));
            }
            _ => items.push(Item::Raw(raw)),
        }
    }
    let mut initial = trace.initial_state().clone();
    for s in Section::ALL {
        let words = initial.section_mut(s);
        let keep = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        words.truncate(keep);
    }
    let layout = trace.layout();
    let build = |keep: &[bool], initial: &pica_cmd::citrace::InitialState| {
        let mut b = pica_cmd::citrace::CiTraceBuilder::new(initial.clone());
        b.layout(layout);
        for (item, _) in items.iter().zip(keep).filter(|(_, k)| **k) {
            match item {
                Item::Load(pa, bytes) => b.memory_load(*pa, bytes).map(|_| ()),
                Item::Raw(raw) => b.raw_element(*raw).map(|_| ()),
            }
            .unwrap();
        }
        b.build().unwrap()
    };
    let want = slow_mutant_signature(&original).unwrap();
    let mut keep = vec![true; items.len()];
    assert_eq!(
        slow_mutant_signature(&build(&keep, &initial)).as_ref(),
        Some(&want)
    );
    let mut chunk = items.len().next_power_of_two();
    let mut tries = 0;
    while chunk >= 1 {
        let mut start = 0;
        while start < items.len() {
            let end = (start + chunk).min(items.len());
            if keep[start..end].iter().any(|&k| k) {
                let mut candidate = keep.clone();
                candidate[start..end].fill(false);
                tries += 1;
                if slow_mutant_signature(&build(&candidate, &initial)).as_ref() == Some(&want) {
                    keep = candidate;
                }
            }
            start = end;
        }
        chunk /= 2;
    }
    // Then each initial-state section: the shortest prefix (binary search) that keeps it.
    for s in Section::ALL {
        let (mut lo, mut hi) = (0, initial.section_mut(s).len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            let mut candidate = initial.clone();
            candidate.section_mut(s).truncate(mid);
            tries += 1;
            if slow_mutant_signature(&build(&keep, &candidate)).as_ref() == Some(&want) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        initial.section_mut(s).truncate(hi);
    }
    let out = build(&keep, &initial);
    assert_eq!(slow_mutant_signature(&out).as_ref(), Some(&want));
    eprintln!(
        "{} -> {} bytes, {} -> {} elements, {tries} tries",
        original.len(),
        out.len(),
        items.len(),
        keep.iter().filter(|&&k| k).count()
    );
    std::fs::write(output, out).unwrap();
}

// ---------------------------------------------------------------------------------------------
// Command processor
// ---------------------------------------------------------------------------------------------

/// A command list that jumps back to its own start (with the jump registers unchanged) is
/// recognised as a loop at the second identical jump, not after 2^26 writes.
#[test]
fn a_list_that_jumps_to_its_own_start_is_a_detected_loop() {
    use gpu_core::debug::{DiagKind, EventLog};
    use gpu_core::gpu::Gpu;
    use gpu_core::memory::PhysMem;

    const LIST_ADDR: u32 = 0x2000_0000;
    let mut b = cmdlist::CmdListBuilder::new();
    b.write(0x010_u16 + 0x100, 7); // some work in the loop body (a harmless register)
    b.write(0x238, 0); // size patched below (units of 8 bytes)
    b.write(0x23A, LIST_ADDR >> 3);
    b.write(0x23C, 1); // jump on channel 0
    let mut words = b.words().to_vec();
    let len = (words.len() * 4) as u32;
    // The size write is the second command: its parameter is word 2.
    words[2] = len / 8;
    let bytes = le(&words);
    let mut mem = PhysMem::new();
    mem.write(LIST_ADDR, &bytes).unwrap();
    let mut gpu = Gpu::new();
    let mut log = EventLog::new(1000, false);
    assert!(gpu.run_command_list(&mut mem, LIST_ADDR, len, &mut log));
    let loops: Vec<_> = log
        .diagnostics()
        .filter(|d| d.kind == DiagKind::CommandList && d.detail.contains("command-list loop"))
        .collect();
    assert_eq!(
        loops.len(),
        1,
        "{:?}",
        log.diagnostics().collect::<Vec<_>>()
    );
    assert!(
        loops[0].detail.contains("stopped after 8 writes"),
        "{}",
        loops[0].detail
    );
}

/// 200,000 uniforms of one name in one DVLE (each needs a fresh alias name and a note): the
/// disassembler hands out names in constant time and lists at most MAX_NOTES notes.
#[test]
fn a_dvle_with_200000_same_named_uniforms_disassembles() {
    let n = 200_000u32;
    let mut b = dvlb_with(&MOV_END, &[(0, 2)], &[0], 0x1002, None);
    // Point the DVLE's uniform table (header word 0x30/0x34) and symbol table at new data.
    let dvle = u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize;
    let table = (b.len() - dvle) as u32;
    b[dvle + 0x30..dvle + 0x34].copy_from_slice(&table.to_le_bytes());
    b[dvle + 0x34..dvle + 0x38].copy_from_slice(&n.to_le_bytes());
    for k in 0..n {
        b.extend(le(&[0]));
        let reg = 0x10 + (k % 96) as u16;
        b.extend_from_slice(&reg.to_le_bytes());
        b.extend_from_slice(&reg.to_le_bytes());
    }
    let symbols = (b.len() - dvle) as u32;
    b[dvle + 0x38..dvle + 0x3C].copy_from_slice(&symbols.to_le_bytes());
    b[dvle + 0x3C..dvle + 0x40].copy_from_slice(&2u32.to_le_bytes());
    b.extend_from_slice(b"u\0");
    let d = Dvlb::parse(&b).unwrap();
    assert_eq!(d.dvles[0].uniforms.len(), n as usize);
    let text = disassemble(&d, 0).unwrap();
    assert!(text.contains("more problem(s) not listed"));
    assert!(text.contains(&format!("u_{n}")), "the last alias is u_{n}");
}

/// A source with 50,000 bad lines: the assembler keeps MAX_DIAGNOSTICS diagnostics and one
/// closing error that counts the rest (the error list used to grow without bound).
#[test]
fn assembler_diagnostics_are_bounded() {
    use shader_unit::asm::MAX_DIAGNOSTICS;
    let mut src = String::from(".proc main\n");
    for k in 0..50_000 {
        src.push_str(&format!("\tbogus{k} r0\n"));
    }
    src.push_str("\tend\n.end\n");
    let errors = assemble(&[("big.v.pica", src.as_str())]).unwrap_err();
    assert_eq!(errors.len(), MAX_DIAGNOSTICS + 1);
    let last = errors.last().unwrap();
    assert!(last.is_error());
    assert!(
        last.message
            .starts_with(&format!("{} more error(s)", 50_000 - MAX_DIAGNOSTICS)),
        "{}",
        last.message
    );
}

// ---------------------------------------------------------------------------------------------
// Work budgets per submission, frame and trace
// ---------------------------------------------------------------------------------------------

mod budgets {
    use gpu_core::budget::{BudgetResource, BudgetScope, WorkBudget};
    use gpu_core::debug::{DiagKind, Diagnostic, Observer};
    use gpu_core::gpu::{Gpu, MAX_JUMPS_TRACKED};
    use gpu_core::memory::PhysMem;
    use gpu_core::replay::{Replay, Target};
    use pica_cmd::citrace::CiTrace;
    use pica_cmd::cmdlist;
    use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
    use picaview_tests::scene::{AttribLayout, BufferLayout, Scene, ShaderBinary, ShaderProgram};
    use picaview_tests::synthetic::{PASS_VS, zero_vertex_draws};

    /// A geometry shader that emits in two nested 256-iteration loops per invocation.
    const NESTED_GS: &str = "
.gsh point c0
.consti loops(255, 0, 1, 0)
.out outpos position
.out outclr color
.entry gmain
.proc gmain
	for loops
		for loops
			setemit 0
			mov outpos, v0
			mov outclr, v1
			emit
		.end
	.end
	end
.end
";

    /// `frames` frames, each one list of `draws` DRAWARRAYS of `count` vertices (16-byte
    /// stride over a 16-byte buffer: the rest reads zeros, so nothing is drawn but every vertex
    /// is fetched and shaded), with the geometry shader `gs` if given.
    fn draws_trace(frames: u32, draws: u32, count: u32, gs: bool) -> Vec<u8> {
        zero_vertex_draws(frames, draws, count, gs.then_some(NESTED_GS))
    }

    /// `frames` frames, each one list of `draws` draws of one triangle covering the whole
    /// 240x400 top target (96,000 fragments each), the depth test passing always (`reject` =
    /// false: every fragment is written) or never (`reject` = true: every fragment is generated
    /// and tested, none written). The list is the same every frame, so the trace stores it once.
    fn fullscreen_trace(frames: u32, draws: u32, reject: bool) -> Vec<u8> {
        use picaview_tests::scene::Effect;
        use picaview_tests::scene::effect::depth_test;
        let mut scene = Scene::new().expect("scene");
        let top = scene.top_target().expect("target");
        let bin = ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)]).expect("shader");
        let program = ShaderProgram::new(&bin, 0).expect("program");
        let mut verts = Vec::new();
        for v in [
            [-1.0f32, -1.0, -0.5, 1.0],
            [3.0, -1.0, -0.5, 1.0],
            [-1.0, 3.0, -0.5, 1.0],
        ] {
            verts.extend(v.iter().flat_map(|f| f.to_le_bytes()));
        }
        let vbo = scene.vertex_buffer(&verts).expect("vertex buffer");
        let attrs = AttribLayout::new().loader(0, AttribType::Float, 4);
        let buffers = BufferLayout::new().buffer(vbo, 16, &[0]);
        let func = if reject {
            pica_cmd::regs::framebuffer::CompareFunc::Never
        } else {
            pica_cmd::regs::framebuffer::CompareFunc::Always
        };
        let effect = Effect {
            depth: depth_test(true, func, false),
            ..Effect::ui()
        };
        for _ in 0..frames {
            let mut cmd = scene.command_list();
            cmd.set_render_target(&top)
                .bind_program(&program)
                .set_attributes(&attrs)
                .set_buffers(&buffers)
                .set_effect(&effect);
            for _ in 0..draws {
                cmd.draw_arrays(PrimitiveTopology::Triangles, 0, 3);
            }
            scene.submit(cmd).expect("submit");
            scene.end_frame();
        }
        scene.finish().expect("trace")
    }

    /// A trace of stream register writes: `setup`, then `n` writes of `trigger` with a frame
    /// marker after every `per_frame` of them (an engine kept busy without any command list).
    fn engine_trace(setup: &[(u32, u32)], trigger: (u32, u32), n: u32, per_frame: u32) -> Vec<u8> {
        let mut b =
            pica_cmd::citrace::CiTraceBuilder::new(pica_cmd::citrace::InitialState::citra_sized());
        for &(pa, value) in setup {
            b.register_write(pa, value);
        }
        for f in 0..n {
            b.register_write(trigger.0, trigger.1);
            if f % per_frame == per_frame - 1 {
                b.frame_marker();
            }
        }
        b.build().expect("engine trace")
    }

    /// `n` display transfers of `dim` x `dim` RGBA8 pixels (FCRAM to FCRAM), `per_frame` per
    /// frame.
    fn transfers_trace(dim: u32, n: u32, per_frame: u32) -> Vec<u8> {
        let d = (dim << 16) | dim;
        engine_trace(
            &[
                (0x1040_0C00, 0x2000_0000 >> 3),
                (0x1040_0C04, 0x2400_0000 >> 3),
                (0x1040_0C08, d),
                (0x1040_0C0C, d),
                (0x1040_0C10, 0),
            ],
            (0x1040_0C18, 1),
            n,
            per_frame,
        )
    }

    /// Transfers count against the transfer-pixels budget: a frame of 256x256 transfers is cut
    /// when the frame's pixels run out (the next frame runs again), and the trace is cut when
    /// the trace's run out, each with a diagnostic naming the resource; the transfer that would
    /// start past the limit does not run.
    #[test]
    fn display_transfers_end_at_the_transfer_pixel_budget() {
        use gpu_core::debug::{EngineEvent, EventLog};
        let bytes = transfers_trace(256, 50, 10);
        let mut r = replay_with(
            &bytes,
            "transfer-pixels-per-frame=2^18,transfer-pixels-per-trace=2^20",
        );
        let mut log = EventLog::new(usize::MAX, false);
        r.run_until(Target::End, &mut log);
        let ran = log
            .events
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    gpu_core::debug::GpuEvent::Engine(EngineEvent::Transfer {
                        written: Some(_),
                        ..
                    })
                )
            })
            .count();
        // 65,536 pixels each: 4 per frame reach 2^18; 16 reach 2^20 (frames 0-3). The 16th
        // exhausts frame 3 and the trace together; the narrower scope is reported then, the
        // trace when frame 4's first transfer would start.
        assert_eq!(ran, 16, "transfers run");
        let b = budget_diags(log.diagnostics());
        let kinds: Vec<_> = b.iter().map(|(s, r, _)| (*s, *r)).collect();
        assert_eq!(
            kinds,
            [
                (BudgetScope::Frame, BudgetResource::TransferPixels),
                (BudgetScope::Frame, BudgetResource::TransferPixels),
                (BudgetScope::Frame, BudgetResource::TransferPixels),
                (BudgetScope::Frame, BudgetResource::TransferPixels),
                (BudgetScope::Trace, BudgetResource::TransferPixels),
            ],
            "{b:?}"
        );
        assert!(b[0].2.contains("transfer-pixels-per-frame"), "{}", b[0].2);
        assert!(b[4].2.contains("transfer-pixels-per-trace"), "{}", b[4].2);
        assert!(b[4].2.contains("was not run"), "{}", b[4].2);
        assert!(b[0].2.contains("PA 0x10400C18"), "{}", b[0].2);
    }

    /// The hostile input of the issue (1,000 display transfers of 4096x4096, the engine's
    /// maximum, 100 per frame) is cut by the default budgets: 4 transfers per frame, 8 in the
    /// trace, instead of minutes of CPU (0.23 s each: ~2 s for the 8).
    #[test]
    fn maximal_display_transfers_are_cut_by_the_default_budget() {
        let bytes = transfers_trace(4096, 1000, 100);
        let mut r = Replay::new(CiTrace::from_bytes(bytes).expect("trace parses"));
        assert_eq!(r.work_budget(), WorkBudget::default());
        let index = r.build_index();
        let b = budget_diags(index.diagnostics.iter().map(|(_, d)| d));
        let last = b.last().expect("a budget diagnostic");
        assert_eq!(
            (last.0, last.1),
            (BudgetScope::Trace, BudgetResource::TransferPixels),
            "{b:?}"
        );
        assert!(
            b.iter()
                .all(|(_, r, _)| *r == BudgetResource::TransferPixels),
            "{b:?}"
        );
        let d = WorkBudget::default();
        let per = 4096u64 * 4096;
        assert_eq!(
            b.len() as u64,
            d.trace.transfer_pixels / d.frame.transfer_pixels + 1,
            "a frame cut in each of frames 0-1, then the trace cut at frame 2's first transfer"
        );
        assert_eq!(
            r.gpu().work.used(BudgetScope::Trace).transfer_pixels,
            d.trace.transfer_pixels
        );
        assert_eq!(d.trace.transfer_pixels % per, 0);
    }

    /// Keeps diagnostics only.
    #[derive(Default)]
    struct Diags(Vec<Diagnostic>);

    impl Observer for Diags {
        fn diagnostic(&mut self, d: &Diagnostic) {
            self.0.push(d.clone());
        }
    }

    fn replay_with(bytes: &[u8], spec: &str) -> Replay<Vec<u8>> {
        let mut r = Replay::new(CiTrace::from_bytes(bytes.to_vec()).expect("trace parses"));
        r.set_work_budget(WorkBudget::parse(spec).expect("budget spec"));
        r
    }

    fn budget_diags<'a>(
        diags: impl Iterator<Item = &'a Diagnostic>,
    ) -> Vec<(BudgetScope, BudgetResource, String)> {
        diags
            .filter_map(|d| match d.kind {
                DiagKind::Budget { scope, resource } => Some((scope, resource, d.detail.clone())),
                _ => None,
            })
            .collect()
    }

    /// Thousands of 0xFFFFFFFF-vertex draws in one list: the per-draw cap alone would leave
    /// hours of work; the frame's vertex budget ends the frame, the next frame runs again (and is
    /// cut the same way), and the index records where.
    #[test]
    fn repeated_ffffffff_vertex_draws_end_at_the_frame_vertex_budget() {
        let bytes = draws_trace(2, 2000, u32::MAX, false);
        let mut r = replay_with(&bytes, "vertices-per-frame=2^21");
        let index = r.build_index();
        let b = budget_diags(index.diagnostics.iter().map(|(_, d)| d));
        assert_eq!(b.len(), 2, "one cut per frame: {b:?}");
        for (scope, resource, detail) in &b {
            assert_eq!(
                (*scope, *resource),
                (BudgetScope::Frame, BudgetResource::Vertices)
            );
            assert!(detail.contains("vertices-per-frame"), "{detail}");
            assert!(detail.contains("byte offset 0x"), "{detail}");
            assert!(detail.contains("draw "), "{detail}");
        }
        // 2^21 vertices = two capped draws (2^20 each) per frame; the third never starts.
        assert_eq!(index.draws.len(), 4);
        assert_eq!(index.draws[0].frame, 0);
        assert_eq!(index.draws[2].frame, 1);
        let shaded: u64 = index.draws.iter().map(|d| d.stats.vs_invocations).sum();
        assert_eq!(shaded, 4 << 20);
        assert_eq!(index.frames.len(), 2);
    }

    /// The draws budget cuts at exactly N draws per frame, and the trace budget ends the trace
    /// for good; seeks under a budget land where a linear replay does.
    #[test]
    fn draw_budgets_per_frame_and_trace_cut_deterministically() {
        let bytes = draws_trace(4, 10, 3, false);
        let mut r = replay_with(&bytes, "draws-per-frame=4,draws-per-trace=10");
        let index = r.build_index();
        let per_frame: Vec<usize> = index
            .frames
            .iter()
            .map(|f| f.draws.clone().count())
            .collect();
        assert_eq!(per_frame, vec![4, 4, 2, 0]);
        let b = budget_diags(index.diagnostics.iter().map(|(_, d)| d));
        let scopes: Vec<_> = b.iter().map(|(s, r, _)| (*s, *r)).collect();
        assert_eq!(
            scopes,
            vec![
                (BudgetScope::Frame, BudgetResource::Draws),
                (BudgetScope::Frame, BudgetResource::Draws),
                (BudgetScope::Trace, BudgetResource::Draws),
            ]
        );
        // Seeks (which restore keyframes holding the counters) agree with a linear replay.
        for m in [9u64, 3, 6, 0, 5] {
            let mut linear = replay_with(&bytes, "draws-per-frame=4,draws-per-trace=10");
            assert!(linear.run_until(Target::AfterDraw(m), &mut ()));
            assert!(r.seek(Target::AfterDraw(m), &mut ()));
            assert_eq!(r.position(), linear.position(), "draw {m}");
            assert_eq!(r.gpu().regs[..], linear.gpu().regs[..]);
        }
        // Without budgets every draw runs.
        let mut free = replay_with(&bytes, "defaults");
        assert_eq!(free.build_index().draws.len(), 40);
    }

    /// A geometry shader emitting in nested loops (65,536 emits per invocation) stops at the
    /// frame's shader-instruction budget.
    #[test]
    fn nested_loop_geometry_shader_ends_at_the_instruction_budget() {
        let bytes = draws_trace(2, 50, 64, true);
        let mut r = replay_with(&bytes, "shader-instructions-per-frame=2000000");
        let index = r.build_index();
        let b = budget_diags(index.diagnostics.iter().map(|(_, d)| d));
        assert_eq!(b.len(), 2, "{b:?}");
        for (scope, resource, detail) in &b {
            assert_eq!(
                (*scope, *resource),
                (BudgetScope::Frame, BudgetResource::ShaderInstructions)
            );
            assert!(detail.contains("shader-instructions-per-frame"), "{detail}");
        }
        assert!(index.draws.len() < 100);
        assert!(index.draws.iter().all(|d| d.stats.gs_invocations > 0));
    }

    /// Found by the replay fuzzer: every geometry-shader invocation of a 1,048,582-vertex draw
    /// runs off the end of the program. A failed invocation's instructions count against the
    /// budgets like a finished one's, so the instruction budget (not only the vertex budget)
    /// ends the draw, and the draw's statistics show the work.
    #[test]
    fn failing_geometry_shader_invocations_count_against_the_instruction_budget() {
        let bytes = std::fs::read(super::repo(
            "tests/fixtures/hostile/replay-gs-errors-uncounted-99349406.ctf",
        ))
        .expect("fixture");
        const LIMIT: u64 = 1 << 18;
        let mut r = replay_with(
            &bytes,
            &format!("vertices-per-trace=2^20,shader-instructions-per-trace={LIMIT}"),
        );
        let index = r.build_index();
        let b = budget_diags(index.diagnostics.iter().map(|(_, d)| d));
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(
            (b[0].0, b[0].1),
            (BudgetScope::Trace, BudgetResource::ShaderInstructions)
        );
        let gs: u64 = index.draws.iter().map(|d| d.stats.gs_instructions).sum();
        let used: u64 = index
            .draws
            .iter()
            .map(|d| d.stats.vs_instructions + d.stats.gs_instructions)
            .sum();
        assert!(gs > 0, "failed invocations were not counted");
        assert!(used >= LIMIT, "{used}");
    }

    /// The worst case of issue 18's 30 s target, scaled down: a geometry shader emitting in
    /// nested loops (262,144 instructions per invocation, 64 invocations per draw) is cut by
    /// the trace's instruction budget within one invocation of the limit (the draw checks after
    /// each GS invocation, not after each batch of 64), and the defaults bound it at all.
    #[test]
    fn nested_loop_geometry_shader_stops_within_one_invocation_of_the_trace_budget() {
        let bytes = draws_trace(3, 20, 64, true);
        const LIMIT: u64 = 3 << 20;
        let mut r = replay_with(&bytes, &format!("shader-instructions-per-trace={LIMIT}"));
        let index = r.build_index();
        let b = budget_diags(index.diagnostics.iter().map(|(_, d)| d));
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(
            (b[0].0, b[0].1),
            (BudgetScope::Trace, BudgetResource::ShaderInstructions)
        );
        let used: u64 = index
            .draws
            .iter()
            .map(|d| d.stats.vs_instructions + d.stats.gs_instructions)
            .sum();
        assert!(used >= LIMIT, "{used}");
        // One invocation is 65,536 x 4 instructions (+ a few); the interpreter caps it at 2^20.
        assert!(used <= LIMIT + (1 << 20), "overshoot: {used} for {LIMIT}");
        assert_eq!(
            index.draws.len(),
            1,
            "the first draw alone reaches the limit"
        );
        // The defaults bound the trace too (2^30 instructions per frame and per trace).
        assert_eq!(WorkBudget::default().trace.shader_instructions, 1 << 30);
    }

    /// Fragments that fail the depth test are charged like written ones: full-screen draws
    /// that write nothing still end at the fragment budget (before, only written fragments
    /// counted, so such draws were bounded by the draw count alone).
    #[test]
    fn depth_rejected_fragments_count_against_the_fragment_budget() {
        for reject in [false, true] {
            let bytes = fullscreen_trace(1, 50, reject);
            let mut r = replay_with(&bytes, "fragments-per-trace=300000");
            let index = r.build_index();
            let b = budget_diags(index.diagnostics.iter().map(|(_, d)| d));
            assert_eq!(b.len(), 1, "reject {reject}: {b:?}");
            assert_eq!(
                (b[0].0, b[0].1),
                (BudgetScope::Trace, BudgetResource::Fragments)
            );
            // 96,000 fragments per draw: the fourth draw reaches 384,000 >= 300,000.
            assert_eq!(index.draws.len(), 4, "reject {reject}");
            let written: u64 = index.draws.iter().map(|d| d.stats.fragments_written).sum();
            assert_eq!(written, if reject { 0 } else { 4 * 96_000 });
        }
    }

    /// The trace-level defaults grow with the input's size above 16 MiB; limits given
    /// explicitly do not.
    #[test]
    fn trace_budgets_scale_with_the_input_size() {
        use gpu_core::budget::{DEFAULT_TRACE_BUDGET, TRACE_BUDGET_BASE_BYTES};
        let small = draws_trace(1, 1, 3, false);
        let r = Replay::new(CiTrace::from_bytes(small.clone()).unwrap());
        assert_eq!(r.work_budget(), WorkBudget::default());
        // The same trace with 17 MiB of memory loaded: two 16 MiB units.
        let mut b =
            pica_cmd::citrace::CiTraceBuilder::from_trace(&mut CiTrace::from_bytes(small).unwrap())
                .unwrap();
        b.memory_load(0x2000_0000, &vec![1u8; 17 << 20]).unwrap();
        let big = b.build().unwrap();
        assert!(big.len() as u64 > TRACE_BUDGET_BASE_BYTES);
        let mut r = Replay::new(CiTrace::from_bytes(big).unwrap());
        assert_eq!(
            r.work_budget().trace.fragments,
            2 * DEFAULT_TRACE_BUDGET.fragments
        );
        assert_eq!(r.work_budget().frame, WorkBudget::default().frame);
        r.set_work_budget(WorkBudget::parse("draws-per-trace=7").unwrap());
        assert_eq!(r.work_budget().trace.draws, 7);
        assert_eq!(
            r.work_budget().trace.vertices,
            2 * DEFAULT_TRACE_BUDGET.vertices
        );
    }

    /// A chain of more distinct jumps than the loop detector remembers, ending in a jump back
    /// into the chain: an undetected loop, ended by the submission's writes budget with a
    /// diagnostic that says it loops and where.
    #[test]
    fn an_undetected_jump_loop_ends_at_the_submission_writes_budget() {
        const BASE: u32 = 0x2000_0000;
        let n = MAX_JUMPS_TRACKED as u32 + 500;
        let (bytes, slot) = jump_chain(BASE, n);
        let mut mem = PhysMem::new();
        mem.write(BASE, &bytes).unwrap();
        let mut gpu = Gpu::new();
        gpu.set_work_budget(WorkBudget::parse("writes-per-submission=100000").unwrap());
        let mut log = Diags::default();
        assert!(gpu.run_command_list(&mut mem, BASE, slot, &mut log));
        let b = budget_diags(log.0.iter());
        assert_eq!(b.len(), 1, "{:?}", log.0);
        let (scope, resource, detail) = &b[0];
        assert_eq!(
            (*scope, *resource),
            (BudgetScope::Submission, BudgetResource::Writes)
        );
        assert!(detail.contains("loops"), "{detail}");
        assert!(detail.contains("command list at PA 0x2"), "{detail}");
        assert_eq!(gpu.work.used(BudgetScope::Submission).writes, 100_000);
        // The next submission starts with a fresh submission budget: entering the loop at its
        // end, every jump of the cycle is tracked and the loop detector ends it.
        let mut log = Diags::default();
        assert!(gpu.run_command_list(&mut mem, BASE + (n - 1) * slot, slot, &mut log));
        assert!(budget_diags(log.0.iter()).is_empty(), "{:?}", log.0);
        assert!(log.0.iter().any(|d| d.detail.contains("command-list loop")));
        assert!(gpu.work.used(BudgetScope::Submission).writes < 1000);
    }

    /// The jump chain of [`an_undetected_jump_loop_ends_at_the_submission_writes_budget`] as
    /// bytes at `BASE`, with its first buffer's size.
    fn jump_chain(base: u32, n: u32) -> (Vec<u8>, u32) {
        const SLOT: u32 = 32;
        let mut bytes = Vec::new();
        for i in 0..n {
            let next = if i + 1 < n { i + 1 } else { n - 100 };
            let mut b = cmdlist::CmdListBuilder::new();
            b.write(0x238, SLOT / 8);
            b.write(0x23A, (base + next * SLOT) >> 3);
            b.write(0x23C, 1);
            let mut words = b.words().to_vec();
            words.resize((SLOT / 4) as usize, 0);
            bytes.extend(super::le(&words));
        }
        (bytes, SLOT)
    }

    /// Writes one input of every hostile class of issue 18 to the directory
    /// `$PICAVIEW_HOSTILE_OUT`, for measuring time and memory of the CLI on them by hand
    /// (`tests/fixtures/hostile/cli-limits.sh` runs every CLI command on them; the numbers are
    /// in the notes; no test asserts time): the budget classes of this module, and the
    /// parser classes of the sections above (a 4 MiB burst list, DVLBs listing one DVLE 100,000
    /// times or 8,000 distinct DVLEs, overlapping CiTrace sections, zero-vertex draws for the
    /// linter, draws of 2^20 vertices for `trace check`'s detail).
    #[test]
    #[ignore = "writes files for manual measurement"]
    fn write_hostile_budget_inputs() {
        let Some(dir) = std::env::var_os("PICAVIEW_HOSTILE_OUT") else {
            return;
        };
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("ffff_draws.ctf"),
            draws_trace(4, 4000, u32::MAX, false),
        )
        .unwrap();
        std::fs::write(dir.join("gs_nested.ctf"), draws_trace(4, 200, 64, true)).unwrap();
        // Enough frames that the trace-level budgets, not the frame ones, end the replay.
        std::fs::write(dir.join("gs_nested_40.ctf"), draws_trace(40, 200, 64, true)).unwrap();
        std::fs::write(
            dir.join("draws_many.ctf"),
            draws_trace(420, 10_000, 3, false),
        )
        .unwrap();
        std::fs::write(
            dir.join("fragments_written.ctf"),
            fullscreen_trace(80, 3000, false),
        )
        .unwrap();
        std::fs::write(
            dir.join("fragments_rejected.ctf"),
            fullscreen_trace(80, 3000, true),
        )
        .unwrap();
        std::fs::write(dir.join("frames1200.ctf"), draws_trace(1200, 6, 36, false)).unwrap();
        std::fs::write(
            dir.join("cube1200.ctf"),
            picaview_tests::scene::demos::cube_frames(1200).unwrap(),
        )
        .unwrap();
        let (chain, size) = jump_chain(0x2000_0000, MAX_JUMPS_TRACKED as u32 + 500);
        let mut b =
            pica_cmd::citrace::CiTraceBuilder::new(pica_cmd::citrace::InitialState::citra_sized());
        b.memory_load(0x2000_0000, &chain).unwrap();
        for _ in 0..4 {
            b.register_write(0x1040_18E0, size)
                .register_write(0x1040_18E8, 0x2000_0000 >> 3)
                .register_write(0x1040_18F0, 1);
            b.frame_marker();
        }
        std::fs::write(dir.join("jump_loop.ctf"), b.build().unwrap()).unwrap();
        std::fs::write(
            dir.join("zero_vertex_draws.ctf"),
            draws_trace(2, 3, 0, false),
        )
        .unwrap();
        // Engines outside the work budget: 1,000 display transfers of 4096x4096 RGBA8 (64 MiB
        // each way, the per-transfer cap) and 1,000 memory fills of all of VRAM (6 MiB), in 10
        // frames of stream register writes.
        std::fs::write(
            dir.join("transfers_max.ctf"),
            transfers_trace(4096, 1000, 100),
        )
        .unwrap();
        // One maximal transfer per frame: only the trace's transfer budget ends it.
        std::fs::write(
            dir.join("transfers_max_1pf.ctf"),
            transfers_trace(4096, 1000, 1),
        )
        .unwrap();
        let fills = engine_trace(
            &[
                (0x1040_0010, 0x1800_0000 >> 3),
                (0x1040_0014, 0x1860_0000 >> 3),
                (0x1040_0018, 0x1234_5678),
            ],
            (0x1040_001C, 0x201),
            1000,
            100,
        );
        std::fs::write(dir.join("fills_max.ctf"), fills).unwrap();
        std::fs::write(
            dir.join("draws_2p20_vertices.ctf"),
            draws_trace(1, 4, 1 << 20, false),
        )
        .unwrap();
        // Parser classes (built as in the tests above).
        let mut b = cmdlist::CmdListBuilder::new();
        let values: Vec<u32> = (0..256).collect();
        while b.len_bytes() < 4 << 20 {
            b.repeated(0x0C0, 0xF, &values).unwrap();
        }
        std::fs::write(dir.join("burst_4mib.bin"), super::le(b.words())).unwrap();
        let listed = vec![0usize; 100_000];
        std::fs::write(
            dir.join("dvle_listed_100000.shbin"),
            super::dvlb_with(&super::MOV_END, &[(0, 2)], &listed, 0x1002, None),
        )
        .unwrap();
        let mut program = vec![0x4C00_0000u32; 4095];
        program.push(0x8800_0000);
        let entries: Vec<(u32, u32)> = (0..4000u32).map(|k| (k, 4096)).collect();
        let listed: Vec<usize> = (0..4000).flat_map(|k| [k, k]).collect();
        std::fs::write(
            dir.join("dvle_8000_distinct.shbin"),
            super::dvlb_with(&program, &entries, &listed, 0x1002, None),
        )
        .unwrap();
        std::fs::write(
            dir.join("overlapping_sections.ctf"),
            super::overlapping_sections_trace(1 << 20, 0x1234_5678),
        )
        .unwrap();
    }

    /// The streaming index of a long capture holds no keyframe and the same records.
    #[test]
    fn streaming_index_holds_zero_keyframes() {
        let bytes = draws_trace(300, 1, 3, false);
        let mut r = replay_with(&bytes, "defaults");
        let streamed = r
            .build_index_streaming(&mut |_| true)
            .expect("not cancelled");
        assert_eq!(streamed.keyframes, 0);
        assert_eq!(streamed.frames.len(), 300);
        assert_eq!(streamed.draws.len(), 300);
        let full = r.build_index();
        assert!(full.keyframes > 0);
        assert_eq!(full.draws, streamed.draws);
        assert_eq!(full.frames, streamed.frames);
        r.build_index_streaming(&mut |_| true)
            .expect("not cancelled");
        // Seeks still work (from the start).
        assert!(r.seek(Target::AfterDraw(150), &mut ()));
        assert_eq!(r.position(), full.draws[150].after);
    }

    /// The index's own records count against the keyframe budget: with a budget a little over
    /// what 10,000 draw records take, fewer keyframes are kept than with the default, the
    /// keyframes and records together stay within it, the records are the same, and seeks are
    /// still exact.
    #[test]
    fn index_records_count_against_the_keyframe_budget() {
        let bytes = draws_trace(20, 500, 3, false);
        let mut r = replay_with(&bytes, "defaults");
        let roomy = r.build_index();
        assert_eq!(roomy.draws.len(), 10_000);
        let per_draw = std::mem::size_of::<gpu_core::replay::DrawRecord>() as u64;
        assert!(
            roomy.record_bytes >= 10_000 * per_draw,
            "{}",
            roomy.record_bytes
        );
        assert!(roomy.keyframes > 100, "{}", roomy.keyframes);
        let budget = roomy.record_bytes + roomy.keyframe_bytes / 8;
        r.set_keyframe_budget(budget);
        let tight = r.build_index();
        assert!(
            tight.keyframes > 1 && tight.keyframes < roomy.keyframes,
            "{} of {}",
            tight.keyframes,
            roomy.keyframes
        );
        assert!(tight.keyframe_bytes + tight.record_bytes <= budget);
        assert_eq!(tight.draws, roomy.draws);
        for m in [9_999u64, 17, 5_003] {
            assert!(r.seek(Target::AfterDraw(m), &mut ()));
            assert_eq!(r.position(), roomy.draws[m as usize].after);
        }
    }

    /// Seeks that restore a keyframe (or the start) keep the vertex-shader engine's compiled
    /// programs: a trace with one program compiles it once however often it is travelled
    /// through (a keyframe's clone of the state carries no compiled program; compiling the
    /// 4096-word code memory again on every seek was a fixed cost per seek and per fuzz input),
    /// and the states reached are those of a fresh replay.
    #[test]
    fn seeks_compile_each_program_once() {
        let bytes = draws_trace(40, 20, 3, false);
        let mut r = replay_with(&bytes, "defaults");
        let index = r.build_index();
        assert!(index.keyframes > 10, "{}", index.keyframes);
        let compiles = r.gpu().pipeline.vs_unit.stats().compiles;
        assert_eq!(compiles, 1);
        for m in [700u64, 3, 421, 0, 799, 255, 256] {
            assert!(r.seek(Target::AfterDraw(m), &mut ()));
            let mut fresh = replay_with(&bytes, "defaults");
            assert!(fresh.run_until(Target::AfterDraw(m), &mut ()));
            assert_eq!(r.position(), fresh.position());
            assert_eq!(
                r.gpu().pipeline.vs_unit.state,
                fresh.gpu().pipeline.vs_unit.state
            );
            assert_eq!(r.gpu().regs, fresh.gpu().regs);
        }
        r.rewind();
        assert!(r.run_until(Target::AfterDraw(10), &mut ()));
        assert_eq!(r.gpu().pipeline.vs_unit.stats().compiles, compiles);
    }
}
