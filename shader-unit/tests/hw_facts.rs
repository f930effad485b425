//! Hardware-measured shader-unit behaviour (testdata/hw-facts.md §2, issue 20): one test per fact,
//! named `hw_<fact id>_...`, asserting what the console did. The table of all facts, with the
//! test that covers each, is `docs/hardware-behaviour.md` (kept in step by
//! `tests/tests/hw_facts_table.rs`).
//!
//! The shaders are built from typed instructions, encoded with `encode_program` and decoded
//! again (`Program::new`), then run on the reference interpreter with the default configuration
//! (hardware subnormal flushing on). The floating-point cases SH-1 to SH-8 are aroulin's
//! `fp-tests` (41 cases, all listed in testdata/hw-expectations.md), which classify each result as
//! +inf, −inf, NaN, 0, 1 or "another number"; the tests here assert the same classes.

use shader_unit::decode::{
    BinaryOp, Dst, DstReg, Instr, Program, RelAddr, Src, SrcReg, UnaryOp, decode, encode_program,
};
use shader_unit::interp::{
    ExecConfig, OUT_OF_RANGE_UNIFORM, RELATIVE_UNIFORM_RULE, RelativeUniformRule, Uniforms,
    UnitState, Vec4, run,
};

// ----- builder ---------------------------------------------------------------------------

