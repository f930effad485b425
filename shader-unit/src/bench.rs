//! The shader benchmark workloads W1/W2/W3 of `testdata/bench-workloads.md`, exactly as
//! specified there: program words, operand descriptors, uniforms, the input generator and the
//! FNV-1a bit-sum checksum.
//!
//! Stage: benchmark/test harness around any [`ShaderEngine`]. Inputs: a workload, a vertex count
//! N and a batch size. Outputs: [`BenchResult`] (bit hash, f64 sum, timing). Registers read: none.
//!
//! Protocol (per the spec): vertices i = 0..N−1 run in order through one unit whose r/o/a0/aL/cmp
//! registers persist from vertex to vertex (all start at 0); only v0..v(n−1) are rewritten per
//! vertex. For every vertex and every output register r = 0..15 and lane c,
//! `bits[r][c] += u32bits(o_r.c)` (wrapping) and `sum[r][c] += f64(o_r.c)`. The bit hash is
//! FNV-1a-64 over the 256 little-endian bytes of `bits` (r-major, then x, y, z, w); the f64 sum
//! is `Σ_r Σ_c sum[r][c]` in the same order. Registers a workload never writes stay 0 and add
//! nothing, so only the written ones are folded.
//!
//! Timing covers shading and folding into `bits` (the spec's "timed loop"); generating inputs
//! and the f64 sum are outside it. With `batch` < N the inputs are generated `batch` vertices at
//! a time (cache-resident batches); `batch` = N streams all inputs from one large array.

use std::time::{Duration, Instant};

use crate::decode::Program;
use crate::interp::{ShaderEngine, Uniforms, Vec4, VertexBatch};

