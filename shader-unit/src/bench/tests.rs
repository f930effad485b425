// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Benchmark workload tests: the input generator, the vertex-0 outputs listed in
//! testdata/bench-workloads.md, and the N = 1,000,000 reference hashes (fast enough to run in
//! the normal test profile: about 1.5 s per mode at opt-level 1).

use super::*;
use crate::interp::{ExecConfig, Interpreter};

/// Expected vertex-0 outputs from the spec (6 decimals), `(register, value)`.
fn expected_vertex0(w: Workload) -> Vec<(usize, [f64; 4])> {
    match w {
        Workload::W1 => vec![
            (0, [-0.909981, -0.351632, 1.223609, 2.334934]),
            (1, [0.849584, 0.360441, 0.655820, 0.580256]),
            (2, [0.915335, 0.260251, 0.0, 1.0]),
        ],
        Workload::W2 => vec![
            (0, [-0.909981, -0.351632, 1.223609, 2.334934]),
            (1, [0.084958, 0.036044, 0.078698, 0.580256]),
            (3, [0.590115, -0.775741, 0.223586, 0.0]),
            (4, [-0.419962, -0.183302, -1.893283, 0.0]),
        ],
        Workload::W3 => vec![
            (0, [0.011710, -0.725312, 1.367882, 2.517574]),
            (1, [0.131795, 0.299399, 0.037779, 0.104419]),
            (2, [0.556369, 0.629396, 0.0, 0.0]),
            (3, [-0.202844, -0.447931, 0.517077, 1.0]),
        ],
    }
}

#[test]
fn vertex0_outputs_match_spec() {
    for w in Workload::ALL {
        let mut e = Interpreter::new(ExecConfig::default());
        let program = w.program();
        let uniforms = w.uniforms();
        let mut inputs = VertexBatch::new(1, w.input_mask());
        fill_inputs(w, 0, &mut inputs);
        let mut outputs = VertexBatch::new(1, 0xFFFF);
        let stats = e
            .run_batch(&program, &uniforms, 0, &inputs, &mut outputs)
            .unwrap();
        assert_eq!(
            stats.instructions,
            u64::from(w.spec().instructions_per_vertex),
            "{w:?}"
        );
        for (reg, want) in expected_vertex0(w) {
            let got = outputs.reg(reg).unwrap()[0];
            for c in 0..4 {
                assert!(
                    (f64::from(got[c]) - want[c]).abs() <= 5.1e-7,
                    "{w:?} o{reg}[{c}] = {} want {}",
                    got[c],
                    want[c]
                );
            }
        }
    }
}

#[test]
fn input_generator_is_exact() {
    // lowbias32 known values (computed independently with Python's arbitrary-precision ints).
    assert_eq!(lowbias32(0), 0);
    assert_eq!(lowbias32(1), 0x6889_90c0);
    assert_eq!(lowbias32(32 + 4 * 2 + 3), 0x6e6c_ff68);
    assert_eq!(
        uniform_sample(1, 2, 3),
        (0x6e6c_ff68u32 >> 8) as f32 / 16_777_216.0
    );
    // u() is a multiple of 2^-24 in [0, 1).
    for i in 0..1000 {
        let u = uniform_sample(i, 2, 3);
        assert!((0.0..1.0).contains(&u));
        assert_eq!((u * 16_777_216.0).fract(), 0.0);
    }
    let b = input_value(InputKind::BoneIdx, 7, 1);
    assert!(b.iter().all(|x| x % 3.0 == 0.0 && (0.0..=21.0).contains(x)));
    let wt = input_value(InputKind::Weights, 7, 2);
    assert!(wt.iter().all(|x| (0.125..0.375).contains(x)));
    assert_eq!(input_value(InputKind::Texcoord, 3, 0)[2..], [0.0, 1.0]);
    assert_eq!(Workload::parse("w2"), Some(Workload::W2));
    assert_eq!(Workload::parse("W3"), Some(Workload::W3));
    assert_eq!(Workload::parse("3"), Some(Workload::W3));
    assert_eq!(Workload::parse("W4"), None);
}

#[test]
fn batching_does_not_change_the_checksum() {
    for w in Workload::ALL {
        let runs: Vec<(u64, u64)> = [1u32, 7, 256, 5000]
            .iter()
            .map(|&b| {
                let mut e = Interpreter::new(ExecConfig::default());
                let r = run_workload(&mut e, w, 5000, b).unwrap();
                (r.checksum.hash(), r.checksum.fsum().to_bits())
            })
            .collect();
        assert!(runs.windows(2).all(|p| p[0] == p[1]), "{w:?}: {runs:?}");
    }
}

/// The reference hashes for N = 1,000,000 in both zero-handling modes: the hardware flush
/// (default) and plain IEEE. Measured: neither mode changes any hash or sum.
#[test]
fn reference_hashes_1m() {
    for flush in [true, false] {
        for w in Workload::ALL {
            let mut e = Interpreter::new(ExecConfig {
                flush,
                ..ExecConfig::default()
            });
            let r = run_workload(&mut e, w, 1_000_000, 4096).unwrap();
            let spec = w.spec();
            assert_eq!(
                r.hash_hex(),
                format!("{:016x}", spec.reference_hash),
                "{w:?} flush={flush}"
            );
            assert!(r.matches_reference());
            // The spec prints the sum with 17 significant digits.
            let sum = r.checksum.fsum();
            assert!(
                (sum - spec.reference_sum).abs() <= spec.reference_sum * 1e-15,
                "{w:?}: {sum}"
            );
            assert_eq!(
                r.instructions,
                1_000_000 * u64::from(spec.instructions_per_vertex)
            );
        }
    }
}
