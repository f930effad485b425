// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Interpreter tests: every opcode, every case of testdata/hw-expectations.md, the emulator test
//! vectors of pica-core.md §5.9, control flow, geometry-shader emission, tracing, batches, and a
//! fuzz-style property test.
//!
//! Shaders are written with the tiny builder below; it goes through `encode_program` and
//! `Program::new`, so every test also exercises the encoder and the decoder.

use proptest::prelude::*;

use super::*;
use crate::decode::{
    BinaryOp as B, CmpOp, Cond, CondOp, Dst, DstReg, RelAddr, Src, SrcReg, UnaryOp as U,
};
use crate::decode::{Program, encode_program};

// ----- builder -----

fn v(i: u8) -> Src {
    Src::plain(SrcReg::Input(i))
}
fn r(i: u8) -> Src {
    Src::plain(SrcReg::Temp(i))
}
fn c(i: u8) -> Src {
    Src::plain(SrcReg::Const(i))
}

trait SrcExt {
    fn sw(self, s: &str) -> Src;
    fn neg(self) -> Src;
    fn rel(self, a: RelAddr) -> Src;
}

impl SrcExt for Src {
    fn sw(mut self, s: &str) -> Src {
        let comp = |ch: u8| match ch {
            b'x' => 0,
            b'y' => 1,
            b'z' => 2,
            _ => 3,
        };
        let b = s.as_bytes();
        // picasso-style: a short swizzle repeats its last component.
        for lane in 0..4 {
            self.swizzle[lane] = comp(*b.get(lane).or(b.last()).unwrap_or(&b'x'));
        }
        self
    }
    fn neg(mut self) -> Src {
        self.negate = !self.negate;
        self
    }
    fn rel(mut self, a: RelAddr) -> Src {
        self.rel = a;
        self
    }
}

fn mask(m: &str) -> u8 {
    m.bytes().fold(0, |acc, ch| {
        acc | match ch {
            b'x' => 8,
            b'y' => 4,
            b'z' => 2,
            _ => 1,
        }
    })
}
fn o(i: u8, m: &str) -> Dst {
    Dst {
        reg: DstReg::Output(i),
        mask: mask(m),
    }
}
fn rd(i: u8, m: &str) -> Dst {
    Dst {
        reg: DstReg::Temp(i),
        mask: mask(m),
    }
}

fn bin(op: B, dst: Dst, a: Src, b: Src) -> Instr {
    Instr::Binary {
        op,
        dst,
        src1: a,
        src2: b,
        inverted: false,
        desc: 0,
    }
}
fn bini(op: B, dst: Dst, a: Src, b: Src) -> Instr {
    Instr::Binary {
        op,
        dst,
        src1: a,
        src2: b,
        inverted: true,
        desc: 0,
    }
}
fn un(op: U, dst: Dst, a: Src) -> Instr {
    Instr::Unary {
        op,
        dst,
        src: a,
        desc: 0,
    }
}
fn mov(dst: Dst, a: Src) -> Instr {
    un(U::Mov, dst, a)
}
fn mad(dst: Dst, a: Src, b: Src, cc: Src) -> Instr {
    Instr::Mad {
        dst,
        src1: a,
        src2: b,
        src3: cc,
        inverted: false,
        desc: 0,
    }
}
fn madi(dst: Dst, a: Src, b: Src, cc: Src) -> Instr {
    Instr::Mad {
        dst,
        src1: a,
        src2: b,
        src3: cc,
        inverted: true,
        desc: 0,
    }
}
fn mova(a: Src, m: &str) -> Instr {
    Instr::Mova {
        src: a,
        mask: mask(m),
        dst_raw: 0,
        desc: 0,
    }
}
fn cmp(a: Src, x: CmpOp, y: CmpOp, b: Src) -> Instr {
    Instr::Cmp {
        src1: a,
        src2: b,
        op_x: x,
        op_y: y,
        desc: 0,
    }
}
fn cond(op: CondOp, ref_x: bool, ref_y: bool) -> Cond {
    Cond { op, ref_x, ref_y }
}
const END: Instr = Instr::End;
const NOP: Instr = Instr::Nop;

/// Assigns a fresh operand-descriptor slot to every instruction that has one, encodes, decodes.
fn build(instrs: &[Instr]) -> Program {
    let mut next = 0u8;
    let with_desc: Vec<Instr> = instrs
        .iter()
        .map(|i| {
            let mut i = *i;
            let slot = match &mut i {
                Instr::Binary { desc, .. }
                | Instr::Unary { desc, .. }
                | Instr::Mova { desc, .. }
                | Instr::Cmp { desc, .. }
                | Instr::Mad { desc, .. } => Some(desc),
                _ => None,
            };
            if let Some(d) = slot {
                *d = next;
                next += 1;
            }
            i
        })
        .collect();
    let (code, descs) = encode_program(&with_desc).expect("test program encodes");
    let p = Program::new(&code, &descs);
    assert_eq!(
        p.instrs(),
        &with_desc[..],
        "encode/decode round trip of the test program"
    );
    p
}

struct Run {
    state: UnitState,
    result: Result<RunStats, ExecError>,
}

fn run_cfg(prog: &[Instr], inputs: &[Vec4], u: &Uniforms, config: ExecConfig) -> Run {
    let p = build(prog);
    let mut state = UnitState::default();
    for (i, x) in inputs.iter().enumerate() {
        state.inputs[i] = *x;
    }
    let result = run(&p, u, &mut state, 0, &config, &mut (), &mut ());
    Run { state, result }
}

fn run_ok(prog: &[Instr], inputs: &[Vec4], u: &Uniforms) -> UnitState {
    let r = run_cfg(prog, inputs, u, ExecConfig::default());
    r.result.expect("program runs to END");
    r.state
}

/// Runs `prog` in both flush modes and returns o0 from each (asserting success).
fn o0_both(prog: &[Instr], inputs: &[Vec4], u: &Uniforms) -> [Vec4; 2] {
    [false, true].map(|flush| {
        let r = run_cfg(
            prog,
            inputs,
            u,
            ExecConfig {
                flush,
                ..ExecConfig::default()
            },
        );
        r.result.expect("program runs to END");
        r.state.outputs[0]
    })
}

fn x(v: f32) -> Vec4 {
    [v, 0.0, 0.0, 0.0]
}
fn splat(v: f32) -> Vec4 {
    [v; 4]
}

const INF: f32 = f32::INFINITY;
const NAN: f32 = f32::NAN;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Class {
    PosInf,
    NegInf,
    Nan,
    Zero,
    One,
    OtherFinite,
}

fn classify(v: f32) -> Class {
    if v.is_nan() {
        Class::Nan
    } else if v == INF {
        Class::PosInf
    } else if v == -INF {
        Class::NegInf
    } else if v == 0.0 {
        Class::Zero
    } else if v == 1.0 {
        Class::One
    } else {
        Class::OtherFinite
    }
}

// ----- testdata/hw-expectations.md: all 41 hardware cases -----

#[test]
fn hw_expectations_fp_tests() {
    use Class::*;
    let u = Uniforms::default();
    let one = |op| vec![un(op, o(0, "xyzw"), v(0).sw("x")), END];
    let two = |op| vec![bin(op, o(0, "xyzw"), v(0), v(1)), END];
    let two_i = |op| vec![bini(op, o(0, "xyzw"), v(0), v(1)), END];
    #[allow(clippy::type_complexity)]
    let cases: Vec<(u32, Vec<Instr>, Vec<Vec4>, Class)> = vec![
        (0, one(U::Rcp), vec![x(0.0)], PosInf),
        (1, one(U::Rcp), vec![x(INF)], Zero),
        (2, one(U::Rcp), vec![x(NAN)], Nan),
        (3, one(U::Rsq), vec![x(0.0)], PosInf),
        (4, one(U::Rsq), vec![x(1.0)], One),
        (5, one(U::Rsq), vec![x(-1.0)], Nan),
        (6, one(U::Rsq), vec![x(INF)], Zero),
        (7, one(U::Rsq), vec![x(-INF)], Nan),
        (8, one(U::Rsq), vec![x(NAN)], Nan),
        (9, two(B::Max), vec![x(0.0), x(INF)], PosInf),
        // Case 10: the sources disagree; we follow alu::MAX_INF_RULE (StrictCompare -> 0).
        (10, two(B::Max), vec![x(0.0), x(-INF)], Zero),
        (11, two(B::Max), vec![x(0.0), x(NAN)], Nan),
        (12, two(B::Max), vec![x(NAN), x(0.0)], Zero),
        (13, two(B::Max), vec![x(-INF), x(INF)], PosInf),
        (14, two(B::Min), vec![x(0.0), x(INF)], Zero),
        (15, two(B::Min), vec![x(0.0), x(-INF)], NegInf),
        (16, two(B::Min), vec![x(0.0), x(NAN)], Nan),
        (17, two(B::Min), vec![x(NAN), x(0.0)], Zero),
        (18, two(B::Min), vec![x(-INF), x(INF)], NegInf),
        (
            19,
            vec![bin(B::Add, o(0, "xyzw"), v(0), v(1).neg()), END],
            vec![x(INF), x(INF)],
            Nan,
        ),
        (20, two(B::Mul), vec![x(INF), x(0.0)], Zero),
        (21, two(B::Mul), vec![x(0.0), x(INF)], Zero),
        (22, two(B::Mul), vec![x(NAN), x(0.0)], Nan),
        (23, two(B::Mul), vec![x(0.0), x(NAN)], Nan),
        (
            24,
            vec![mad(o(0, "xyzw"), v(0), v(1), v(2)), END],
            vec![x(INF), x(0.0), x(1.0)],
            One,
        ),
        (
            25,
            two(B::Dp4),
            vec![[0.5, 1.25, -2.0, 3.0], [1.5, 0.25, 0.75, -0.5]],
            OtherFinite,
        ),
        (
            26,
            two(B::Dp3),
            vec![[INF, 0.0, 2.0, 0.0], [0.0, INF, 0.0, 5.0]],
            Zero,
        ),
        (
            27,
            two(B::Dph),
            vec![[INF, 0.0, 0.0, 9.0], [0.0, 3.0, INF, 1.0]],
            One,
        ),
        (28, two(B::Sge), vec![x(0.0), x(NAN)], Zero),
        (29, two(B::Sge), vec![x(NAN), x(0.0)], Zero),
        (30, two_i(B::Sge), vec![x(0.0), x(NAN)], Zero),
        (31, two_i(B::Sge), vec![x(NAN), x(0.0)], Zero),
        (32, two(B::Slt), vec![x(0.0), x(NAN)], Zero),
        (33, two(B::Slt), vec![x(NAN), x(0.0)], Zero),
        (34, two_i(B::Slt), vec![x(0.0), x(NAN)], Zero),
        (35, two_i(B::Slt), vec![x(NAN), x(0.0)], Zero),
        (
            36,
            vec![
                un(U::Flr, rd(0, "xyzw"), v(0)),
                mov(o(0, "xyzw"), r(0).neg()),
                END,
            ],
            vec![x(-0.1)],
            One,
        ),
        (
            37,
            vec![
                un(U::Rcp, rd(0, "xyzw"), v(0).sw("x")),
                un(U::Rsq, o(0, "xyzw"), r(0).sw("x")),
                END,
            ],
            vec![x(-INF)],
            PosInf,
        ),
        (38, one(U::Ex2), vec![x(-INF)], Zero),
        (
            39,
            vec![
                un(U::Rcp, rd(0, "xyzw"), v(0).sw("x")),
                un(U::Lg2, o(0, "xyzw"), r(0).sw("x")),
                END,
            ],
            vec![x(-INF)],
            NegInf,
        ),
        (40, one(U::Lg2), vec![x(-1.0)], Nan),
    ];
    assert_eq!(cases.len(), 41);
    for (n, prog, inputs, expected) in cases {
        for (mode, o0) in o0_both(&prog, &inputs, &u).iter().enumerate() {
            assert_eq!(
                classify(o0[0]),
                expected,
                "fp-test case {n} (flush={}): got {:?}",
                mode == 1,
                o0[0]
            );
        }
    }
}