const W1_CODE: &[u32] = &[
    0x0802_0000,
    0x0802_1001,
    0x0802_2002,
    0x0802_3003,
    0x4C20_1004,
    0x4C40_2004,
    0x8800_0000,
];
const W1_OPDESCS: &[u32] = &[
    0x0D86_C368,
    0x0D86_C364,
    0x0D86_C362,
    0x0D86_C361,
    0x0D86_C36F,
];
const W1_FLOATS: &[(usize, [u32; 4])] = &[
    (0, [0x3F99_999A, 0x0000_0000, 0x3E99_999A, 0x3DCC_CCCD]),
    (1, [0x0000_0000, 0x3FC0_0000, 0xBE4C_CCCD, 0x3D4C_CCCD]),
    (2, [0x3DCC_CCCD, 0x3E4C_CCCD, 0xBF81_47AE, 0x4000_0000]),
    (3, [0x3D4C_CCCD, 0xBDCC_CCCD, 0xBF80_0000, 0x4040_0000]),
];
const W2_CODE: &[u32] = &[
    0x0802_0000,
    0x0802_1001,
    0x0802_2002,
    0x0802_3003,
    0x0602_4180,
    0x0602_5181,
    0x0602_6182,
    0x0621_0800,
    0x3E21_1004,
    0x2201_0885,
    0x0642_7800,
    0x0642_9801,
    0x0642_D802,
    0x3242_C906,
    0x2241_2907,
    0x2241_2907,
    0x2241_2907,
    0x2262_8908,
    0xF324_AA69,
    0x0262_B98A,
    0x2281_308A,
    0xE124_BA8B,
    0x4C20_100C,
    0x4C40_200A,
    0x4C61_000D,
    0x0882_F000,
    0x0883_0001,
    0x0883_1002,
    0x8800_0000,
];
const W2_OPDESCS: &[u32] = &[
    0x0D86_C368,
    0x0D86_C364,
    0x0D86_C362,
    0x0D86_C361,
    0x0D86_C008,
    0x0D80_036E,
    0x0D86_C00E,
    0x0DAA_9542,
    0x0D80_036F,
    0x0D86_CAAF,
    0x0D86_C36F,
    0x0D86_D54E,
    0x0D86_DFE1,
    0x0D86_C36E,
];
const W2_FLOATS: &[(usize, [u32; 4])] = &[
    (0, [0x3F99_999A, 0x0000_0000, 0x3E99_999A, 0x3DCC_CCCD]),
    (1, [0x0000_0000, 0x3FC0_0000, 0xBE4C_CCCD, 0x3D4C_CCCD]),
    (2, [0x3DCC_CCCD, 0x3E4C_CCCD, 0xBF81_47AE, 0x4000_0000]),
    (3, [0x3D4C_CCCD, 0xBDCC_CCCD, 0xBF80_0000, 0x4040_0000]),
    (4, [0x3F4C_CCCD, 0x0000_0000, 0x3F19_999A, 0x0000_0000]),
    (5, [0x0000_0000, 0x3F80_0000, 0x0000_0000, 0x0000_0000]),
    (6, [0xBF19_999A, 0x0000_0000, 0x3F4C_CCCD, 0x0000_0000]),
    (7, [0x3EF5_C28F, 0x3F19_999A, 0x3F23_D70A, 0x0000_0000]),
    (8, [0x3F66_6666, 0x3F4C_CCCD, 0x3F33_3333, 0x0000_0000]),
    (9, [0xBF19_999A, 0x0000_0000, 0x3F4C_CCCD, 0x0000_0000]),
    (10, [0x3E4C_CCCD, 0x3E99_999A, 0x3F00_0000, 0x0000_0000]),
    (11, [0x3DCC_CCCD, 0x3DCC_CCCD, 0x3DF5_C28F, 0x0000_0000]),
    (12, [0x0000_0000, 0x3F80_0000, 0x3F00_0000, 0x4000_0000]),
    (13, [0x3E87_AE14, 0x3EA9_78D5, 0x3F67_EF9E, 0x0000_0000]),
    (14, [0x3F00_0000, 0x3F00_0000, 0x3F00_0000, 0x0000_0000]),
    (15, [0x3F4C_CCCD, 0x0000_0000, 0x3F19_999A, 0x0000_0000]),
    (16, [0x0000_0000, 0x3F80_0000, 0x0000_0000, 0x0000_0000]),
    (17, [0xBF19_999A, 0x0000_0000, 0x3F4C_CCCD, 0xC040_0000]),
];
const W3_CODE: &[u32] = &[
    0x4E20_1000,
    0x4E40_2000,
    0x4E62_4000,
    0xA400_2800,
    0x4801_1001,
    0x0A0A_8002,
    0x0A0A_9003,
    0x0A0A_A004,
    0xF320_4A65,
    0x4E21_1006,
    0x4E41_2006,
    0x0802_0982,
    0x0802_1983,
    0x0802_2984,
    0x0802_3987,
    0x4C20_4000,
    0x9C00_4C01,
    0x9000_5402,
    0x4C61_3000,
    0x4C40_3000,
    0x8800_0000,
    0x0842_5182,
    0x0842_6183,
    0x8800_0000,
];
const W3_OPDESCS: &[u32] = &[
    0x0D86_C36F,
    0x0D86_C008,
    0x0D86_C368,
    0x0D86_C364,
    0x0D86_C362,
    0x0D80_036E,
    0x0D86_CD8F,
    0x0D86_C361,
];
const W3_FLOATS: &[(usize, [u32; 4])] = &[
    (0, [0x3F99_999A, 0x0000_0000, 0x3E99_999A, 0x3DCC_CCCD]),
    (1, [0x0000_0000, 0x3FC0_0000, 0xBE4C_CCCD, 0x3D4C_CCCD]),
    (2, [0x3DCC_CCCD, 0x3E4C_CCCD, 0xBF81_47AE, 0x4000_0000]),
    (3, [0x3D4C_CCCD, 0xBDCC_CCCD, 0xBF80_0000, 0x4040_0000]),
    (4, [0x0000_0000, 0x0000_0000, 0x0000_0000, 0x3F80_0000]),
    (5, [0x3F00_0000, 0x0000_0000, 0x0000_0000, 0x3E80_0000]),
    (6, [0x0000_0000, 0xBF00_0000, 0x0000_0000, 0x3F40_0000]),
    (8, [0x3F80_0000, 0x8000_0000, 0x0000_0000, 0xBEE0_0000]),
    (9, [0x0000_0000, 0x3F80_0000, 0x0000_0000, 0x0000_0000]),
    (10, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBE80_0000]),
    (11, [0x3F4C_CCCD, 0xBF19_999A, 0x0000_0000, 0xBEA0_0000]),
    (12, [0x3F19_999A, 0x3F4C_CCCD, 0x0000_0000, 0x3D80_0000]),
    (13, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBE60_0000]),
    (14, [0x3F19_999A, 0xBF4C_CCCD, 0x0000_0000, 0xBE40_0000]),
    (15, [0x3F4C_CCCD, 0x3F19_999A, 0x0000_0000, 0x3E00_0000]),
    (16, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBE40_0000]),
    (17, [0x0000_0000, 0xBF80_0000, 0x0000_0000, 0xBD80_0000]),
    (18, [0x3F80_0000, 0x0000_0000, 0x0000_0000, 0x3E40_0000]),
    (19, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBE20_0000]),
    (20, [0xBF19_999A, 0xBF4C_CCCD, 0x0000_0000, 0x3D80_0000]),
    (21, [0x3F4C_CCCD, 0xBF19_999A, 0x0000_0000, 0x3E80_0000]),
    (22, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBE00_0000]),
    (23, [0x3E8F_5C29, 0xBF75_C28F, 0x0000_0000, 0x3E40_0000]),
    (24, [0x3F75_C28F, 0x3E8F_5C29, 0x0000_0000, 0x3EA0_0000]),
    (25, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBDC0_0000]),
    (26, [0x3F75_C28F, 0xBE8F_5C29, 0x0000_0000, 0x3EA0_0000]),
    (27, [0x3E8F_5C29, 0x3F75_C28F, 0x0000_0000, 0x3EC0_0000]),
    (28, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBD80_0000]),
    (29, [0xBF4C_CCCD, 0x3F19_999A, 0x0000_0000, 0x3EE0_0000]),
    (30, [0xBF19_999A, 0xBF4C_CCCD, 0x0000_0000, 0x3EE0_0000]),
    (31, [0x0000_0000, 0x0000_0000, 0x3F80_0000, 0xBD00_0000]),
];

