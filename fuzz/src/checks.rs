//! The bodies of the fuzz targets: each takes arbitrary bytes, runs one parser and every
//! consumer of its result, and asserts what must hold for any input (no panic, and the
//! agreements noted per function). Shared by the cargo-fuzz targets (`fuzz/fuzz_targets/`) and
//! the stable regression tests (`tests/tests/hostile_inputs.rs`, which include this file).

use pica_cmd::citrace::CiTrace;
use pica_cmd::cmdlist::{
    ExtraParamWidth, ListChecker, ParseOptions, ReaderError, Writes, parse_reader, parse_with,
};
use shader_unit::asm::{AsmOptions, assemble_with};
use shader_unit::disasm::{disassemble_all, disassemble_all_to, disassemble_listing, raw_listing};
use shader_unit::dvlb::{Dvlb, ShaderFile, parse_shader_file};

/// DVLB/DVOJ parser, then the disassembler (streamed and in one piece, which must agree, and
/// per DVLE, whose address map must cover the program) and the raw listing.
pub fn dvlb(data: &[u8]) {
    let Ok(file) = parse_shader_file(data) else {
        return;
    };
    let dvlb = match file {
        ShaderFile::Dvlb(d) => d,
        ShaderFile::Dvoj(o) => o.to_dvlb(),
    };
    let all = disassemble_all(&dvlb);
    let mut streamed = Vec::new();
    assert!(disassemble_all_to(&dvlb, &mut streamed).is_ok());
    assert_eq!(
        all.as_bytes(),
        &streamed[..],
        "streamed disassembly differs"
    );
    let _ = raw_listing(&dvlb);
    for i in 0..dvlb.dvles.len().min(4) {
        let listing = disassemble_listing(&dvlb, i);
        assert!(listing.is_ok(), "DVLE {i} exists");
    }
}

/// The assembler on arbitrary text: up to four source files separated by NUL bytes, with and
/// without padding NOPs; whatever assembles must parse back as a DVLB and disassemble.
pub fn asm(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let names = ["a.v.pica", "b.g.pica", "c.v.pica", "d.g.pica"];
    let files: Vec<(&str, &str)> = text
        .split('\0')
        .take(4)
        .zip(names)
        .map(|(t, n)| (n, t))
        .collect();
    for auto_nop in [true, false] {
        if let Ok(asm) = assemble_with(&files, AsmOptions { auto_nop }) {
            let bytes = asm.to_shbin();
            let parsed = Dvlb::parse(&bytes);
            assert!(parsed.is_ok(), "the assembler's output parses: {parsed:?}");
            if let Ok(d) = parsed {
                let _ = disassemble_all(&d);
            }
        }
    }
}

/// Feeds a reader in small, odd-sized pieces so that section boundaries fall everywhere.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(buf.len()).min(self.1);
        let (head, rest) = self.0.split_at(n);
        buf.get_mut(..n).unwrap_or(&mut []).copy_from_slice(head);
        self.0 = rest;
        self.1 = self.1 % 13 + 1;
        Ok(n)
    }
}

/// The command-list decoder: the whole-list parse, the allocation-free write iterator and the
/// sectioned reader must give the same writes, diagnostics and error, and a parsed list must
/// re-encode to the input bytes (both header-count widths).
pub fn cmdlist(data: &[u8]) {
    for width in [ExtraParamWidth::Bits8, ExtraParamWidth::Bits11] {
        let options = ParseOptions {
            extra_param_width: width,
        };
        let whole = parse_with(data, options);
        let flat: Vec<_> = Writes::with_options(data, options).collect();
        let mut streamed = Vec::new();
        let mut diags = Vec::new();
        let mut checker = ListChecker::new(options);
        let result = parse_reader(Trickle(data, 7), options, |c| {
            checker.command(c, |d| diags.push(d));
            for w in c.writes() {
                checker.write(&w, |d| diags.push(d));
                streamed.push(w);
            }
            Ok(())
        });
        match (&whole, &result) {
            (Ok(list), Ok(summary)) => {
                assert_eq!(list.writes, streamed);
                ListChecker::finish(summary.len as u32, |d| diags.push(d));
                assert_eq!(list.diagnostics, diags);
                assert_eq!(list.encode(), data);
                assert!(flat.iter().all(Result::is_ok));
                assert_eq!(flat.len(), list.writes.len());
            }
            (Err(e), Err(ReaderError::List(s))) => {
                assert_eq!(e.partial.writes, streamed);
                assert_eq!((e.offset, e.kind), (s.offset, s.kind));
                assert!(flat.last().is_some_and(Result::is_err));
            }
            (w, r) => panic!("whole parse {w:?} but sectioned reader {r:?}"),
        }
    }
}