#[test]
fn hw_no_negative_zero_in_flush_mode() {
    let u = Uniforms::default();
    // mul(1, -0) and mov(-(+0)) give -0 in IEEE, +0 on hardware.
    let prog = [
        bin(B::Mul, o(0, "x"), v(0), v(1)),
        mov(o(1, "xyzw"), v(2).neg()),
        END,
    ];
    let inputs = [x(1.0), x(-0.0), splat(0.0)];
    let hw = run_cfg(&prog, &inputs, &u, ExecConfig::default()).state;
    assert_eq!(hw.outputs[0][0].to_bits(), 0);
    assert!(hw.outputs[1].iter().all(|f| f.to_bits() == 0));
    let ieee = run_cfg(
        &prog,
        &inputs,
        &u,
        ExecConfig {
            flush: false,
            ..ExecConfig::default()
        },
    )
    .state;
    assert_eq!(ieee.outputs[0][0].to_bits(), 0x8000_0000);
    // [3DB]: 1.0 * 0.5 repeated 63 times compares equal to zero (2^-63 flushes)...
    let mut halve = vec![mov(rd(0, "xyzw"), v(0))];
    halve.extend(std::iter::repeat_n(
        bin(B::Mul, rd(0, "xyzw"), r(0), v(1)),
        63,
    ));
    halve.push(mov(o(0, "xyzw"), r(0)));
    halve.push(END);
    let s = run_cfg(&halve, &[splat(1.0), splat(0.5)], &u, ExecConfig::default()).state;
    assert_eq!(s.outputs[0][0], 0.0);
    // ...but 62 times does not (2^-62 is the smallest normal).
    halve.remove(1);
    let s = run_cfg(&halve, &[splat(1.0), splat(0.5)], &u, ExecConfig::default()).state;
    assert_eq!(s.outputs[0][0], alu::F24_MIN_NORMAL);
    // CMP does not flush: a subnormal compares unequal to 0.
    let tiny = alu::F24_MIN_NORMAL / 2.0;
    let prog = [cmp(v(0), CmpOp::Eq, CmpOp::Eq, v(1)), END];
    let s = run_cfg(&prog, &[splat(tiny), splat(0.0)], &u, ExecConfig::default()).state;
    assert_eq!(s.cmp, [false, false]);
}

#[test]
fn hw_ex2_lg2_broadcast_src_x() {
    let u = Uniforms::default();
    // aroulin ex2-tests: colour (0, -100, -100) through ex2 gives white.
    let s = run_ok(
        &[un(U::Ex2, o(0, "xyz"), v(0)), END],
        &[[0.0, -100.0, -100.0, 0.0]],
        &u,
    );
    assert_eq!(&s.outputs[0][..3], &[1.0, 1.0, 1.0]);
    // lg2-tests: (2, 1, 1) through lg2 gives white.
    let s = run_ok(
        &[un(U::Lg2, o(0, "xyz"), v(0)), END],
        &[[2.0, 1.0, 1.0, 0.0]],
        &u,
    );
    assert_eq!(&s.outputs[0][..3], &[1.0, 1.0, 1.0]);
    // The swizzle decides what "x" is.
    let s = run_ok(
        &[un(U::Ex2, o(0, "xyzw"), v(0).sw("wzyx")), END],
        &[[0.0, 0.0, 0.0, 3.0]],
        &u,
    );
    assert_eq!(s.outputs[0], splat(8.0));
}

#[test]
fn hw_sgei_slt_slti_triangle_semantics() {
    let u = Uniforms::default();
    // SGEI compares src1 (5-bit operand) >= src2 (7-bit operand, here a uniform).
    let mut uu = u.clone();
    uu.f[3] = [0.5, 0.5, 0.5, 0.5];
    let prog = [
        bini(B::Sge, o(0, "xyzw"), v(0), c(3)),
        bini(B::Slt, o(1, "xyzw"), v(0), c(3)),
        END,
    ];
    let s = run_ok(&prog, &[[1.0, 0.0, 0.5, 0.25]], &uu);
    assert_eq!(s.outputs[0], [1.0, 0.0, 1.0, 0.0]);
    assert_eq!(s.outputs[1], [0.0, 1.0, 0.0, 1.0]);
    let prog = [bin(B::Slt, o(0, "xyzw"), c(3), v(0)), END];
    let s = run_ok(&prog, &[[1.0, 0.0, 0.5, 0.25]], &uu);
    assert_eq!(s.outputs[0], [1.0, 0.0, 0.0, 0.0]);
}

// ----- pica-core.md §5.9 emulator vectors ([CL], [P], later fork) -----

fn check_bin(op: B, cases: &[(f32, f32, f32)]) {
    let u = Uniforms::default();
    let prog = [bin(op, o(0, "xyzw"), v(0), v(1)), END];
    for &(a, b, want) in cases {
        for o0 in o0_both(&prog, &[x(a), x(b)], &u) {
            let got = o0[0];
            assert!(
                got == want || (got.is_nan() && want.is_nan()),
                "{op:?}({a}, {b}) = {got}, want {want}"
            );
        }
    }
}

#[test]
fn vectors_add_mul_sge_slt() {
    check_bin(
        B::Add,
        &[
            (1.0, -1.0, 0.0),
            (0.0, -0.0, 0.0),
            (INF, -INF, NAN),
            (INF, 1.0, INF),
            (INF, -1.0, INF),
        ],
    );
    check_bin(
        B::Mul,
        &[
            (1.0, -1.0, -1.0),
            (-1.0, 1.0, -1.0),
            (INF, 0.0, 0.0),
            (NAN, 0.0, NAN),
            (INF, INF, INF),
            (INF, -INF, -INF),
        ],
    );
    let sge = [
        (INF, 0.0, 1.0),
        (0.0, INF, 0.0),
        (NAN, 0.0, 0.0),
        (0.0, NAN, 0.0),
        (INF, INF, 1.0),
        (INF, -INF, 1.0),
        (-INF, INF, 0.0),
        (1.0, -1.0, 1.0),
        (-1.0, 1.0, 0.0),
    ];
    check_bin(B::Sge, &sge);
    let slt = [
        (INF, 0.0, 0.0),
        (0.0, INF, 1.0),
        (NAN, 0.0, 0.0),
        (0.0, NAN, 0.0),
        (INF, INF, 0.0),
        (INF, -INF, 0.0),
        (-INF, INF, 1.0),
        (1.0, -1.0, 0.0),
        (-1.0, 1.0, 1.0),
    ];
    check_bin(B::Slt, &slt);
}

#[test]
fn vectors_max_min() {
    check_bin(
        B::Max,
        &[
            (1.0, 0.0, 1.0),
            (0.0, 1.0, 1.0),
            (0.0, INF, INF),
            (0.0, NAN, NAN),
            (NAN, 0.0, 0.0),
            (-INF, INF, INF),
        ],
    );
    check_bin(
        B::Min,
        &[
            (1.0, 0.0, 0.0),
            (0.0, 1.0, 0.0),
            (0.0, INF, 0.0),
            (0.0, -INF, -INF),
            (0.0, NAN, NAN),
            (NAN, 0.0, 0.0),
            (-INF, INF, -INF),
        ],
    );
}