/// One of the three benchmark workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Workload {
    /// "transform": 4x4 MVP + pass-through colour and texcoord (7 instructions per vertex).
    W1,
    /// "lit": W1 + normal matrix, RSQ normalise, 2 diffuse lights, Blinn specular (29).
    W2,
    /// "skinned+loop": 4-bone skinning in a LOOP with MOVA-relative reads, IFU + CALL (43).
    W3,
}

/// How one input register is generated from the vertex index (all arithmetic in f32).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// (2u0 − 1, 2u1 − 1, 2u2 − 1, 1).
    Pos,
    /// (u0, u1, u2, u3).
    Color,
    /// (u0, u1, 0, 1).
    Texcoord,
    /// (2u0 − 1, 2u1 − 1, 2u2 − 1, 0).
    Normal,
    /// (3⌊8u0⌋, 3⌊8u1⌋, 3⌊8u2⌋, 3⌊8u3⌋).
    BoneIdx,
    /// (0.125 + 0.25u0, …, 0.125 + 0.25u3).
    Weights,
}

/// The complete definition of a workload.
#[derive(Clone, Copy, Debug)]
pub struct WorkloadSpec {
    /// Name ("W1", …).
    pub name: &'static str,
    /// Program words (entry point 0).
    pub code: &'static [u32],
    /// Operand descriptors.
    pub opdescs: &'static [u32],
    /// Float uniforms `(index, [x, y, z, w] as f32 bits)`; unlisted ones are 0.
    pub floats: &'static [(usize, [u32; 4])],
    /// Integer uniforms i0–i3.
    pub ints: [[u8; 4]; 4],
    /// Bool uniforms (bit n = bn).
    pub bools: u16,
    /// Input kind of v0, v1, ….
    pub inputs: &'static [InputKind],
    /// Output registers the program writes (bit n = on).
    pub outputs: u16,
    /// Instructions executed per vertex.
    pub instructions_per_vertex: u32,
    /// Reference bit hash for N = 1,000,000.
    pub reference_hash: u64,
    /// Reference f64 sum for N = 1,000,000 (as printed in the spec).
    pub reference_sum: f64,
}