fn v(i: u8) -> Src {
    Src::plain(SrcReg::Input(i))
}
fn r(i: u8) -> Src {
    Src::plain(SrcReg::Temp(i))
}
fn c(i: u8) -> Src {
    Src::plain(SrcReg::Const(i))
}
fn rel(mut s: Src, a: RelAddr) -> Src {
    s.rel = a;
    s
}
fn swz(mut s: Src, sw: [u8; 4]) -> Src {
    s.swizzle = sw;
    s
}
fn neg(mut s: Src) -> Src {
    s.negate = !s.negate;
    s
}
/// o`i`.xyzw
fn o(i: u8) -> Dst {
    Dst {
        reg: DstReg::Output(i),
        mask: 0xF,
    }
}
/// o`i` with a write mask (bit 3 = x … bit 0 = w).
fn om(i: u8, mask: u8) -> Dst {
    Dst {
        reg: DstReg::Output(i),
        mask,
    }
}
fn rd(i: u8) -> Dst {
    Dst {
        reg: DstReg::Temp(i),
        mask: 0xF,
    }
}
fn bin(op: BinaryOp, dst: Dst, a: Src, b: Src) -> Instr {
    Instr::Binary {
        op,
        dst,
        src1: a,
        src2: b,
        inverted: false,
        desc: 0,
    }
}
/// The inverted form (DPHI, SGEI, SLTI): src1 is the 5-bit operand, src2 the 7-bit one.
fn bini(op: BinaryOp, dst: Dst, a: Src, b: Src) -> Instr {
    Instr::Binary {
        op,
        dst,
        src1: a,
        src2: b,
        inverted: true,
        desc: 0,
    }
}
fn un(op: UnaryOp, dst: Dst, a: Src) -> Instr {
    Instr::Unary {
        op,
        dst,
        src: a,
        desc: 0,
    }
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
fn mova(a: Src, mask: u8) -> Instr {
    Instr::Mova {
        src: a,
        mask,
        dst_raw: 0,
        desc: 0,
    }
}

/// Gives every instruction with an operand descriptor its own slot, encodes and decodes.
fn build(instrs: &[Instr]) -> Program {
    let mut next = 0u8;
    let with_desc: Vec<Instr> = instrs
        .iter()
        .map(|i| {
            let mut i = *i;
            if let Instr::Binary { desc, .. }
            | Instr::Unary { desc, .. }
            | Instr::Mova { desc, .. }
            | Instr::Cmp { desc, .. }
            | Instr::Mad { desc, .. } = &mut i
            {
                *desc = next;
                next += 1;
            }
            i
        })
        .collect();
    let (code, descs) = encode_program(&with_desc).expect("test program encodes");
    let p = Program::new(&code, &descs);
    assert_eq!(p.instrs(), &with_desc[..], "encode/decode round trip");
    p
}

fn exec(p: &Program, inputs: &[Vec4], u: &Uniforms, state: &mut UnitState) {
    for (i, x) in inputs.iter().enumerate() {
        state.inputs[i] = *x;
    }
    run(p, u, state, 0, &ExecConfig::default(), &mut (), &mut ()).expect("shader runs to END");
}

/// Runs `instrs` (END appended) on fresh state; returns o0.
fn run_o0(instrs: &[Instr], inputs: &[Vec4], u: &Uniforms) -> Vec4 {
    let mut prog = instrs.to_vec();
    prog.push(Instr::End);
    let p = build(&prog);
    let mut st = UnitState::default();
    exec(&p, inputs, u, &mut st);
    st.outputs[0]
}

/// The result classes of aroulin's fp-tests (colour of the full-screen quad).
#[derive(Debug, PartialEq, Clone, Copy)]
enum Class {
    PosInf,
    NegInf,
    NaN,
    Zero,
    One,
    Other,
}

fn class(x: f32) -> Class {
    if x.is_nan() {
        Class::NaN
    } else if x == f32::INFINITY {
        Class::PosInf
    } else if x == f32::NEG_INFINITY {
        Class::NegInf
    } else if x == 0.0 {
        Class::Zero
    } else if x == 1.0 {
        Class::One
    } else {
        Class::Other
    }
}

const INF: f32 = f32::INFINITY;
const NAN: f32 = f32::NAN;

/// `op(a, b)` lane x, with a and b from v0.x and v1.x.
fn binary_x(op: BinaryOp, a: f32, b: f32) -> f32 {
    run_o0(
        &[bin(op, o(0), v(0), v(1))],
        &[[a, 0.0, 0.0, 0.0], [b, 0.0, 0.0, 0.0]],
        &Uniforms::default(),
    )[0]
}

/// The inverted form `op(a, b)` with a = v0.x (5-bit src1) and b = c0.x (7-bit src2).
fn binary_inverted_x(op: BinaryOp, a: f32, b: f32) -> f32 {
    let mut u = Uniforms::default();
    u.f[0] = [b, 0.0, 0.0, 0.0];
    run_o0(&[bini(op, o(0), v(0), c(0))], &[[a, 0.0, 0.0, 0.0]], &u)[0]
}

fn unary(op: UnaryOp, x: Vec4) -> Vec4 {
    run_o0(&[un(op, o(0), v(0))], &[x], &Uniforms::default())
}

// ----- SH-1 … SH-8: aroulin fp-tests --------------------------------------------------------

#[test]
fn hw_sh1_infinity_times_zero_is_zero() {
    // fp-tests cases 20, 21, 24, 26, 27 (and the DP4 of the fact text).
    assert_eq!(class(binary_x(BinaryOp::Mul, INF, 0.0)), Class::Zero);
    assert_eq!(class(binary_x(BinaryOp::Mul, 0.0, INF)), Class::Zero);
    let m = run_o0(
        &[mad(o(0), v(0), v(1), v(2))],
        &[[INF; 4], [0.0; 4], [1.0; 4]],
        &Uniforms::default(),
    );
    assert_eq!(m.map(class), [Class::One; 4], "mad(+inf, 0, 1)");
    let dp = |op, a: Vec4, b: Vec4| {
        run_o0(&[bin(op, o(0), v(0), v(1))], &[a, b], &Uniforms::default())[0]
    };
    assert_eq!(
        dp(BinaryOp::Dp4, [INF, 1.0, 0.0, 1.0], [0.0, 1.0, INF, 1.0]),
        2.0
    );
    assert_eq!(
        class(dp(
            BinaryOp::Dp3,
            [INF, INF, 0.0, 0.0],
            [0.0, 0.0, INF, 0.0]
        )),
        Class::Zero
    );
    assert_eq!(
        class(dp(
            BinaryOp::Dph,
            [INF, INF, INF, 0.0],
            [0.0, 0.0, 0.0, 1.0]
        )),
        Class::One
    );
}

#[test]
fn hw_sh2_nan_times_zero_stays_nan() {
    // Cases 22, 23: only infinity is zeroed.
    assert_eq!(class(binary_x(BinaryOp::Mul, NAN, 0.0)), Class::NaN);
    assert_eq!(class(binary_x(BinaryOp::Mul, 0.0, NAN)), Class::NaN);
}

#[test]
fn hw_sh3_infinity_minus_infinity_is_nan() {
    // Case 19.
    assert_eq!(class(binary_x(BinaryOp::Add, INF, -INF)), Class::NaN);
}

#[test]
fn hw_sh4_min_max_return_the_second_operand_unless_the_comparison_holds() {
    use BinaryOp::{Max, Min};
    // Cases 9-18. Case 10 (max(0, -inf)) is the test ROM's expectation 0; 3dbrew says -inf
    // (shader_unit::interp::alu::MAX_INF_RULE documents that choice).
    let cases = [
        (Max, 0.0, INF, Class::PosInf),
        (Max, 0.0, -INF, Class::Zero),
        (Max, 0.0, NAN, Class::NaN),
        (Max, NAN, 0.0, Class::Zero),
        (Max, -INF, INF, Class::PosInf),
        (Min, 0.0, INF, Class::Zero),
        (Min, 0.0, -INF, Class::NegInf),
        (Min, 0.0, NAN, Class::NaN),
        (Min, NAN, 0.0, Class::Zero),
        (Min, -INF, INF, Class::NegInf),
    ];
    for (op, a, b, want) in cases {
        assert_eq!(class(binary_x(op, a, b)), want, "{op:?}({a}, {b})");
    }
}

#[test]
fn hw_sh5_rcp_and_rsq_edge_values() {
    // Cases 0-8.
    let cases = [
        (UnaryOp::Rcp, 0.0, Class::PosInf),
        (UnaryOp::Rcp, INF, Class::Zero),
        (UnaryOp::Rcp, NAN, Class::NaN),
        (UnaryOp::Rsq, 0.0, Class::PosInf),
        (UnaryOp::Rsq, 1.0, Class::One),
        (UnaryOp::Rsq, -1.0, Class::NaN),
        (UnaryOp::Rsq, INF, Class::Zero),
        (UnaryOp::Rsq, -INF, Class::NaN),
        (UnaryOp::Rsq, NAN, Class::NaN),
    ];
    for (op, x, want) in cases {
        assert_eq!(class(unary(op, [x; 4])[0]), want, "{op:?}({x})");
    }
}

#[test]
fn hw_sh6_zero_has_no_sign_and_ex2_lg2_at_infinities() {
    // Cases 37-40: rsq(rcp(-inf)) = +inf (no negative zero), ex2(-inf) = 0,
    // lg2(rcp(-inf)) = -inf, lg2(-1) = NaN.
    let u = Uniforms::default();
    let neg_inf = [[-INF; 4]];
    let rsq_rcp = run_o0(
        &[un(UnaryOp::Rcp, rd(0), v(0)), un(UnaryOp::Rsq, o(0), r(0))],
        &neg_inf,
        &u,
    );
    assert_eq!(class(rsq_rcp[0]), Class::PosInf);
    let lg2_rcp = run_o0(
        &[un(UnaryOp::Rcp, rd(0), v(0)), un(UnaryOp::Lg2, o(0), r(0))],
        &neg_inf,
        &u,
    );
    assert_eq!(class(lg2_rcp[0]), Class::NegInf);
    assert_eq!(class(unary(UnaryOp::Ex2, [-INF; 4])[0]), Class::Zero);
    assert_eq!(class(unary(UnaryOp::Lg2, [-1.0; 4])[0]), Class::NaN);
}

#[test]
fn hw_sh7_comparisons_with_nan_give_zero() {
    // Cases 28-35: SGE, SGEI, SLT, SLTI with NaN in either operand.
    for op in [BinaryOp::Sge, BinaryOp::Slt] {
        for (a, b) in [(0.0, NAN), (NAN, 0.0)] {
            assert_eq!(class(binary_x(op, a, b)), Class::Zero, "{op:?}({a}, {b})");
            assert_eq!(
                class(binary_inverted_x(op, a, b)),
                Class::Zero,
                "{op:?}I({a}, {b})"
            );
        }
    }
    // And the triangle tests (sgei/slt/slti-tests): ordinary operands compare as usual.
    assert_eq!(binary_inverted_x(BinaryOp::Sge, 1.0, 0.5), 1.0);
    assert_eq!(binary_inverted_x(BinaryOp::Slt, 0.25, 0.5), 1.0);
    assert_eq!(binary_x(BinaryOp::Slt, 0.5, 0.25), 0.0);
}

#[test]
fn hw_sh8_flr_rounds_toward_negative_infinity() {
    // Case 36: -flr(-0.1) = 1.
    let got = run_o0(
        &[
            un(UnaryOp::Flr, rd(0), v(0)),
            un(UnaryOp::Mov, o(0), neg(r(0))),
        ],
        &[[-0.1; 4]],
        &Uniforms::default(),
    );
    assert_eq!(got, [1.0; 4]);
}

// ----- SH-9 … SH-20 ---------------------------------------------------------------------

#[test]
fn hw_sh9_scalar_instructions_read_only_x_and_broadcast() {
    // aroulin rcp/rsq/ex2/lg2-tests.
    assert_eq!(unary(UnaryOp::Rcp, [1.0, 10.0, 10.0, 10.0]), [1.0; 4]);
    let rsq = unary(UnaryOp::Rsq, [100.0, 1.0, 1.0, 1.0]);
    for x in rsq {
        assert!((x - 0.1).abs() < 1e-6, "{rsq:?}");
    }
    assert_eq!(unary(UnaryOp::Ex2, [0.0, -100.0, -100.0, 1.0]), [1.0; 4]);
    assert_eq!(unary(UnaryOp::Lg2, [2.0, 1.0, 1.0, 1.0]), [1.0; 4]);
    // A write mask limits the broadcast to the enabled lanes.
    let masked = run_o0(
        &[
            un(UnaryOp::Mov, o(0), c(1)),
            un(UnaryOp::Rcp, om(0, 0b1010), v(0)),
        ],
        &[[4.0, 2.0, 8.0, 16.0]],
        &{
            let mut u = Uniforms::default();
            u.f[1] = [9.0; 4];
            u
        },
    );
    assert_eq!(masked, [0.25, 9.0, 0.25, 9.0]);
}

#[test]
fn hw_sh10_dph_and_dphi_replace_the_first_operands_w_with_one() {
    // aroulin dph-tests / dphi-tests: a.w = 0, b.w = 1 gives 1; a.w = 1, b.w = 0 gives 0.
    let zero_xyz = |w| [0.0, 0.0, 0.0, w];
    for (aw, bw, want) in [(0.0, 1.0, 1.0), (1.0, 0.0, 0.0)] {
        let dph = run_o0(
            &[bin(BinaryOp::Dph, o(0), v(0), v(1))],
            &[zero_xyz(aw), zero_xyz(bw)],
            &Uniforms::default(),
        );
        assert_eq!(dph[0], want, "dph a.w={aw} b.w={bw}");
        // DPHI: the vertex colour (v0, the 5-bit operand) first, the uniform second; the first
        // operand's w is replaced again.
        let mut u = Uniforms::default();
        u.f[0] = zero_xyz(bw);
        let dphi = run_o0(
            &[bini(BinaryOp::Dph, o(0), v(0), c(0))],
            &[zero_xyz(aw)],
            &u,
        );
        assert_eq!(dphi[0], want, "dphi a.w={aw} b.w={bw}");
    }
    // The xyz part is a plain dot product.
    let d = run_o0(
        &[bin(BinaryOp::Dph, o(0), v(0), v(1))],
        &[[1.0, 2.0, 3.0, 100.0], [4.0, 5.0, 6.0, 0.5]],
        &Uniforms::default(),
    );
    assert_eq!(d[0], 32.5);
}

#[test]
fn hw_sh11_mova_truncates_toward_zero() {
    // aroulin mova-tests "MOVA_RoundsTowardsZero": mova 0.9 gives a0 = 0. The shader reads
    // c[0 + a0.x]: c0 marks index 0, c1 index 1.
    let mut u = Uniforms::default();
    u.f[0] = [0.0; 4];
    u.f[1] = [1.0; 4];
    let got = run_o0(
        &[
            mova(v(0), 0b1000),
            un(UnaryOp::Mov, o(0), rel(c(0), RelAddr::A0X)),
        ],
        &[[0.9, 0.0, 0.0, 0.0]],
        &u,
    );
    assert_eq!(got, [0.0; 4]);
    let mut st = UnitState::default();
    let p = build(&[mova(v(0), 0b1100), Instr::End]);
    exec(&p, &[[0.9, 1.9, 0.0, 0.0]], &u, &mut st);
    assert_eq!(st.a0, [0, 1]);
}

#[test]
fn hw_sh12_relative_addressing_offsets_float_uniforms_only() {
    // Citra PR #6910: the a0/aL offset applies to c registers only; an IDX on a v or r operand
    // reads the unoffset register.
    let mut u = Uniforms::default();
    u.f[3] = [3.0; 4];
    u.f[5] = [5.0; 4];
    let inputs = [
        [2.0, 0.0, 0.0, 0.0], // v0: a0.x = 2
        [10.0; 4],            // v1
        [20.0; 4],            // v2
        [30.0; 4],            // v3: what v1 offset by a0.x = 2 would read
    ];
    let got = run_o0(
        &[
            mova(v(0), 0b1000),
            un(UnaryOp::Mov, o(0), rel(c(3), RelAddr::A0X)),
        ],
        &inputs,
        &u,
    );
    assert_eq!(got, [5.0; 4], "c3[a0.x = 2] reads c5");
    let p = build(&[
        mova(v(0), 0b1000),
        un(UnaryOp::Mov, rd(1), v(1)),
        un(UnaryOp::Mov, o(1), rel(v(1), RelAddr::A0X)),
        un(UnaryOp::Mov, o(2), rel(r(1), RelAddr::A0X)),
        Instr::End,
    ]);
    let mut st = UnitState::default();
    exec(&p, &inputs, &u, &mut st);
    assert_eq!(st.outputs[1], [10.0; 4], "v1 with IDX reads v1");
    assert_eq!(st.outputs[2], [10.0; 4], "r1 with IDX reads r1");
}

#[test]
fn hw_sh13_out_of_range_relative_uniform_reads_follow_the_chosen_claim() {
    // UNVERIFIED(SH-13): Panda3DS PR #786 and Citra PR #6910 disagree; the choice is the const
    // RELATIVE_UNIFORM_RULE. This test pins whichever rule is selected, with the worked
    // examples of its source.
    let mut u = Uniforms::default();
    for (i, f) in u.f.iter_mut().enumerate() {
        *f = [i as f32 + 0.5; 4];
    }
    // a0.x is loaded from v0.x (MOVA saturates nothing in this range).
    let read = |base: u8, a0: f32| {
        run_o0(
            &[
                mova(v(0), 0b1000),
                un(UnaryOp::Mov, o(0), rel(c(base), RelAddr::A0X)),
            ],
            &[[a0, 0.0, 0.0, 0.0]],
            &u,
        )
    };
    match RELATIVE_UNIFORM_RULE {
        RelativeUniformRule::WrapMod128 => {
            assert_eq!(read(40, 128.0), u.f[40], "c40[a0=128]: offset ignored");
            assert_eq!(
                read(40, -42.0),
                OUT_OF_RANGE_UNIFORM,
                "c40[a0=-42] -> index 126"
            );
            assert_eq!(read(40, -73.0), u.f[95], "c40[a0=-73] -> index 95");
            assert_eq!(
                read(0, -1.0),
                OUT_OF_RANGE_UNIFORM,
                "c0[a0=-1] -> index 127"
            );
            assert_eq!(
                read(90, 10.0),
                OUT_OF_RANGE_UNIFORM,
                "c90[a0=10] -> index 100"
            );
        }
        RelativeUniformRule::ZeroOutside => {
            // Steveice10's hardware test: a negative index drew (0, 0, 0, 0).
            assert_eq!(read(0, -1.0), [0.0; 4]);
            assert_eq!(read(90, 10.0), [0.0; 4]);
            assert_eq!(read(40, 10.0), u.f[50]);
        }
    }
}

#[test]
fn hw_sh14_mad_offsets_src2_and_madi_offsets_src3() {
    // Raw words (pica-core.md format 5 / 5i): MAD = dst[28:24] idx[23:22] src1[21:17] (5)
    // src2[16:10] (7) src3[9:5] (5) desc[4:0]; MADI = … src2[16:12] (5) src3[11:5] (7).
    // Descriptor: mask xyzw, identity swizzles, no negation.
    let ident = 0x1B;
    let desc = 0xF | (ident << 5) | (ident << 14) | (ident << 23);
    let dst_o0 = 0x00; // o0
    let idx_a0x = 1;
    let v0 = 0x00;
    let v1 = 0x01;
    let c_reg = |n: u32| 0x20 + n;
    let mad_word = (0b111 << 29)
        | (dst_o0 << 24)
        | (idx_a0x << 22)
        | (v0 << 17)
        | (c_reg(4) << 10)
        | (v1 << 5);
    let madi_word = (0b110 << 29)
        | (dst_o0 << 24)
        | (idx_a0x << 22)
        | (v0 << 17)
        | (v1 << 12)
        | (c_reg(4) << 5);
    let descs = [desc];
    match decode(mad_word, &descs) {
        Instr::Mad {
            src2,
            src3,
            inverted: false,
            ..
        } => {
            assert_eq!((src2.reg, src2.rel), (SrcReg::Const(4), RelAddr::A0X));
            assert_eq!((src3.reg, src3.rel), (SrcReg::Input(1), RelAddr::None));
        }
        other => panic!("MAD decoded as {other:?}"),
    }
    match decode(madi_word, &descs) {
        Instr::Mad {
            src2,
            src3,
            inverted: true,
            ..
        } => {
            assert_eq!((src2.reg, src2.rel), (SrcReg::Input(1), RelAddr::None));
            assert_eq!((src3.reg, src3.rel), (SrcReg::Const(4), RelAddr::A0X));
        }
        other => panic!("MADI decoded as {other:?}"),
    }
    // Executed: a0.x = 2 makes the indexed operand read c6.
    let mut u = Uniforms::default();
    u.f[4] = [4.0; 4];
    u.f[6] = [6.0; 4];
    // MOVA with mask xyzw (only x and y matter) and identity swizzle uses the same descriptor.
    let (head, _) = encode_program(&[mova(v(2), 0xF)]).expect("encodes");
    let (end, _) = encode_program(&[Instr::End]).expect("encodes");
    for (word, want) in [(mad_word, 2.0 * 6.0 + 3.0), (madi_word, 2.0 * 3.0 + 6.0)] {
        let code = [head[0], word, end[0]];
        let p = Program::new(&code, &descs);
        let mut st = UnitState::default();
        exec(&p, &[[2.0; 4], [3.0; 4], [2.0, 0.0, 0.0, 0.0]], &u, &mut st);
        assert_eq!(st.a0[0], 2);
        assert_eq!(st.outputs[0], [want; 4], "word {word:08x}");
    }
}

/// A GS program: each `(mask, value uniform)` writes o0 with that mask from c[value], then EMITs.
fn gs_emits(steps: &[(u8, u8)]) -> Vec<[Vec4; 16]> {
    struct Sink(Vec<[Vec4; 16]>);
    impl shader_unit::interp::EmitSink for Sink {
        fn vertex(&mut self, _slot: u8, outputs: &[Vec4; 16]) {
            self.0.push(*outputs);
        }
        fn primitive(&mut self, _v: [&[Vec4; 16]; 3], _w: bool) {}
    }
    let mut prog = Vec::new();
    for &(mask, src) in steps {
        prog.push(un(UnaryOp::Mov, om(0, mask), c(src)));
        prog.push(Instr::SetEmit {
            vertex_id: 0,
            prim_emit: false,
            winding: false,
        });
        prog.push(Instr::Emit);
    }
    prog.push(Instr::End);
    let p = build(&prog);
    let mut u = Uniforms::default();
    for (i, f) in u.f.iter_mut().enumerate().take(8) {
        *f = [
            10.0 * i as f32 + 1.0,
            10.0 * i as f32 + 2.0,
            10.0 * i as f32 + 3.0,
            10.0 * i as f32 + 4.0,
        ];
    }
    let mut st = UnitState::default();
    let mut sink = Sink(Vec::new());
    run(
        &p,
        &u,
        &mut st,
        0,
        &ExecConfig::default(),
        &mut (),
        &mut sink,
    )
    .expect("GS runs");
    sink.0
}

#[test]
fn hw_sh16_gs_outputs_alternate_between_two_banks() {
    // azahar PR #2338 (3D Thunderblade): the sprite GS writes
    //   1. o0.xyzw = leftTop          emit   -> top left
    //   2. o0.yzw = leftTop; o0.x = rightBottom  emit -> top right
    //   3. o0.y = rightBottom         emit   -> bottom LEFT on hardware: x is the value from two
    //                                            emits earlier (leftTop.x), not rightBottom.x
    //   4. o0.xyzw = rightBottom      emit   -> bottom right
    // c1 = leftTop (11, 12, 13, 14), c2 = rightBottom (21, 22, 23, 24).
    struct Sink(Vec<Vec4>);
    impl shader_unit::interp::EmitSink for Sink {
        fn vertex(&mut self, _slot: u8, outputs: &[Vec4; 16]) {
            self.0.push(outputs[0]);
        }
        fn primitive(&mut self, _v: [&[Vec4; 16]; 3], _w: bool) {}
    }
    let emit = [
        Instr::SetEmit {
            vertex_id: 0,
            prim_emit: false,
            winding: false,
        },
        Instr::Emit,
    ];
    let mut prog = vec![un(UnaryOp::Mov, o(0), c(1))];
    prog.extend(emit);
    prog.push(un(UnaryOp::Mov, om(0, 0b0111), c(1)));
    prog.push(un(UnaryOp::Mov, om(0, 0b1000), c(2)));
    prog.extend(emit);
    prog.push(un(UnaryOp::Mov, om(0, 0b0100), c(2)));
    prog.extend(emit);
    prog.push(un(UnaryOp::Mov, o(0), c(2)));
    prog.extend(emit);
    prog.push(Instr::End);
    let p = build(&prog);
    let mut u = Uniforms::default();
    u.f[1] = [11.0, 12.0, 13.0, 14.0];
    u.f[2] = [21.0, 22.0, 23.0, 24.0];
    let mut st = UnitState::default();
    let mut sink = Sink(Vec::new());
    run(
        &p,
        &u,
        &mut st,
        0,
        &ExecConfig::default(),
        &mut (),
        &mut sink,
    )
    .expect("GS runs");
    assert_eq!(
        sink.0,
        vec![
            [11.0, 12.0, 13.0, 14.0], // top left
            [21.0, 12.0, 13.0, 14.0], // top right
            [11.0, 22.0, 13.0, 14.0], // bottom left (single bank would give 21, 22, ...)
            [21.0, 22.0, 23.0, 24.0], // bottom right
        ]
    );
}

#[test]
fn hw_sh16_gs_unwritten_components_come_from_two_emits_back() {
    // The general rule: with only partial writes between emits, each emitted vertex alternates
    // between two independent register sets.
    // c0 = (1,2,3,4), c1 = (11,..), c2 = (21,..), c3 = (31,..)
    let v = gs_emits(&[(0xF, 0), (0xF, 1), (0x8, 2), (0x8, 3), (0x1, 2)]);
    let o0: Vec<Vec4> = v.iter().map(|o| o[0]).collect();
    assert_eq!(
        o0,
        vec![
            [1.0, 2.0, 3.0, 4.0],
            [11.0, 12.0, 13.0, 14.0],
            [21.0, 2.0, 3.0, 4.0],    // bank 0: x rewritten, yzw from emit 1
            [31.0, 12.0, 13.0, 14.0], // bank 1: x rewritten, yzw from emit 2
            [21.0, 2.0, 3.0, 24.0],   // bank 0 again: only w rewritten
        ]
    );
}

#[test]
fn hw_sh17_gs_state_persists_across_invocations() {
    // PR #3787: temporaries, integer/address registers and condition flags keep their values
    // from one invocation to the next (the interpreter never clears UnitState).
    // Invocation 1 sets r0, a0 and cmp; invocation 2 only reads them.
    let first = build(&[
        un(UnaryOp::Mov, rd(0), v(0)),
        mova(v(0), 0b1100),
        Instr::Cmp {
            src1: v(0),
            src2: v(1),
            op_x: shader_unit::decode::CmpOp::Gt,
            op_y: shader_unit::decode::CmpOp::Lt,
            desc: 0,
        },
        Instr::End,
    ]);
    let second = build(&[
        un(UnaryOp::Mov, o(0), r(0)),
        un(UnaryOp::Mov, o(1), rel(c(0), RelAddr::A0Y)),
        Instr::End,
    ]);
    let mut u = Uniforms::default();
    u.f[3] = [33.0; 4];
    let mut st = UnitState::default();
    exec(
        &first,
        &[[5.0, 3.0, 0.0, 0.0], [1.0, 9.0, 0.0, 0.0]],
        &u,
        &mut st,
    );
    assert_eq!(st.cmp, [true, true]);
    // New inputs for the next invocation; nothing else is reset.
    exec(&second, &[[0.0; 4], [0.0; 4]], &u, &mut st);
    assert_eq!(st.outputs[0], [5.0, 3.0, 0.0, 0.0]);
    assert_eq!(st.a0, [5, 3]);
    assert_eq!(st.outputs[1], [33.0; 4], "c0[a0.y = 3]");
    assert_eq!(st.cmp, [true, true]);
}

#[test]
fn hw_sh20_litp_semantics() {
    // Panda3DS tests/PICA_LITP: cmp.x = (x >= 0), cmp.y = (w >= 0); result
    // (max(x, 0), clamp(y, ±127.996), 0, max(w, 0)).
    let p = build(&[un(UnaryOp::Litp, o(0), v(0)), Instr::End]);
    let u = Uniforms::default();
    for (input, want, flags) in [
        (
            [0.5, 200.0, 7.0, 2.0],
            [0.5, 127.996_09, 0.0, 2.0],
            [true, true],
        ),
        (
            [-0.5, -300.0, 7.0, -2.0],
            [0.0, -127.996_09, 0.0, 0.0],
            [false, false],
        ),
        ([0.0, 5.0, 1.0, 0.0], [0.0, 5.0, 0.0, 0.0], [true, true]),
    ] {
        let mut st = UnitState::default();
        exec(&p, &[input], &u, &mut st);
        assert_eq!(st.outputs[0], want, "litp {input:?}");
        assert_eq!(st.cmp, flags, "flags of {input:?}");
    }
    // The swizzle applies before LITP.
    let p = build(&[un(UnaryOp::Litp, o(0), swz(v(0), [3, 2, 1, 0])), Instr::End]);
    let mut st = UnitState::default();
    exec(&p, &[[1.0, 2.0, 3.0, -4.0]], &u, &mut st);
    assert_eq!(st.outputs[0], [0.0, 3.0, 0.0, 1.0]);
}