#[test]
fn vectors_dot_products() {
    let u = Uniforms::default();
    let dp = |op, a: Vec4, b: Vec4| o0_both(&[bin(op, o(0, "xyzw"), v(0), v(1)), END], &[a, b], &u);
    for op in [B::Dp3, B::Dp4, B::Dph] {
        assert!(
            dp(op, splat(INF), splat(0.0)).iter().all(|o| o[0] == 0.0),
            "{op:?} inf.0"
        );
        assert!(
            dp(op, splat(NAN), splat(0.0)).iter().all(|o| o[0].is_nan()),
            "{op:?} nan.0"
        );
    }
    assert!(
        dp(B::Dp3, splat(1.0), splat(1.0))
            .iter()
            .all(|o| *o == splat(3.0))
    );
    assert!(
        dp(B::Dp4, splat(1.0), splat(1.0))
            .iter()
            .all(|o| *o == splat(4.0))
    );
    assert!(
        dp(B::Dph, splat(1.0), splat(1.0))
            .iter()
            .all(|o| *o == splat(4.0))
    );
    assert!(
        dp(B::Dph, splat(0.0), splat(1.0))
            .iter()
            .all(|o| *o == splat(1.0))
    );
    // Later fork: w ignored by DP3 (even NaN), DPH replaces a.w by 1.
    assert!(
        dp(B::Dp3, [2.0, -3.0, 4.0, NAN], [5.0, 6.0, -7.0, NAN])
            .iter()
            .all(|o| o[0] == -36.0)
    );
    assert!(
        dp(B::Dp4, [2.0, -3.0, 4.0, -5.0], [5.0, 6.0, -7.0, 8.0])
            .iter()
            .all(|o| o[0] == -76.0)
    );
    assert!(
        dp(B::Dph, [2.0, -3.0, 4.0, NAN], [5.0, 6.0, -7.0, 8.0])
            .iter()
            .all(|o| o[0] == -28.0)
    );
    // DPHI: inverted encoding, same maths.
    let s = run_ok(
        &[bini(B::Dph, o(0, "xyzw"), v(0), v(1)), END],
        &[[2.0, -3.0, 4.0, NAN], [5.0, 6.0, -7.0, 8.0]],
        &u,
    );
    assert_eq!(s.outputs[0], splat(-28.0));
    // Scalar results broadcast only to the masked lanes.
    let s = run_ok(
        &[bin(B::Dp4, o(0, "yw"), v(0), v(1)), END],
        &[splat(1.0), splat(2.0)],
        &u,
    );
    assert_eq!(s.outputs[0], [0.0, 8.0, 0.0, 8.0]);
}

#[test]
fn vectors_dst_litp() {
    let u = Uniforms::default();
    let s = run_ok(
        &[
            bin(B::Dst, o(0, "xyzw"), v(0), v(1)),
            bini(B::Dst, o(1, "xyzw"), v(0), v(1)),
            END,
        ],
        &[[9.0, 2.0, 3.0, 9.0], [9.0, 5.0, 9.0, 7.0]],
        &u,
    );
    assert_eq!(s.outputs[0], [1.0, 10.0, 3.0, 7.0]);
    assert_eq!(s.outputs[1], [1.0, 10.0, 3.0, 7.0]);
    let s = run_ok(
        &[un(U::Litp, o(0, "xyzw"), v(0)), END],
        &[[-2.0, 300.0, 5.0, 4.0]],
        &u,
    );
    assert_eq!(s.outputs[0], [0.0, alu::LITP_Y_LIMIT, 0.0, 4.0]);
    assert_eq!(s.cmp, [false, true]);
    let s = run_ok(
        &[un(U::Litp, o(0, "xyzw"), v(0)), END],
        &[[2.0, -300.0, 5.0, -4.0]],
        &u,
    );
    assert_eq!(s.outputs[0], [2.0, -alu::LITP_Y_LIMIT, 0.0, 0.0]);
    assert_eq!(s.cmp, [true, false]);
    assert_eq!(alu::LITP_Y_LIMIT, 127.0 + 255.0 / 256.0);
}

fn unary_o0(op: U, input: f32) -> f32 {
    let u = Uniforms::default();
    let [a, b] = o0_both(&[un(op, o(0, "xyzw"), v(0).sw("x")), END], &[x(input)], &u);
    assert!(
        a[0].to_bits() == b[0].to_bits() || (a[0] == 0.0 && b[0] == 0.0),
        "{op:?}({input}) differs by mode"
    );
    a[0]
}

fn approx(got: f32, want: f64, margin: f64) -> bool {
    let g = f64::from(got);
    let eps = f64::from(f32::EPSILON) * 100.0 * want.abs().max(1.0);
    (g - want).abs() <= margin.max(eps)
}

#[test]
fn vectors_rcp_rsq() {
    assert_eq!(unary_o0(U::Rcp, 0.0), INF);
    assert_eq!(unary_o0(U::Rcp, -0.0), INF);
    assert_eq!(unary_o0(U::Rcp, INF), 0.0);
    assert!(unary_o0(U::Rcp, NAN).is_nan());
    for k in -4i32..=4 {
        let a = 2f32.powi(k);
        assert!(
            approx(unary_o0(U::Rcp, a), 1.0 / f64::from(a), 0.001),
            "rcp {a}"
        );
    }
    assert!(unary_o0(U::Rsq, -2.0).is_nan());
    assert_eq!(unary_o0(U::Rsq, INF), 0.0);
    assert!(unary_o0(U::Rsq, -INF).is_nan());
    assert!(unary_o0(U::Rsq, NAN).is_nan());
    assert_eq!(unary_o0(U::Rsq, -0.0), INF);
    for k in -4i32..=4 {
        let a = 2f32.powi(k);
        assert!(
            approx(unary_o0(U::Rsq, a), 1.0 / f64::from(a).sqrt(), 0.001),
            "rsq {a}"
        );
    }
}

#[test]
fn vectors_ex2_lg2_flr() {
    assert!(unary_o0(U::Lg2, NAN).is_nan());
    assert!(unary_o0(U::Lg2, -1.0).is_nan());
    assert!(unary_o0(U::Lg2, 0.0).is_infinite());
    assert!(approx(unary_o0(U::Lg2, 4.0), 2.0, 0.0));
    assert!(approx(unary_o0(U::Lg2, 64.0), 6.0, 0.0));
    assert!(approx(unary_o0(U::Lg2, 1e24), 79.726_274_277_3, 1e-3));
    for k in -32..=32 {
        assert_eq!(unary_o0(U::Lg2, 2f32.powi(k)), k as f32);
    }
    assert!(approx(unary_o0(U::Lg2, 1.5), 0.584_962_500_7, 1e-6));
    assert!(unary_o0(U::Ex2, NAN).is_nan());
    assert!(approx(unary_o0(U::Ex2, -800.0), 0.0, 1e-30));
    assert_eq!(unary_o0(U::Ex2, 0.0), 1.0);
    assert!(approx(unary_o0(U::Ex2, 2.0), 4.0, 0.0));
    assert!(approx(unary_o0(U::Ex2, 6.0), 64.0, 0.0));
    assert!(approx(
        unary_o0(U::Ex2, 79.726_274_277_3_f64 as f32),
        1e24,
        1e19
    ));
    assert_eq!(unary_o0(U::Ex2, 800.0), INF);
    assert!(approx(unary_o0(U::Ex2, -1.0), 0.5, 1e-6));
    assert!(approx(
        unary_o0(U::Ex2, -0.5),
        std::f64::consts::FRAC_1_SQRT_2,
        1e-6
    ));
    assert!(approx(
        unary_o0(U::Ex2, 0.5),
        std::f64::consts::SQRT_2,
        1e-6
    ));
    assert!(approx(
        unary_o0(U::Ex2, 1.5),
        2.0 * std::f64::consts::SQRT_2,
        1e-6
    ));
    for (a, want) in [
        (0.5, 0.0),
        (-0.5, -1.0),
        (1.5, 1.0),
        (-1.5, -2.0),
        (INF, INF),
    ] {
        assert_eq!(unary_o0(U::Flr, a), want, "flr {a}");
    }
    assert!(unary_o0(U::Flr, NAN).is_nan());
}

#[test]
fn vectors_mad_madi() {
    let u = Uniforms::default();
    for (a, b, cc, want) in [
        (0.0, 0.0, 0.0, 0.0),
        (1.0, 1.0, 1.0, 2.0),
        (INF, 0.0, 0.0, 0.0),
    ] {
        for prog in [
            [mad(o(0, "xyzw"), v(0), v(1), v(2)), END],
            [madi(o(0, "xyzw"), v(0), v(1), v(2)), END],
        ] {
            for o0 in o0_both(&prog, &[splat(a), splat(b), splat(cc)], &u) {
                assert_eq!(o0, splat(want));
            }
        }
    }
    let s = run_ok(
        &[mad(o(0, "xyzw"), v(0), v(1), v(2)), END],
        &[splat(NAN), splat(0.0), splat(0.0)],
        &u,
    );
    assert!(s.outputs[0].iter().all(|f| f.is_nan()));
    // MAD is not fused: (1 + 2^-23)^2 - 1 rounds the product first.
    let a = 1.0 + 1.0 / 4096.0; // a*a = 1 + 2^-11 + 2^-24: the 2^-24 is lost when rounded
    let s = run_ok(
        &[mad(o(0, "x"), v(0), v(0), v(1)), END],
        &[x(a), x(-1.0)],
        &u,
    );
    assert_eq!(s.outputs[0][0], 1.0 / 2048.0);
    assert_ne!(s.outputs[0][0], a.mul_add(a, -1.0));
    // Uniform operand positions: MAD src2 and MADI src3 may be c registers.
    let mut uu = u.clone();
    uu.f[5] = splat(3.0);
    let s = run_ok(
        &[
            mad(o(0, "xyzw"), v(0), c(5), v(1)),
            madi(o(1, "xyzw"), v(0), v(1), c(5)),
            END,
        ],
        &[splat(2.0), splat(1.0)],
        &uu,
    );
    assert_eq!(s.outputs[0], splat(7.0));
    assert_eq!(s.outputs[1], splat(5.0));
}