use InputKind as K;

const W1_SPEC: WorkloadSpec = WorkloadSpec {
    name: "W1",
    code: W1_CODE,
    opdescs: W1_OPDESCS,
    floats: W1_FLOATS,
    ints: [[0; 4]; 4],
    bools: 0,
    inputs: &[K::Pos, K::Color, K::Texcoord],
    outputs: 0b111,
    instructions_per_vertex: 7,
    reference_hash: 0x5a38_a011_86c9_2cf3,
    reference_sum: 9_148_429.529_455_347,
};

const W2_SPEC: WorkloadSpec = WorkloadSpec {
    name: "W2",
    code: W2_CODE,
    opdescs: W2_OPDESCS,
    floats: W2_FLOATS,
    ints: [[0; 4]; 4],
    bools: 0,
    inputs: &[K::Pos, K::Color, K::Texcoord, K::Normal],
    outputs: 0b1_1111,
    instructions_per_vertex: 29,
    reference_hash: 0x9801_f3bc_75ec_61ea,
    reference_sum: 5_312_169.426_713_994, // spec prints 5312169.4267139938 (same f64)
};

const W3_SPEC: WorkloadSpec = WorkloadSpec {
    name: "W3",
    code: W3_CODE,
    opdescs: W3_OPDESCS,
    floats: W3_FLOATS,
    ints: [[3, 0, 1, 0], [0; 4], [0; 4], [0; 4]],
    bools: 0x0001,
    inputs: &[K::Pos, K::BoneIdx, K::Weights, K::Texcoord, K::Color],
    outputs: 0b1111,
    instructions_per_vertex: 43,
    reference_hash: 0xb13d_72ef_2f73_5d50,
    reference_sum: 9_847_483.916_908_333, // spec prints 9847483.9169083331 (same f64)
};

impl Workload {
    /// All workloads.
    pub const ALL: [Workload; 3] = [Workload::W1, Workload::W2, Workload::W3];

    /// The workload's definition.
    pub fn spec(self) -> &'static WorkloadSpec {
        match self {
            Workload::W1 => &W1_SPEC,
            Workload::W2 => &W2_SPEC,
            Workload::W3 => &W3_SPEC,
        }
    }

    /// Parses "W1"/"w1"/"1" etc.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_uppercase().trim_start_matches('W') {
            "1" => Some(Workload::W1),
            "2" => Some(Workload::W2),
            "3" => Some(Workload::W3),
            _ => None,
        }
    }

    /// The decoded program.
    pub fn program(self) -> Program {
        let s = self.spec();
        Program::new(s.code, s.opdescs)
    }

    /// The uniforms.
    pub fn uniforms(self) -> Uniforms {
        let s = self.spec();
        let mut u = Uniforms::default();
        for &(i, bits) in s.floats {
            if let Some(c) = u.f.get_mut(i) {
                *c = bits.map(f32::from_bits);
            }
        }
        u.i = s.ints;
        u.set_bools(u32::from(s.bools));
        u
    }

    /// Bit mask of the input registers v0..v(n−1).
    pub fn input_mask(self) -> u16 {
        ((1u32 << self.spec().inputs.len()) - 1) as u16
    }
}