/// The CiTrace reader: any input either fails with a typed error or gives a trace whose
/// summaries work and which writes back to the same bytes.
pub fn citrace(data: &[u8]) {
    let Ok(mut trace) = CiTrace::from_bytes(data.to_vec()) else {
        return;
    };
    let _ = trace.stats();
    let _ = trace.submissions();
    let mut buf = [0u8; 64];
    let elements = trace.elements().len();
    let _ = trace.read_memory(elements, 0x1800_0000, &mut buf);
    let again = trace.to_bytes();
    assert!(
        again.as_deref().is_ok_and(|b| b == data),
        "round trip differs"
    );
}

/// Work budgets for whole-trace replays under the fuzzer: small, so that almost every input
/// finishes in milliseconds even in the instrumented build on a loaded machine (a few hundred
/// draws' worth of work), yet large enough that every small seed (`tests/data/fuzz/replay-seed-*`)
/// runs whole and reaches vertex loading, both shader units, clipping, rasterisation, texturing,
/// the fragment pipeline, memory fills and display transfers. A mutated input that asks for more
/// ends at a budget (which is itself a path worth fuzzing: the cut and its diagnostic).
pub const FUZZ_WORK_BUDGET: &str = "writes-per-trace=2^16,draws-per-trace=256,vertices-per-trace=2^14,shader-instructions-per-trace=2^18,fragments-per-trace=2^16";

/// The trace of a fuzz input with [`FUZZ_WORK_BUDGET`] set, or `None` when it does not parse.
fn budgeted_replay(data: &[u8]) -> Option<gpu_core::replay::Replay<Vec<u8>>> {
    let trace = CiTrace::from_bytes(data.to_vec()).ok()?;
    let budget = match gpu_core::budget::WorkBudget::parse(FUZZ_WORK_BUDGET) {
        Ok(b) => b,
        Err(e) => panic!("the fuzz budget parses: {e}"),
    };
    let mut replay = gpu_core::replay::Replay::new(trace);
    replay.set_work_budget(budget);
    Some(replay)
}

/// Whole-trace replay under [`FUZZ_WORK_BUDGET`]: any readable trace indexes to the end
/// (streaming, no keyframes: `trace info`'s pass) without panicking, and a screen decodes from
/// the final state: the top screen for inputs of even length, the bottom one for odd lengths
/// (both go through the same scan-out; decoding both for every input doubled the cost of a
/// typical input, whose replay is shorter than two instrumented scan-outs of 96,000 and
/// 76,800 pixels).
pub fn replay(data: &[u8]) {
    let Some(mut replay) = budgeted_replay(data) else {
        return;
    };
    let Some(index) = replay.build_index_streaming(&mut |_| true) else {
        panic!("an index pass that is never cancelled finishes");
    };
    assert_eq!(index.keyframes, 0);
    assert!(replay.at_end(), "the index pass runs to the end");
    let screen = if data.len().is_multiple_of(2) {
        gpu_core::lcd::Screen::Top
    } else {
        gpu_core::lcd::Screen::Bottom
    };
    let _ = replay.screen(screen);
}

/// The linter (`picaview trace check`'s core, [`gpu_core::lint::check`]) under
/// [`FUZZ_WORK_BUDGET`]: any readable trace is checked to the end without panicking, the
/// report is bounded and self-consistent, and it serialises to JSON (`trace check --json`).
pub fn linter(data: &[u8]) {
    let Some(mut replay) = budgeted_replay(data) else {
        return;
    };
    let report = gpu_core::lint::check(&mut replay);
    assert!(replay.at_end(), "the linter runs to the end");
    assert!(report.issues.len() <= gpu_core::lint::MAX_ISSUES);
    let counted: u64 = report.counts.values().sum();
    assert_eq!(
        counted,
        report.issues.len() as u64 + report.dropped,
        "every issue is counted once"
    );
    assert!(
        report.issues.iter().all(|i| i.frame <= report.frames),
        "issues lie in the frames seen"
    );
    assert!(
        report.issues.windows(2).all(|w| w[0].frame <= w[1].frame),
        "issues are in trace order"
    );
    let json = serde_json::to_string(&report);
    assert!(json.is_ok(), "the report serialises: {json:?}");
}