#[test]
fn vectors_uniform_read_and_relative_offsets() {
    // [CL] "Uniform Read": c[i] = (2i/255, 2i/255, 2i/255, 1); mova a0.x, v0.x; mov o0, c0[a0.x].
    let mut u = Uniforms::default();
    for i in 0..96 {
        let f = 2.0 * i as f32 / 255.0;
        u.f[i] = [f, f, f, 1.0];
    }
    let prog = [
        mova(v(0), "x"),
        NOP,
        mov(o(0, "xyzw"), c(0).rel(RelAddr::A0X)),
        END,
    ];
    for i in 0..96 {
        let input = i as f32 + (i % 17) as f32 / 17.0;
        let s = run_ok(&prog, &[x(input)], &u);
        assert_eq!(s.outputs[0], u.f[i], "uniform read {i}");
    }
    // [CL] "Address Register Offset": c[i] = (v, v, v, 1), v = (96 - i) * 2 / 255; base c40.
    let mut u = Uniforms::default();
    for i in 0..96 {
        let f = (96 - i) as f32 * 2.0 / 255.0;
        u.f[i] = [f, f, f, 1.0];
    }
    u.i = [[1, 2, 3, 4]; 4];
    u.b = [true; 16];
    let prog = [
        mova(v(0), "x"),
        NOP,
        mov(o(0, "xyzw"), c(40).rel(RelAddr::A0X)),
        END,
    ];
    let ones = [1.0; 4];
    let table: [(i32, Option<usize>); 14] = [
        (0, Some(40)),
        (13, Some(53)),
        (50, Some(90)),
        (60, None),
        (74, None),
        (87, None),
        (88, Some(0)),
        (128, Some(40)),
        (-40, Some(0)),
        (-42, None),
        (-70, None),
        (-73, Some(95)),
        (-127, Some(41)),
        (-129, Some(40)),
    ];
    for (a0, want) in table {
        let s = run_ok(&prog, &[x(a0 as f32)], &u);
        let want = want.map_or(ones, |i| u.f[i]);
        assert_eq!(s.outputs[0], want, "a0.x = {a0}");
    }
    // a0.y and aL select their own registers; v/r operands ignore the offset (hardware rule).
    let mut u = Uniforms::default();
    u.f[7] = splat(7.0);
    u.f[2] = splat(2.0);
    u.i[1] = [0, 5, 0, 0];
    let prog = [
        mova(v(0), "xy"),
        NOP,
        mov(o(0, "xyzw"), c(2).rel(RelAddr::A0Y)),
        mov(o(1, "xyzw"), v(1).rel(RelAddr::A0Y)),
        Instr::Loop {
            i: 1,
            dst: 5,
            num: 0,
        },
        mov(o(2, "xyzw"), c(2).rel(RelAddr::AL)),
        END,
    ];
    let s = run_ok(&prog, &[[100.0, 5.0, 0.0, 0.0], splat(-1.0)], &u);
    assert_eq!(s.a0, [100, 5]);
    assert_eq!(s.outputs[0], splat(7.0));
    assert_eq!(s.outputs[1], splat(-1.0));
    assert_eq!(s.outputs[2], splat(7.0));
}

#[test]
fn vectors_mova_truncation_and_masks() {
    let u = Uniforms::default();
    let prog = [mova(v(0), "xy"), END];
    for (input, want) in [
        ([9.75, -9.75], [9, -9]),
        ([0.99, -0.99], [0, 0]),
        ([127.75, -127.75], [127, -127]),
    ] {
        let s = run_ok(&prog, &[[input[0], input[1], 0.0, 0.0]], &u);
        assert_eq!(s.a0, want);
    }
    // Partial masks leave the other address register (and aL) alone.
    let p = build(&[mova(v(0), "x"), NOP, mova(v(1), "y"), END]);
    let mut st = UnitState {
        a0: [11, 22],
        al: 33,
        ..UnitState::default()
    };
    st.inputs[0] = x(5.0);
    st.inputs[1] = [0.0, 6.0, 0.0, 0.0];
    let p1 = build(&[mova(v(0), "x"), END]);
    run(
        &p1,
        &u,
        &mut st,
        0,
        &ExecConfig::default(),
        &mut (),
        &mut (),
    )
    .unwrap();
    assert_eq!((st.a0, st.al), ([5, 22], 33));
    run(&p, &u, &mut st, 0, &ExecConfig::default(), &mut (), &mut ()).unwrap();
    assert_eq!((st.a0, st.al), ([5, 6], 33));
    // A mask without x/y changes nothing; swizzle applies before the conversion.
    let s = run_ok(
        &[mova(v(0).sw("wzyx"), "zw"), mova(v(0).sw("wzyx"), "x"), END],
        &[[1.0, 2.0, 3.0, 4.0]],
        &u,
    );
    assert_eq!(s.a0, [4, 0]);
}

#[test]
fn vectors_cmp() {
    let u = Uniforms::default();
    // Later fork: x-op LT, y-op GE on (1,4) vs (2,3) -> (true, true).
    let s = run_ok(
        &[cmp(v(0), CmpOp::Lt, CmpOp::Ge, v(1)), END],
        &[[1.0, 4.0, 0.0, 0.0], [2.0, 3.0, 0.0, 0.0]],
        &u,
    );
    assert_eq!(s.cmp, [true, true]);
    // Lanes (1, NaN) vs (2, 0).
    let table = [
        (CmpOp::Eq, [false, false]),
        (CmpOp::Ne, [true, true]),
        (CmpOp::Lt, [true, false]),
        (CmpOp::Le, [true, false]),
        (CmpOp::Gt, [false, false]),
        (CmpOp::Ge, [false, false]),
        (CmpOp::Unk6, [true, true]),
        (CmpOp::Unk7, [true, true]),
    ];
    for (op, want) in table {
        let s = run_ok(
            &[cmp(v(0), op, op, v(1)), END],
            &[[1.0, NAN, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]],
            &u,
        );
        assert_eq!(s.cmp, want, "{op:?}");
    }
    // CMP with a uniform and a swizzle/negate on the operands; the descriptor mask is ignored.
    let mut uu = u.clone();
    uu.f[0] = [5.0, -5.0, 0.0, 0.0];
    let s = run_ok(
        &[cmp(c(0).sw("yx").neg(), CmpOp::Eq, CmpOp::Eq, v(0)), END],
        &[[5.0, -5.0, 0.0, 0.0]],
        &uu,
    );
    assert_eq!(s.cmp, [true, true]);
}

#[test]
fn vectors_dest_mask_and_swizzle() {
    let u = Uniforms::default();
    let input = [1.0, 2.0, 3.0, 4.0];
    for m in 0..16u8 {
        let prog = [
            Instr::Unary {
                op: U::Mov,
                dst: Dst {
                    reg: DstReg::Output(0),
                    mask: m,
                },
                src: v(0),
                desc: 0,
            },
            END,
        ];
        let s = run_ok(&prog, &[input], &u);
        for (lane, &value) in input.iter().enumerate() {
            let want = if m & (8 >> lane) != 0 { value } else { 0.0 };
            assert_eq!(s.outputs[0][lane], want, "mask {m:04b} lane {lane}");
        }
    }
    let table = [
        ("x", [1.0, 1.0, 1.0, 1.0]),
        ("y", [2.0; 4]),
        ("z", [3.0; 4]),
        ("w", [4.0; 4]),
        ("xy", [1.0, 2.0, 2.0, 2.0]),
        ("xz", [1.0, 3.0, 3.0, 3.0]),
        ("xw", [1.0, 4.0, 4.0, 4.0]),
        ("yz", [2.0, 3.0, 3.0, 3.0]),
        ("yw", [2.0, 4.0, 4.0, 4.0]),
        ("zw", [3.0, 4.0, 4.0, 4.0]),
        ("yy", [2.0; 4]),
        ("wx", [4.0, 1.0, 1.0, 1.0]),
        ("xyz", [1.0, 2.0, 3.0, 3.0]),
        ("xyw", [1.0, 2.0, 4.0, 4.0]),
        ("xzw", [1.0, 3.0, 4.0, 4.0]),
        ("yzw", [2.0, 3.0, 4.0, 4.0]),
        ("yyy", [2.0; 4]),
        ("yxw", [2.0, 1.0, 4.0, 4.0]),
        ("xyzw", [1.0, 2.0, 3.0, 4.0]),
        ("wzxy", [4.0, 3.0, 1.0, 2.0]),
        ("yyyy", [2.0; 4]),
    ];
    for (sw, want) in table {
        let s = run_ok(&[mov(o(0, "xyzw"), v(0).sw(sw)), END], &[input], &u);
        assert_eq!(s.outputs[0], want, "swizzle .{sw}");
    }
    // Negation applies after the swizzle to all lanes.
    let s = run_ok(
        &[mov(o(0, "xyzw"), v(0).sw("wzyx").neg()), END],
        &[input],
        &u,
    );
    assert_eq!(s.outputs[0], [-4.0, -3.0, -2.0, -1.0]);
}