/// The "lowbias32" integer hash of the input generator (all operations wrapping).
pub const fn lowbias32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// `u(i, a, c) = f32(lowbias32(i·32 + a·4 + c) >> 8) · 2^−24`, in [0, 1).
pub fn uniform_sample(i: u32, a: u32, c: u32) -> f32 {
    let h = lowbias32(i.wrapping_mul(32).wrapping_add(a * 4).wrapping_add(c));
    (h >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// The value of input register `a` (generated as `kind`) for vertex `i`.
pub fn input_value(kind: InputKind, i: u32, a: u32) -> Vec4 {
    let u = [0, 1, 2, 3].map(|c| uniform_sample(i, a, c));
    match kind {
        InputKind::Pos => [2.0 * u[0] - 1.0, 2.0 * u[1] - 1.0, 2.0 * u[2] - 1.0, 1.0],
        InputKind::Color => u,
        InputKind::Texcoord => [u[0], u[1], 0.0, 1.0],
        InputKind::Normal => [2.0 * u[0] - 1.0, 2.0 * u[1] - 1.0, 2.0 * u[2] - 1.0, 0.0],
        InputKind::BoneIdx => u.map(|x| 3.0 * (8.0 * x).floor()),
        InputKind::Weights => u.map(|x| 0.125 + 0.25 * x),
    }
}

/// Fills `batch` (which must carry the workload's input registers) with vertices
/// `first .. first + batch.len()`.
pub fn fill_inputs(workload: Workload, first: u32, batch: &mut VertexBatch) {
    for (a, &kind) in workload.spec().inputs.iter().enumerate() {
        if let Some(reg) = batch.reg_mut(a) {
            for (k, v) in reg.iter_mut().enumerate() {
                *v = input_value(kind, first.wrapping_add(k as u32), a as u32);
            }
        }
    }
}

/// The running checksum of the protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct Checksum {
    /// `bits[r][c]`: wrapping sum of the f32 bit patterns.
    pub bits: [[u32; 4]; 16],
    /// `sum[r][c]`: f64 sums.
    pub sum: [[f64; 4]; 16],
}

impl Default for Checksum {
    fn default() -> Self {
        Self {
            bits: [[0; 4]; 16],
            sum: [[0.0; 4]; 16],
        }
    }
}

impl Checksum {
    /// Adds every vertex of `outputs` (a batch carrying the written output registers) to `bits`.
    #[inline]
    ///
    /// The loop is compiled for the CPU's best instruction-set level (as the fast engine's lane
    /// loops, see [`crate::fast::Simd`]); the result does not depend on it.
    pub fn fold_bits(&mut self, outputs: &VertexBatch) {
        crate::fast::fold_bits_dispatch(&mut self.bits, outputs);
    }
}

/// The body of [`Checksum::fold_bits`], inlined into one copy per instruction-set level.
#[inline(always)]
pub(crate) fn fold_bits_body(bits: &mut [[u32; 4]; 16], outputs: &VertexBatch) {
    for (r, acc) in bits.iter_mut().enumerate() {
        if let Some(vs) = outputs.reg(r) {
            // Four vertices per step into 16 independent lanes (lane 4·j + c holds component
            // c of every fourth vertex), so the wrapping adds vectorise and do not form one
            // long dependency chain; the lanes are folded back per component at the end.
            // Wrapping addition is associative and commutative: the result is the same.
            let mut wide = [0u32; 16];
            let blocks = vs.chunks_exact(4);
            let rest = blocks.remainder();
            for b in blocks {
                for (j, v) in b.iter().enumerate() {
                    for c in 0..4 {
                        wide[j * 4 + c] = wide[j * 4 + c].wrapping_add(v[c].to_bits());
                    }
                }
            }
            for j in 0..4 {
                for c in 0..4 {
                    acc[c] = acc[c].wrapping_add(wide[j * 4 + c]);
                }
            }
            for v in rest {
                for c in 0..4 {
                    acc[c] = acc[c].wrapping_add(v[c].to_bits());
                }
            }
        }
    }
}

impl Checksum {
    /// Adds every vertex of `outputs` to the f64 sums (vertex order preserved per lane).
    pub fn fold_sum(&mut self, outputs: &VertexBatch) {
        for r in 0..16 {
            if let Some(vs) = outputs.reg(r) {
                let acc = &mut self.sum[r];
                for v in vs {
                    for c in 0..4 {
                        acc[c] += f64::from(v[c]);
                    }
                }
            }
        }
    }

    /// FNV-1a-64 over the 256 bytes of `bits`.
    pub fn hash(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in self.bits.iter().flatten().flat_map(|w| w.to_le_bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
    }

    /// `Σ_r Σ_c sum[r][c]`.
    pub fn fsum(&self) -> f64 {
        self.sum.iter().flatten().sum()
    }
}

/// Result of a benchmark run.
#[derive(Clone, Debug)]
pub struct BenchResult {
    /// Workload run.
    pub workload: Workload,
    /// Vertices shaded.
    pub vertices: u32,
    /// Batch size used.
    pub batch: u32,
    /// Time spent shading and folding bits (the timed loop).
    pub elapsed: Duration,
    /// The checksum.
    pub checksum: Checksum,
    /// Instructions executed in total.
    pub instructions: u64,
}

impl BenchResult {
    /// Million vertices per second of the timed loop.
    pub fn mvertices_per_sec(&self) -> f64 {
        let s = self.elapsed.as_secs_f64();
        if s > 0.0 {
            f64::from(self.vertices) / s / 1e6
        } else {
            f64::INFINITY
        }
    }

    /// The bit hash as 16 lowercase hex digits.
    pub fn hash_hex(&self) -> String {
        format!("{:016x}", self.checksum.hash())
    }

    /// Whether this is an N = 1,000,000 run whose hash equals the reference.
    pub fn matches_reference(&self) -> bool {
        self.vertices == 1_000_000 && self.checksum.hash() == self.workload.spec().reference_hash
    }
}

/// Why a benchmark run failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BenchError {
    /// The engine reported an error.
    #[error("engine failed at vertex {vertex}: {error}")]
    Engine {
        /// Global vertex index.
        vertex: u64,
        /// The engine's error.
        error: crate::interp::ExecError,
    },
}

/// Writes every page of a freshly allocated output batch before timing, so the timed loop does
/// not pay the kernel's first-touch page faults (the zeroed allocation maps pages lazily: a
/// streamed 1M-vertex batch has ~12k of them per 48 MB). The inputs are written by
/// [`fill_inputs`] before timing already. `black_box` keeps the store from being elided as a
/// write of zeros into zeroed memory.
fn touch(batch: &mut VertexBatch) {
    for r in 0..16 {
        if let Some(v) = batch.reg_mut(r) {
            v.fill(std::hint::black_box([0.0; 4]));
        }
    }
}

/// Runs `vertices` vertices of `workload` through `engine` in batches of `batch` vertices
/// (`batch` is clamped to 1..=vertices). The engine's unit state should start zeroed.
pub fn run_workload<E: ShaderEngine>(
    engine: &mut E,
    workload: Workload,
    vertices: u32,
    batch: u32,
) -> Result<BenchResult, BenchError> {
    let program = workload.program();
    let uniforms = workload.uniforms();
    let batch = batch.clamp(1, vertices.max(1));
    let spec = workload.spec();
    let mut inputs = VertexBatch::new(batch as usize, workload.input_mask());
    let mut outputs = VertexBatch::new(batch as usize, spec.outputs);
    touch(&mut outputs);
    let mut checksum = Checksum::default();
    let mut elapsed = Duration::ZERO;
    let mut instructions = 0u64;
    let mut first = 0u32;
    while first < vertices {
        let n = batch.min(vertices - first);
        if n != batch {
            inputs = VertexBatch::new(n as usize, workload.input_mask());
            outputs = VertexBatch::new(n as usize, spec.outputs);
            touch(&mut outputs);
        }
        fill_inputs(workload, first, &mut inputs);
        let t = Instant::now();
        let stats = engine
            .run_batch(&program, &uniforms, 0, &inputs, &mut outputs)
            .map_err(|e| BenchError::Engine {
                vertex: u64::from(first) + e.vertex as u64,
                error: e.error,
            })?;
        checksum.fold_bits(&outputs);
        elapsed += t.elapsed();
        instructions += stats.instructions;
        checksum.fold_sum(&outputs);
        first += n;
    }
    Ok(BenchResult {
        workload,
        vertices,
        batch,
        elapsed,
        checksum,
        instructions,
    })
}

#[cfg(test)]
mod tests;
