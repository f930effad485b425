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

/// Work budgets for whole-trace replays under the fuzzer: small enough that every input
/// finishes far inside libFuzzer's 10 s timeout, large enough for every demo trace to run whole.
pub const FUZZ_WORK_BUDGET: &str = "writes-per-trace=2^22,draws-per-trace=2^12,vertices-per-trace=2^16,shader-instructions-per-trace=2^23,fragments-per-trace=2^22";

/// Whole-trace replay and the linter on a CiTrace, under [`FUZZ_WORK_BUDGET`]: any readable
/// trace lints and indexes (streaming, no keyframes) to the end without panicking, and both
/// passes see the same draws.
pub fn replay(data: &[u8]) {
    let Ok(trace) = CiTrace::from_bytes(data.to_vec()) else {
        return;
    };
    let budget = match gpu_core::budget::WorkBudget::parse(FUZZ_WORK_BUDGET) {
        Ok(b) => b,
        Err(e) => panic!("the fuzz budget parses: {e}"),
    };
    let mut replay = gpu_core::replay::Replay::new(trace);
    replay.set_work_budget(budget);
    let report = gpu_core::lint::check(&mut replay);
    assert!(report.issues.len() <= gpu_core::lint::MAX_ISSUES);
    let Some(index) = replay.build_index_streaming(&mut |_| true) else {
        panic!("an index pass that is never cancelled finishes");
    };
    assert_eq!(index.keyframes, 0);
    assert_eq!(index.draws.len() as u64, report.draws);
}