#[test]
fn every_arithmetic_opcode_with_temps_and_outputs() {
    // One shader touching every arithmetic opcode (normal and inverted), checking exact values.
    let mut u = Uniforms::default();
    u.f[10] = [1.0, 2.0, 3.0, 4.0];
    let prog = [
        bin(B::Add, rd(0, "xyzw"), c(10), v(0)),   // (2,4,6,8)
        bin(B::Mul, rd(1, "xyzw"), r(0), v(0)),    // (2,8,18,32)
        bin(B::Max, rd(2, "xyzw"), c(10), v(1)),   // max((1,2,3,4),(4,3,2,1)) = (4,3,3,4)
        bin(B::Min, rd(3, "xyzw"), c(10), v(1)),   // (1,2,2,1)
        bin(B::Sge, rd(4, "xyzw"), c(10), v(1)),   // (0,0,1,1)
        bin(B::Slt, rd(5, "xyzw"), c(10), v(1)),   // (1,1,0,0)
        bini(B::Sge, rd(6, "xyzw"), v(1), c(10)),  // (1,1,0,0)
        bini(B::Slt, rd(7, "xyzw"), v(1), c(10)),  // (0,0,1,1)
        bin(B::Dp3, rd(8, "xyzw"), c(10), v(1)),   // 4+6+6 = 16
        bin(B::Dp4, rd(9, "xyzw"), c(10), v(1)),   // 20
        bin(B::Dph, rd(10, "xyzw"), c(10), v(1)),  // 16 + 1 = 17
        un(U::Flr, rd(11, "xyzw"), v(2)),          // floor(1.5,-1.5,0.25,-0.25)
        un(U::Rcp, rd(12, "xyzw"), c(10).sw("w")), // 0.25
        un(U::Rsq, rd(13, "xyzw"), c(10).sw("w")), // 0.5
        un(U::Ex2, rd(14, "xyzw"), c(10).sw("z")), // 8
        un(U::Lg2, rd(15, "xyzw"), c(10).sw("w")), // 2
        mad(o(0, "xyzw"), v(0), c(10), v(1)),      // (1,2,3,4)+(4,3,2,1) = 5
        mov(o(1, "xyzw"), r(15)),
        END,
    ];
    let s = run_ok(
        &prog,
        &[
            [1.0, 1.0, 1.0, 1.0],
            [4.0, 3.0, 2.0, 1.0],
            [1.5, -1.5, 0.25, -0.25],
        ],
        &u,
    );
    let t = &s.temps;
    assert_eq!(t[0], [2.0, 3.0, 4.0, 5.0]);
    assert_eq!(t[1], [2.0, 3.0, 4.0, 5.0]);
    assert_eq!(t[2], [4.0, 3.0, 3.0, 4.0]);
    assert_eq!(t[3], [1.0, 2.0, 2.0, 1.0]);
    assert_eq!(t[4], [0.0, 0.0, 1.0, 1.0]);
    assert_eq!(t[5], [1.0, 1.0, 0.0, 0.0]);
    assert_eq!(t[6], [1.0, 1.0, 0.0, 0.0]);
    assert_eq!(t[7], [0.0, 0.0, 1.0, 1.0]);
    assert_eq!(t[8], splat(16.0));
    assert_eq!(t[9], splat(20.0));
    assert_eq!(t[10], splat(17.0));
    assert_eq!(t[11], [1.0, -2.0, 0.0, -1.0]);
    assert_eq!(t[12], splat(0.25));
    assert_eq!(t[13], splat(0.5));
    assert_eq!(t[14], splat(8.0));
    assert_eq!(t[15], splat(2.0));
    assert_eq!(s.outputs[0], splat(5.0));
    assert_eq!(s.outputs[1], splat(2.0));
}

// ----- control flow -----

#[test]
fn call_cascade_vector() {
    // [CL] CALL: the inner call returns to 3, the end of the outer call's range -> back to 1.
    let prog = [
        Instr::Call { dst: 2, num: 1 },
        END,
        Instr::Call { dst: 4, num: 1 },
        END,
        un(U::Ex2, o(0, "xyzw"), v(0).sw("x")),
        END,
    ];
    let mut rec = Recorder::new();
    let p = build(&prog);
    let mut st = UnitState::default();
    run(
        &p,
        &Uniforms::default(),
        &mut st,
        0,
        &ExecConfig::default(),
        &mut rec,
        &mut (),
    )
    .unwrap();
    assert_eq!(st.outputs[0][0], 1.0);
    let pcs: Vec<u16> = rec.steps.iter().map(|s| s.pc).collect();
    assert_eq!(pcs, vec![0, 2, 4, 1]);
}

#[test]
fn call_stack_fourth_cascade_pop_loses_update() {
    // [3DB]: if the CALL stack pops four times in one instruction, the fourth PC update is lost.
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    let mut prog = vec![NOP; 42];
    prog[0] = Instr::Call { dst: 10, num: 1 };
    prog[1] = mov(o(1, "x"), c(0)); // the return a 3-deep cascade would reach
    prog[2] = END;
    prog[10] = Instr::Call { dst: 20, num: 1 };
    prog[11] = mov(o(2, "x"), c(0)); // reached because the 4th update is dropped
    prog[12] = END;
    prog[20] = Instr::Call { dst: 30, num: 1 };
    prog[21] = END;
    prog[30] = Instr::Call { dst: 40, num: 1 };
    prog[31] = END;
    prog[40] = mov(o(0, "x"), c(0));
    prog[41] = END;
    let s = run_ok(&prog, &[], &u);
    assert_eq!(
        (s.outputs[0][0], s.outputs[1][0], s.outputs[2][0]),
        (1.0, 0.0, 1.0)
    );
}

/// `depth` nested CALLs (main + depth − 1 levels). Returns (levels run, main saw its return,
/// control fell through the outermost subroutine).
fn nested_calls(depth: usize) -> (f32, f32, f32) {
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    let base = |k: usize| (10 + 5 * k) as u16;
    let mut prog = vec![NOP; 10 + 5 * depth];
    prog[0] = Instr::Call {
        dst: base(0),
        num: 3,
    };
    prog[1] = mov(o(1, "x"), c(0));
    prog[2] = mov(o(0, "x"), r(15));
    prog[3] = END;
    for k in 0..depth {
        let b = usize::from(base(k));
        // Level k: [b] call level k+1 (range b..b+3) or NOP; [b+1] count; [b+2] NOP;
        // [b+3] fall-through marker (only reached if the return entry was lost); [b+4] END.
        prog[b] = if k + 1 < depth {
            Instr::Call {
                dst: base(k + 1),
                num: 3,
            }
        } else {
            NOP
        };
        prog[b + 1] = bin(B::Add, rd(15, "x"), c(0), r(15));
        prog[b + 3] = mov(o(2, "x"), c(0));
        prog[b + 4] = END;
    }
    let s = run_ok(&prog, &[], &u);
    (s.temps[15][0], s.outputs[1][0], s.outputs[2][0])
}

#[test]
fn call_stack_depth_and_overflow() {
    // 4 nested calls (main + 3 levels): everything returns.
    assert_eq!(nested_calls(4), (4.0, 1.0, 0.0));
    // 5 nested calls: the oldest entry (main's) is discarded; control falls through level 0.
    assert_eq!(nested_calls(5), (5.0, 0.0, 1.0));
}

#[test]
fn stack_checks_use_independent_pc_copies_and_priorities() {
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    u.b[0] = true;
    u.i[0] = [3, 0, 1, 0];
    // A loop body and an IF then-block that end on the same word: both stacks fire on the same
    // instruction ([3DB]: each stack checks its own copy of PC + 1); LOOP has priority, and the
    // IF entry is popped every iteration, so nothing accumulates.
    let prog = [
        Instr::Loop {
            i: 0,
            dst: 2,
            num: 0,
        },
        Instr::IfU {
            b: 0,
            dst: 3,
            num: 0,
        },
        bin(B::Add, rd(0, "x"), c(0), r(0)),
        mov(o(0, "xyzw"), r(0)),
        END,
    ];
    let p = build(&prog);
    let mut st = UnitState::default();
    let mut rec = Recorder::new();
    run(
        &p,
        &u,
        &mut st,
        0,
        &ExecConfig::default(),
        &mut rec,
        &mut (),
    )
    .unwrap();
    assert_eq!(st.outputs[0][0], 4.0);
    assert!(
        rec.steps.iter().all(|s| s.stack_depths[1] <= 1),
        "IF entries do not pile up"
    );
    assert_eq!(rec.steps.last().map(|s| s.stack_depths), Some([0, 0, 0]));
    // A JMP as the last word of a CALL range is overridden by the return (JMP has the lowest
    // priority; picasso pads such a JMP with a NOP for this reason).
    let prog = [
        Instr::Call { dst: 2, num: 2 },
        END,
        NOP,
        Instr::JmpC {
            cond: cond(CondOp::X, false, false),
            dst: 5,
        },
        END,
        mov(o(0, "xyzw"), c(0)),
        END,
    ];
    assert_eq!(run_ok(&prog, &[], &u).outputs[0], splat(0.0));
    // The same JMP one word earlier does jump.
    let prog = [
        Instr::Call { dst: 2, num: 2 },
        END,
        Instr::JmpC {
            cond: cond(CondOp::X, false, false),
            dst: 5,
        },
        NOP,
        END,
        mov(o(0, "xyzw"), c(0)),
        END,
    ];
    assert_eq!(run_ok(&prog, &[], &u).outputs[0], splat(1.0));
}

#[test]
fn if_else_nesting() {
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    u.f[1] = splat(2.0);
    u.f[2] = splat(3.0);
    u.f[3] = splat(4.0);
    // 0: ifu b0 (then 1..5, else 6..7, join 8)
    //   1: mov o0, c0
    //   2: ifu b1 (then 3..3, else 4..4, join 5)  -- nested
    //   3:   mov o1, c1
    //   4:   mov o1, c2
    //   5:   nop  (picasso's padding: the inner .end and the outer .else coincide otherwise, and
    //              the IF stack pops only one entry per instruction, [3DB])
    // 6: mov o2, c3   (outer else)
    // 7: mov o3, c3
    // 8: end
    let prog = [
        Instr::IfU {
            b: 0,
            dst: 6,
            num: 2,
        },
        mov(o(0, "xyzw"), c(0)),
        Instr::IfU {
            b: 1,
            dst: 4,
            num: 1,
        },
        mov(o(1, "xyzw"), c(1)),
        mov(o(1, "xyzw"), c(2)),
        NOP,
        mov(o(2, "xyzw"), c(3)),
        mov(o(3, "xyzw"), c(3)),
        END,
    ];
    for (b0, b1, want) in [
        (true, true, [1.0, 2.0, 0.0, 0.0]),
        (true, false, [1.0, 3.0, 0.0, 0.0]),
        (false, true, [0.0, 0.0, 4.0, 4.0]),
        (false, false, [0.0, 0.0, 4.0, 4.0]),
    ] {
        u.b[0] = b0;
        u.b[1] = b1;
        let s = run_ok(&prog, &[], &u);
        let got = [
            s.outputs[0][0],
            s.outputs[1][0],
            s.outputs[2][0],
            s.outputs[3][0],
        ];
        assert_eq!(got, want, "b0={b0} b1={b1}");
    }
    // IFC on the condition flags, no else block (num = 0).
    let prog = [
        cmp(v(0), CmpOp::Gt, CmpOp::Gt, v(1)),
        Instr::IfC {
            cond: cond(CondOp::X, true, false),
            dst: 3,
            num: 0,
        },
        mov(o(0, "xyzw"), c(0)),
        END,
    ];
    let s = run_ok(&prog, &[x(2.0), x(1.0)], &u);
    assert_eq!(s.outputs[0], splat(1.0));
    let s = run_ok(&prog, &[x(0.0), x(1.0)], &u);
    assert_eq!(s.outputs[0], splat(0.0));
}

#[test]
fn conditional_truth_tables() {
    // IFC / CALLC / JMPC / BREAKC for every CONDOP, refx/refy and flag combination.
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    u.i[0] = [0, 0, 0, 0];
    for op in [CondOp::Or, CondOp::And, CondOp::X, CondOp::Y] {
        for bits in 0..16u32 {
            let (rx, ry, fx, fy) = (bits & 8 != 0, bits & 4 != 0, bits & 2 != 0, bits & 1 != 0);
            let cnd = cond(op, rx, ry);
            let want = cnd.eval(fx, fy);
            let flags_in = [
                [
                    if fx { 1.0 } else { 0.0 },
                    if fy { 1.0 } else { 0.0 },
                    0.0,
                    0.0,
                ],
                splat(1.0),
            ];
            let set_flags = cmp(v(0), CmpOp::Eq, CmpOp::Eq, v(1));
            // IFC: then-block writes o0.
            let ifc = [
                set_flags,
                Instr::IfC {
                    cond: cnd,
                    dst: 3,
                    num: 0,
                },
                mov(o(0, "x"), c(0)),
                END,
            ];
            // CALLC: subroutine writes o0.
            let callc = [
                set_flags,
                Instr::CallC {
                    cond: cnd,
                    dst: 3,
                    num: 1,
                },
                END,
                mov(o(0, "x"), c(0)),
                END,
            ];
            // JMPC: jumping skips the write.
            let jmpc = [
                set_flags,
                Instr::JmpC { cond: cnd, dst: 3 },
                mov(o(0, "x"), c(0)),
                END,
            ];
            // BREAKC in a 1-iteration loop skips the rest of the body.
            let breakc = [
                set_flags,
                Instr::Loop {
                    i: 0,
                    dst: 3,
                    num: 0,
                },
                Instr::BreakC { cond: cnd },
                mov(o(0, "x"), c(0)),
                END,
            ];
            let got = |p: &[Instr]| run_ok(p, &flags_in, &u).outputs[0][0] == 1.0;
            assert_eq!(got(&ifc), want, "IFC {op:?} {bits:04b}");
            assert_eq!(got(&callc), want, "CALLC {op:?} {bits:04b}");
            assert_eq!(got(&jmpc), !want, "JMPC {op:?} {bits:04b}");
            assert_eq!(got(&breakc), !want, "BREAKC {op:?} {bits:04b}");
        }
    }
}

#[test]
fn jmpu_invert_and_callu() {
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    for b in [false, true] {
        u.b[3] = b;
        for invert in [false, true] {
            let prog = [
                Instr::JmpU {
                    b: 3,
                    dst: 2,
                    invert,
                },
                mov(o(0, "x"), c(0)),
                END,
            ];
            let jumped = run_ok(&prog, &[], &u).outputs[0][0] == 0.0;
            assert_eq!(jumped, b != invert, "b={b} invert={invert}");
        }
        let prog = [
            Instr::CallU {
                b: 3,
                dst: 2,
                num: 1,
            },
            END,
            mov(o(0, "x"), c(0)),
            END,
        ];
        assert_eq!(run_ok(&prog, &[], &u).outputs[0][0] == 1.0, b);
    }
}

#[test]
fn loop_counts_and_al() {
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    u.f[10] = splat(100.0);
    for (xx, y, z) in [(0u8, 0u8, 1u8), (1, 5, 2), (3, 0, 1), (255, 7, 0)] {
        u.i[2] = [xx, y, z, 0];
        // r0 counts iterations; o1 reads c[aL] of the last iteration via relative addressing.
        let prog = [
            Instr::Loop {
                i: 2,
                dst: 2,
                num: 0,
            },
            bin(B::Add, rd(0, "x"), c(0), r(0)),
            mov(rd(1, "xyzw"), c(0).rel(RelAddr::AL)),
            mov(o(0, "x"), r(0)),
            END,
        ];
        let s = run_ok(&prog, &[], &u);
        let iterations = u32::from(xx) + 1;
        assert_eq!(s.outputs[0][0], iterations as f32, "i=({xx},{y},{z})");
        // aL after the loop = y + iterations * z (stays valid after the loop, [3DB]).
        assert_eq!(s.al, i32::from(y) + iterations as i32 * i32::from(z));
    }
    // aL sequence observed through the tracer: y, y+z, ...
    u.i[0] = [2, 10, 3, 0];
    let p = build(&[
        Instr::Loop {
            i: 0,
            dst: 1,
            num: 0,
        },
        NOP,
        END,
    ]);
    let mut rec = Recorder::new();
    let mut st = UnitState::default();
    run(
        &p,
        &u,
        &mut st,
        0,
        &ExecConfig::default(),
        &mut rec,
        &mut (),
    )
    .unwrap();
    let at_nop: Vec<(i32, Option<u32>)> = rec
        .steps
        .iter()
        .filter(|s| s.pc == 1)
        .map(|s| (s.al, s.loop_remaining))
        .collect();
    // After each NOP (the body's end) aL has already been stepped by the loop check.
    assert_eq!(at_nop, vec![(13, Some(1)), (16, Some(0)), (19, None)]);
}

#[test]
fn nested_loops_restore_outer_al() {
    // [CL] Nested Loop: mov r0, v0; loop i0 { loop i1 { add r0, r0, v0 } }; mov o0, r0.
    for (x0, z0) in [(4u8, 1u8), (9, 2)] {
        for x1 in [4u8, 7] {
            let mut u = Uniforms::default();
            u.i[0] = [x0, 0, z0, 0];
            u.i[1] = [x1, 0, 1, 0];
            // picasso pads with a NOP when two .end directives meet; the outer body is the inner
            // loop plus that NOP.
            let prog2 = [
                mov(rd(0, "xyzw"), v(0)),
                Instr::Loop {
                    i: 0,
                    dst: 4,
                    num: 0,
                },
                Instr::Loop {
                    i: 1,
                    dst: 3,
                    num: 0,
                },
                bin(B::Add, rd(0, "xyzw"), r(0), v(0)),
                NOP,
                mov(o(0, "xyzw"), r(0)),
                END,
            ];
            let s = run_ok(&prog2, &[splat(1.0)], &u);
            let want = (f32::from(x0) + 1.0) * (f32::from(x1) + 1.0) + 1.0;
            assert_eq!(s.outputs[0][0], want);
            assert_eq!(s.al, (i32::from(x0) + 1) * i32::from(z0), "final aL");
            // Without the padding NOP both loops end at word 3; the LOOP stack checks only its
            // top entry once per instruction, so when the inner loop pops the outer loop's
            // iteration check is missed and the outer body runs once ([3DB] model).
            let unpadded = [
                mov(rd(0, "xyzw"), v(0)),
                Instr::Loop {
                    i: 0,
                    dst: 3,
                    num: 0,
                },
                Instr::Loop {
                    i: 1,
                    dst: 3,
                    num: 0,
                },
                bin(B::Add, rd(0, "xyzw"), r(0), v(0)),
                mov(o(0, "xyzw"), r(0)),
                END,
            ];
            let s = run_ok(&unpadded, &[splat(1.0)], &u);
            assert_eq!(s.outputs[0][0], f32::from(x1) + 2.0);
        }
    }
}

#[test]
fn break_and_breakc() {
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    u.f[1] = splat(3.0);
    u.i[0] = [9, 0, 1, 0];
    // Count iterations in r0; break when r0 >= 3 (cmp.x).
    let prog = [
        Instr::Loop {
            i: 0,
            dst: 3,
            num: 0,
        },
        bin(B::Add, rd(0, "xyzw"), c(0), r(0)),
        cmp(c(1), CmpOp::Le, CmpOp::Le, r(0)),
        Instr::BreakC {
            cond: cond(CondOp::X, true, true),
        },
        mov(o(0, "xyzw"), r(0)),
        END,
    ];
    let s = run_ok(&prog, &[], &u);
    assert_eq!(s.outputs[0][0], 3.0);
    // aL was stepped after iterations 1 and 2 only (not for the broken third).
    assert_eq!(s.al, 2);
    // Unconditional BREAK as the first body instruction: body never completes.
    let prog = [
        Instr::Loop {
            i: 0,
            dst: 2,
            num: 0,
        },
        Instr::Break,
        mov(o(0, "x"), c(0)),
        mov(o(1, "x"), c(0)),
        END,
    ];
    let s = run_ok(&prog, &[], &u);
    assert_eq!((s.outputs[0][0], s.outputs[1][0], s.al), (0.0, 1.0, 0));
    // BREAK outside any loop is an error (hangs real hardware).
    let r = run_cfg(&[Instr::Break, END], &[], &u, ExecConfig::default());
    assert_eq!(r.result, Err(ExecError::BreakOutsideLoop { pc: 0 }));
}

#[test]
fn loop_stack_overflow_discards_oldest() {
    let mut s = flow::RingStack::<u32, 4>::default();
    for i in 0..4 {
        assert!(!s.push(i));
    }
    assert!(s.push(4));
    assert_eq!(s.as_slice(), &[1, 2, 3, 4]);
    assert_eq!(s.pop(), Some(4));
    assert_eq!(s.top(), Some(&3));
    let mut ifs = flow::RingStack::<u32, 8>::default();
    for i in 0..10 {
        ifs.push(i);
    }
    assert_eq!(ifs.as_slice(), &[2, 3, 4, 5, 6, 7, 8, 9]);
    // Five nested IFs that all fall through fine; nine nested IFs lose the outermost one, so
    // its else block is not skipped.
    let mut u = Uniforms::default();
    u.b[0] = true;
    u.f[0] = splat(1.0);
    let nested_ifs = |n: u16| {
        // IF k at word k (k < n), then-block [k+1, 2n-k); IF 0 also has a one-word else block at
        // 2n. Word n counts the body in r0.y, words n+1..2n-1 are the padding NOPs picasso puts
        // between consecutive .end directives; word 2n (IF 0's else) counts in r0.x.
        let mut p = Vec::new();
        for k in 0..n {
            p.push(Instr::IfU {
                b: 0,
                dst: 2 * n - k,
                num: u8::from(k == 0),
            });
        }
        p.push(bin(B::Add, rd(0, "y"), c(0), r(0)));
        p.extend(std::iter::repeat_n(NOP, usize::from(n - 1)));
        p.push(bin(B::Add, rd(0, "x"), c(0), r(0)));
        p.push(mov(o(0, "xy"), r(0)));
        p.push(END);
        p
    };
    // Depth 8 fits: the body runs, IF 0's else block is skipped.
    assert_eq!(
        &run_ok(&nested_ifs(8), &[], &u).outputs[0][..2],
        &[0.0, 1.0]
    );
    // Depth 9: IF 0's entry is discarded, so its else block (word 2n) is not skipped.
    assert_eq!(
        &run_ok(&nested_ifs(9), &[], &u).outputs[0][..2],
        &[1.0, 1.0]
    );
}

#[test]
fn budget_and_pc_errors() {
    let u = Uniforms::default();
    // An endless loop: jmpc to itself with a condition that is true for cleared flags.
    let prog = [
        Instr::JmpC {
            cond: cond(CondOp::X, false, false),
            dst: 0,
        },
        END,
    ];
    let r = run_cfg(
        &prog,
        &[],
        &u,
        ExecConfig {
            budget: 1000,
            ..ExecConfig::default()
        },
    );
    assert_eq!(
        r.result,
        Err(ExecError::BudgetExceeded {
            budget: 1000,
            pc: 0
        })
    );
    // Falling off the end.
    let r = run_cfg(&[NOP], &[], &u, ExecConfig::default());
    assert_eq!(r.result, Err(ExecError::PcOutOfRange { pc: 1, len: 1 }));
    // Jump past the end.
    let r = run_cfg(
        &[
            Instr::JmpU {
                b: 0,
                dst: 4000,
                invert: true,
            },
            END,
        ],
        &[],
        &u,
        ExecConfig::default(),
    );
    assert_eq!(r.result, Err(ExecError::PcOutOfRange { pc: 4000, len: 2 }));
    // Entry point outside the program.
    let p = build(&[END]);
    let mut st = UnitState::default();
    let e = run(&p, &u, &mut st, 7, &ExecConfig::default(), &mut (), &mut ());
    assert_eq!(e, Err(ExecError::PcOutOfRange { pc: 7, len: 1 }));
    // Unknown opcodes run as NOP and are counted.
    let p = Program::new(&[0x4000_0000, 0x8800_0000], &[]);
    let stats = run(&p, &u, &mut st, 0, &ExecConfig::default(), &mut (), &mut ()).unwrap();
    assert_eq!((stats.instructions, stats.unknown_ops), (2, 1));
    // A CALL with NUM = 0 does nothing.
    let s = run_ok(
        &[Instr::Call { dst: 2, num: 0 }, END, Instr::Break],
        &[],
        &u,
    );
    assert_eq!(s.outputs[0], splat(0.0));
}

// ----- geometry shader emission -----

#[test]
fn setemit_emit_primitives() {
    let mut u = Uniforms::default();
    for i in 0..4 {
        u.f[i] = splat(i as f32 + 1.0);
    }
    let prog = [
        Instr::SetEmit {
            vertex_id: 0,
            prim_emit: false,
            winding: false,
        },
        mov(o(0, "xyzw"), c(0)),
        Instr::Emit,
        Instr::SetEmit {
            vertex_id: 1,
            prim_emit: false,
            winding: false,
        },
        mov(o(0, "xyzw"), c(1)),
        Instr::Emit,
        Instr::SetEmit {
            vertex_id: 2,
            prim_emit: true,
            winding: true,
        },
        mov(o(0, "xyzw"), c(2)),
        Instr::Emit,
        // Strip-like continuation: replace slot 0, emit again with normal winding.
        Instr::SetEmit {
            vertex_id: 0,
            prim_emit: true,
            winding: false,
        },
        mov(o(0, "xyzw"), c(3)),
        Instr::Emit,
        // Slot 3 exists ([3DB] 4-entry buffer) but is not part of the primitive.
        Instr::SetEmit {
            vertex_id: 3,
            prim_emit: false,
            winding: false,
        },
        Instr::Emit,
        END,
    ];
    let p = build(&prog);
    let mut st = UnitState::default();
    let mut prims: Vec<EmittedPrimitive> = Vec::new();
    let stats = run(
        &p,
        &u,
        &mut st,
        0,
        &ExecConfig::default(),
        &mut (),
        &mut prims,
    )
    .unwrap();
    assert_eq!(stats.emits, 5);
    assert_eq!(prims.len(), 2);
    let firsts = |p: &EmittedPrimitive| p.vertices.map(|v| v[0][0]);
    assert_eq!(firsts(&prims[0]), [1.0, 2.0, 3.0]);
    assert!(prims[0].winding);
    assert_eq!(firsts(&prims[1]), [4.0, 2.0, 3.0]);
    assert!(!prims[1].winding);
    // Output banking (hardware fact SH-16): the fifth EMIT wrote nothing since the fourth, so it
    // emits the bank last written before the third EMIT (c2), not c3.
    assert_eq!(st.emitter.buffer[3][0], splat(3.0));
    assert_eq!(
        (
            st.emitter.vertex_id,
            st.emitter.prim_emit,
            st.emitter.winding
        ),
        (3, false, false)
    );
}

// ----- tracing -----

#[test]
fn recorder_captures_operands_and_state() {
    let mut u = Uniforms::default();
    u.f[4] = [1.0, 2.0, 3.0, 4.0];
    u.i[0] = [1, 3, 2, 0];
    let prog = [
        bin(B::Add, rd(2, "xy"), c(4).sw("wzyx").neg(), v(0)),
        Instr::Loop {
            i: 0,
            dst: 2,
            num: 0,
        },
        mova(r(2), "x"),
        END,
    ];
    let p = build(&prog);
    let mut st = UnitState::default();
    st.inputs[0] = splat(10.0);
    st.temps[2] = splat(-1.0);
    let mut rec = Recorder::new();
    run(
        &p,
        &u,
        &mut st,
        0,
        &ExecConfig::default(),
        &mut rec,
        &mut (),
    )
    .unwrap();
    let s = &rec.steps;
    assert_eq!(
        s.iter().map(|s| s.pc).collect::<Vec<_>>(),
        vec![0, 1, 2, 2, 3]
    );
    assert_eq!(s[0].src_count, 2);
    assert_eq!(s[0].srcs[0], [-4.0, -3.0, -2.0, -1.0]);
    assert_eq!(s[0].srcs[1], splat(10.0));
    assert_eq!(
        s[0].dst,
        Some((DstReg::Temp(2), splat(-1.0), [6.0, 7.0, -1.0, -1.0]))
    );
    assert_eq!(s[0].next_pc, 1);
    assert_eq!(
        (s[1].al, s[1].loop_remaining, s[1].stack_depths),
        (3, Some(1), [0, 0, 1])
    );
    assert_eq!((s[2].a0, s[2].al, s[2].next_pc), ([6, 0], 5, 2));
    assert_eq!(
        (
            s[3].al,
            s[3].loop_remaining,
            s[3].stack_depths,
            s[3].next_pc
        ),
        (7, None, [0, 0, 0], 3)
    );
    assert_eq!(s[3].dst, None);
    // Tracing does not change results.
    let mut st2 = UnitState::default();
    st2.inputs[0] = splat(10.0);
    st2.temps[2] = splat(-1.0);
    run(
        &p,
        &u,
        &mut st2,
        0,
        &ExecConfig::default(),
        &mut (),
        &mut (),
    )
    .unwrap();
    assert_eq!(st, st2);
    let mut hist = PcHistogram::default();
    run(
        &p,
        &u,
        &mut st2,
        0,
        &ExecConfig::default(),
        &mut hist,
        &mut (),
    )
    .unwrap();
    assert_eq!(hist.counts, vec![1, 1, 2, 1]);
}

// ----- batches and state persistence -----

#[test]
fn batch_api_matches_single_runs_and_persists_state() {
    let mut u = Uniforms::default();
    u.f[0] = splat(1.0);
    // r0 counts invocations (state persists); o0 = v0 + r0; o2 = v1.
    let p = build(&[
        bin(B::Add, rd(0, "xyzw"), c(0), r(0)),
        bin(B::Add, o(0, "xyzw"), v(0), r(0)),
        mov(o(2, "xyzw"), v(1)),
        END,
    ]);
    let n = 5;
    let mut inputs = VertexBatch::new(n, 0b11);
    for (i, vtx) in inputs.reg_mut(0).unwrap().iter_mut().enumerate() {
        *vtx = splat(10.0 * i as f32);
    }
    for (i, vtx) in inputs.reg_mut(1).unwrap().iter_mut().enumerate() {
        *vtx = splat(-(i as f32));
    }
    let mut outputs = VertexBatch::new(n, 0b101);
    let mut e = Interpreter::default();
    let stats = e.run_batch(&p, &u, 0, &inputs, &mut outputs).unwrap();
    assert_eq!(stats.vertices, n);
    assert_eq!(stats.instructions, 4 * n as u64);
    for i in 0..n {
        assert_eq!(
            outputs.reg(0).unwrap()[i],
            splat(10.0 * i as f32 + (i + 1) as f32)
        );
        assert_eq!(outputs.reg(2).unwrap()[i], splat(-(i as f32)));
    }
    assert!(outputs.reg(1).is_none());
    assert_eq!(e.state().temps[0], splat(n as f32));
    // Registers a batch does not carry keep their previous contents.
    let only_v0 = VertexBatch::new(1, 0b1);
    let mut out = VertexBatch::new(1, 0b100);
    e.run_batch(&p, &u, 0, &only_v0, &mut out).unwrap();
    assert_eq!(out.reg(2).unwrap()[0], splat(-4.0));
    // Errors name the vertex.
    let bad = build(&[Instr::Break]);
    let err = e.run_batch(&bad, &u, 0, &inputs, &mut outputs).unwrap_err();
    assert_eq!(err.vertex, 0);
    // Batch layout helpers.
    let mut b = VertexBatch::new(2, 0b1010_0000_0000_0001);
    assert_eq!(
        (b.len(), b.mask(), b.is_empty()),
        (2, 0b1010_0000_0000_0001, false)
    );
    let mut regs = [[0.0; 4]; 16];
    regs[13] = splat(3.0);
    regs[15] = splat(5.0);
    b.store_vertex(1, &regs);
    assert_eq!(b.reg(13).unwrap()[1], splat(3.0));
    assert_eq!(b.reg(15).unwrap()[1], splat(5.0));
    assert!(b.reg(14).is_none() && b.reg(16).is_none());
    let mut back = [[9.0; 4]; 16];
    b.load_vertex(1, &mut back);
    assert_eq!(
        (back[0], back[1], back[15]),
        ([0.0; 4], [9.0; 4], splat(5.0))
    );
}

#[test]
fn engines_are_interchangeable_through_the_trait() {
    fn shade<E: ShaderEngine>(
        e: &mut E,
        p: &Program,
        u: &Uniforms,
        i: &VertexBatch,
    ) -> VertexBatch {
        let mut out = VertexBatch::new(i.len(), 0b1);
        e.run_batch(p, u, 0, i, &mut out).unwrap();
        out
    }
    let p = build(&[bin(B::Dp4, o(0, "xyzw"), v(0), v(0)), END]);
    let mut inputs = VertexBatch::new(3, 1);
    inputs
        .reg_mut(0)
        .unwrap()
        .copy_from_slice(&[splat(1.0), splat(2.0), splat(3.0)]);
    let mut e = Interpreter::default();
    assert_eq!(e.name(), "interp");
    let out = shade(&mut e, &p, &Uniforms::default(), &inputs);
    assert_eq!(out.reg(0).unwrap(), &[splat(4.0), splat(16.0), splat(36.0)]);
}

#[test]
fn round_f24_mode() {
    let u = Uniforms::default();
    let prog = [bin(B::Mul, o(0, "x"), v(0), v(1)), END];
    let cfg = ExecConfig {
        round_f24: true,
        ..ExecConfig::default()
    };
    let r = run_cfg(&prog, &[x(0.1), x(1.0)], &u, cfg);
    assert_eq!(r.state.outputs[0][0], crate::float::round_to_f24(0.1));
    assert_ne!(r.state.outputs[0][0], 0.1);
}

#[test]
fn uniform_register_helpers() {
    let mut u = Uniforms::default();
    u.set_bools(0x7FFF_8005);
    assert_eq!(u.bools(), 0x8005);
    assert!(u.b[0] && u.b[2] && u.b[15] && !u.b[1]);
    u.set_int(2, 0x0403_0201);
    assert_eq!(u.i[2], [1, 2, 3, 4]);
}

// ----- fuzz-style property tests -----

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_programs_never_panic_and_terminate(
        code in proptest::collection::vec(any::<u32>(), 0..48),
        descs in proptest::collection::vec(any::<u32>(), 0..40),
        floats in proptest::collection::vec(any::<u32>(), 0..16),
        ints in any::<[u8; 16]>(),
        bools in any::<u16>(),
        entry in 0u32..64,
        flush in any::<bool>(),
    ) {
        let p = Program::new(&code, &descs);
        let mut u = Uniforms::default();
        for (i, f) in floats.iter().enumerate() {
            u.f[i * 5 % 96] = [f32::from_bits(*f), f32::from_bits(f.rotate_left(8)), 1.0, -0.0];
        }
        for k in 0..4 {
            u.i[k] = [ints[4 * k], ints[4 * k + 1], ints[4 * k + 2], ints[4 * k + 3]];
        }
        u.set_bools(u32::from(bools));
        let cfg = ExecConfig { budget: 4000, flush, ..ExecConfig::default() };
        let mut st = UnitState::default();
        let mut rec = Recorder::new();
        let mut prims: Vec<EmittedPrimitive> = Vec::new();
        let r = run(&p, &u, &mut st, entry, &cfg, &mut rec, &mut prims);
        prop_assert!(rec.steps.len() as u64 <= cfg.budget);
        if let Ok(stats) = r {
            prop_assert_eq!(stats.instructions, rec.steps.len() as u64);
        }
        // Untraced run from the same start state gives the same result.
        let mut st2 = UnitState::default();
        let r2 = run(&p, &u, &mut st2, entry, &cfg, &mut (), &mut Vec::<EmittedPrimitive>::new());
        prop_assert_eq!(r.map(|s| s.instructions), r2.map(|s| s.instructions));
    }
}

#[test]
fn input_permutation_and_output_compaction() {
    let mut st = UnitState::default();
    st.inputs[7] = splat(-7.0);
    let attrs = [splat(0.0), splat(1.0), splat(2.0)];
    // slot 0 -> v3, slot 1 -> v0, slot 2 -> v15; v7 untouched.
    load_permuted_inputs(&mut st, &attrs, 0xF03);
    assert_eq!(
        (st.inputs[3], st.inputs[0], st.inputs[15], st.inputs[7]),
        (splat(0.0), splat(1.0), splat(2.0), splat(-7.0))
    );
    // The high word maps attribute 8.
    let many = [splat(8.0); 9];
    load_permuted_inputs(&mut st, &many, 0x5_0000_0000 | 0x7654_3210);
    assert_eq!(st.inputs[5], splat(8.0));
    let mut outs = [[0.0; 4]; 16];
    for (i, o) in outs.iter_mut().enumerate() {
        *o = splat(i as f32);
    }
    let mut slots = [[-1.0; 4]; 16];
    // [3DB] Pitfalls example: mask 0x11 -> o0 in slot 0, o4 in slot 1.
    assert_eq!(compact_outputs(&outs, 0x11, &mut slots), 2);
    assert_eq!(
        (slots[0], slots[1], slots[2]),
        (splat(0.0), splat(4.0), splat(-1.0))
    );
    assert_eq!(compact_outputs(&outs, 0xFFFF, &mut slots), 16);
    assert_eq!(slots[15], splat(15.0));
}

#[test]
fn failed_runs_report_the_instructions_they_executed() {
    let u = Uniforms::default();
    let cfg = ExecConfig {
        budget: 1000,
        ..ExecConfig::default()
    };
    // Three NOPs, then the PC falls off the end: 3 executed.
    let p = build(&[NOP, NOP, NOP]);
    let mut st = UnitState::default();
    let (r, n) = run_counted(&p, &u, &mut st, 0, &cfg, &mut (), &mut ());
    assert_eq!(r, Err(ExecError::PcOutOfRange { pc: 3, len: 3 }));
    assert_eq!(n, 3);
    // An endless loop stops at the budget, having executed all of it.
    let p = build(&[
        Instr::JmpC {
            cond: cond(CondOp::X, false, false),
            dst: 0,
        },
        END,
    ]);
    let (r, n) = run_counted(&p, &u, &mut st, 0, &cfg, &mut (), &mut ());
    assert!(matches!(
        r,
        Err(ExecError::BudgetExceeded { budget: 1000, .. })
    ));
    assert_eq!(n, 1000);
    // The engine keeps the count of its last run, failed or not.
    let mut unit = Interpreter::new(cfg);
    let p = build(&[NOP, NOP]);
    assert!(unit.run_with(&p, &u, 0, &mut (), &mut ()).is_err());
    assert_eq!(unit.last_executed, 2);
    let p = build(&[NOP, END]);
    assert_eq!(
        unit.run_with(&p, &u, 0, &mut (), &mut ())
            .map(|s| s.instructions),
        Ok(2)
    );
    assert_eq!(unit.last_executed, 2);
}

/// A reset batch is the batch `new` makes (zero-filled, same shape), whatever it held before.
#[test]
fn reset_batch_equals_a_new_one() {
    let mut b = VertexBatch::new(7, 0b1011);
    for (i, vtx) in b.reg_mut(3).unwrap().iter_mut().enumerate() {
        *vtx = splat(i as f32 + 1.0);
    }
    for (len, mask) in [(3, 0b1011), (9, 0b1), (64, 0xFFFF), (0, 0b11), (5, 0b100)] {
        b.reset(len, mask);
        assert_eq!(b, VertexBatch::new(len, mask), "len {len} mask {mask:#x}");
        if let Some(r) = b.reg_mut(mask.trailing_zeros() as usize) {
            r.iter_mut().for_each(|v| *v = splat(-2.0));
        }
    }
}
