//! The standalone `.shbin` debugger's inputs: the input registers v0-v15 and every uniform
//! (c0-c95, i0-i3, b0-b15) as the user edits them, their defaults from the DVLE's constant
//! table, the names the DVLE gives registers (uniform table symbols, output semantics), and the
//! instruction budget. [`ShaderInputs`] is what the preferences remember per file and DVLE.
//!
//! Stage: vertex/geometry shader, run for inspection. Input: a parsed [`Dvle`] and the edited
//! texts. Output: the unit state and [`Uniforms`] of a run, or which field could not be read.

use serde::{Deserialize, Serialize};
use shader_unit::dvlb::{Dvle, OutputSemantic, UniformRegister};
use shader_unit::interp::{DEFAULT_BUDGET, Uniforms};

use super::shader_debug::{MAX_TRACE_STEPS, dvle_uniforms};

/// Names of the input and output registers (empty when the DVLE names none).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegNames {
    /// v0-v15: the uniform table's input symbols.
    pub inputs: [String; 16],
    /// o0-o15: the output table's semantics (`position`, `color`, …), several joined by `/`.
    pub outputs: [String; 16],
    /// c0-c95: uniform symbols (`projection[2]` for array elements).
    pub floats: Vec<String>,
    /// i0-i3.
    pub ints: [String; 4],
    /// b0-b15.
    pub bools: [String; 16],
}

impl RegNames {
    /// The names a DVLE gives its registers.
    pub fn of(dvle: &Dvle) -> Self {
        let mut n = RegNames {
            floats: vec![String::new(); 96],
            ..RegNames::default()
        };
        for u in &dvle.uniforms {
            let len = u.len();
            for i in 0..len {
                let name = if len > 1 {
                    format!("{}[{i}]", u.name)
                } else {
                    u.name.clone()
                };
                let i = u8::try_from(i).unwrap_or(u8::MAX);
                let slot = match u.start_register() {
                    UniformRegister::Input(r) => n.inputs.get_mut(usize::from(r.saturating_add(i))),
                    UniformRegister::Float(r) => n.floats.get_mut(usize::from(r.saturating_add(i))),
                    UniformRegister::Int(r) => n.ints.get_mut(usize::from(r.saturating_add(i))),
                    UniformRegister::Bool(r) => n.bools.get_mut(usize::from(r.saturating_add(i))),
                    _ => None,
                };
                if let Some(s) = slot
                    && s.is_empty()
                {
                    *s = name;
                }
            }
        }
        for o in &dvle.outputs {
            let sem = semantic_name(o.semantic);
            if let Some(s) = n.outputs.get_mut(usize::from(o.register)) {
                if !s.is_empty() {
                    s.push('/');
                }
                s.push_str(&sem);
            }
        }
        n
    }

    /// `v0 aPosition` (or `v0`).
    pub fn input_label(&self, i: usize) -> String {
        label("v", i, self.inputs.get(i))
    }

    /// `o1 color` (or `o1`).
    pub fn output_label(&self, i: usize) -> String {
        label("o", i, self.outputs.get(i))
    }
}

fn label(prefix: &str, i: usize, name: Option<&String>) -> String {
    match name.filter(|n| !n.is_empty()) {
        Some(n) => format!("{prefix}{i} {n}"),
        None => format!("{prefix}{i}"),
    }
}

/// What the output map (SH_OUTMAP_MASK, 0x2BD for the vertex shader, and OUTMAP_O0-O6,
/// 0x050-0x056: one semantic byte per component of each compacted output slot) says output
/// registers carry, per o register (`position`, `color`, `texcoord0`, several joined by `/`).
/// `regs` is the PICA register file; missing registers count as 0.
pub fn outmap_names(regs: &[u32], mask_reg: usize) -> [String; 16] {
    let mut out: [String; 16] = Default::default();
    let mask = regs.get(mask_reg).copied().unwrap_or(0) & 0xFFFF;
    let mut slot = 0usize;
    for (o, name) in out.iter_mut().enumerate() {
        if mask & (1 << o) == 0 {
            continue;
        }
        let word = if slot < 7 {
            regs.get(0x050 + slot).copied().unwrap_or(0x1F1F_1F1F)
        } else {
            0x1F1F_1F1F
        };
        slot += 1;
        let mut names: Vec<&str> = Vec::new();
        for b in word.to_le_bytes() {
            let n = match b & 0x1F {
                0x00..=0x03 => "position",
                0x04..=0x07 => "normalquat",
                0x08..=0x0B => "color",
                0x0C | 0x0D => "texcoord0",
                0x0E | 0x0F => "texcoord1",
                0x10 => "texcoord0w",
                0x12..=0x14 => "view",
                0x16 | 0x17 => "texcoord2",
                0x1F => continue,
                _ => "unknown",
            };
            if !names.contains(&n) {
                names.push(n);
            }
        }
        *name = names.join("/");
    }
    out
}

/// An output semantic as picasso spells it (`position`, `texcoord0`, …).
pub fn semantic_name(s: OutputSemantic) -> String {
    s.picasso_name()
        .map_or_else(|| format!("semantic {}", s.to_raw()), str::to_string)
}

/// What the user typed for one run of a shader binary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ShaderInputs {
    /// v0-v15 as `x, y, z, w`.
    pub inputs: Vec<String>,
    /// c0-c95 as `x, y, z, w`.
    pub floats: Vec<String>,
    /// i0-i3 as `x, y, z, w` (unsigned bytes: iterations − 1, aL start, aL step, unused).
    pub ints: Vec<String>,
    /// b0-b15, bit n = bN.
    pub bools: u16,
    /// Most instructions the run may execute.
    pub budget: u64,
}

impl Default for ShaderInputs {
    fn default() -> Self {
        Self {
            inputs: vec!["0, 0, 0, 1".into(); 16],
            floats: vec!["0, 0, 0, 0".into(); 96],
            ints: vec!["0, 0, 0, 0".into(); 4],
            bools: 0,
            // The pipeline's budget, limited to what one recorded run keeps.
            budget: DEFAULT_BUDGET.min(MAX_TRACE_STEPS),
        }
    }
}

fn vec_text(v: &[f32; 4]) -> String {
    format!("{}, {}, {}, {}", v[0], v[1], v[2], v[3])
}

impl ShaderInputs {
    /// The defaults for a DVLE: its constant table as uniforms, `v = (0, 0, 0, 1)`.
    pub fn for_dvle(dvle: &Dvle) -> Self {
        let u = dvle_uniforms(dvle);
        Self {
            floats: u.f.iter().map(vec_text).collect(),
            ints: u
                .i
                .iter()
                .map(|i| format!("{}, {}, {}, {}", i[0], i[1], i[2], i[3]))
                .collect(),
            bools: u
                .b
                .iter()
                .enumerate()
                .fold(0u16, |m, (i, b)| m | (u16::from(*b) << i)),
            ..Self::default()
        }
    }

    /// Brings a remembered (possibly older or hand-edited) value to the expected sizes.
    pub fn normalized(mut self) -> Self {
        let d = Self::default();
        self.inputs.resize(16, d.inputs[0].clone());
        self.floats.resize(96, d.floats[0].clone());
        self.ints.resize(4, d.ints[0].clone());
        if self.budget == 0 {
            self.budget = DEFAULT_BUDGET.min(MAX_TRACE_STEPS);
        }
        self
    }

    /// The input registers and uniforms, or the names of the fields that could not be read.
    pub fn parse(&self) -> Result<([[f32; 4]; 16], Uniforms), String> {
        let mut bad = Vec::new();
        let mut inputs = [[0.0f32; 4]; 16];
        for (i, t) in self.inputs.iter().enumerate().take(16) {
            match parse_vec4(t) {
                Some(v) => inputs[i] = v,
                None => bad.push(format!("v{i}")),
            }
        }
        let mut u = Uniforms::default();
        for (i, t) in self.floats.iter().enumerate().take(96) {
            match parse_vec4(t) {
                Some(v) => u.f[i] = v,
                None => bad.push(format!("c{i}")),
            }
        }
        for (i, t) in self.ints.iter().enumerate().take(4) {
            match parse_ivec4(t) {
                Some(v) => u.i[i] = v,
                None => bad.push(format!("i{i}")),
            }
        }
        for (i, b) in u.b.iter_mut().enumerate() {
            *b = self.bools & (1 << i) != 0;
        }
        if bad.is_empty() {
            Ok((inputs, u))
        } else {
            Err(format!(
                "cannot read {} (write up to four numbers separated by commas; integer uniforms take 0-255)",
                bad.join(", ")
            ))
        }
    }

    /// The budget actually used: the recorder keeps at most [`MAX_TRACE_STEPS`] steps.
    pub fn effective_budget(&self) -> u64 {
        self.budget.clamp(1, MAX_TRACE_STEPS)
    }
}

/// Parses `x, y, z, w` (missing components are 0, `w` defaults to 1 when only three are given).
pub fn parse_vec4(text: &str) -> Option<[f32; 4]> {
    let parts: Vec<&str> = text
        .split([',', ' '])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut v = [0.0, 0.0, 0.0, if parts.len() == 3 { 1.0 } else { 0.0 }];
    for (slot, p) in v.iter_mut().zip(&parts) {
        *slot = p.parse().ok()?;
    }
    Some(v)
}

/// Parses up to four unsigned bytes separated by commas or spaces (missing ones are 0).
pub fn parse_ivec4(text: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = text
        .split([',', ' '])
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut v = [0u8; 4];
    for (slot, p) in v.iter_mut().zip(&parts) {
        *slot = p.parse().ok()?;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "
.fvec projection[4]
.fvec tint
.ivec loops
.bool flag
.constf half(0.5, 0.5, 0.5, 0.5)
.out outpos position
.out outclr color
.in aPosition v0
.in aColor v1
.proc main
    mov outpos, v0
    mul outclr, tint, v1
    end
.end
";

    fn dvle() -> Dvle {
        let bytes = shader_unit::asm::assemble_to_shbin(&[("t.v.pica", SRC)]).expect("assembles");
        let dvlb = shader_unit::dvlb::Dvlb::parse(&bytes).expect("parses");
        dvlb.dvles[0].clone()
    }

    #[test]
    fn names_come_from_the_uniform_table_and_output_semantics() {
        let d = dvle();
        let n = RegNames::of(&d);
        assert_eq!(n.input_label(0), "v0 aPosition");
        assert_eq!(n.input_label(1), "v1 aColor");
        assert_eq!(n.input_label(2), "v2");
        assert_eq!(n.output_label(0), "o0 position");
        assert_eq!(n.output_label(1), "o1 color");
        assert!(
            n.floats.iter().any(|f| f == "projection[3]"),
            "{:?}",
            n.floats
        );
        assert!(n.floats.iter().any(|f| f == "tint"));
    }

    #[test]
    fn defaults_hold_the_constants_and_parse_back() {
        let d = dvle();
        let s = ShaderInputs::for_dvle(&d);
        let (inputs, u) = s.parse().expect("defaults parse");
        assert_eq!(inputs[0], [0.0, 0.0, 0.0, 1.0]);
        assert!(u.f.contains(&[0.5, 0.5, 0.5, 0.5]));
        let mut bad = s.clone();
        bad.floats[7] = "x".into();
        bad.ints[1] = "300".into();
        let e = bad.parse().expect_err("bad fields");
        assert!(e.contains("c7") && e.contains("i1"), "{e}");
        let short = ShaderInputs {
            floats: vec![],
            ..ShaderInputs::default()
        }
        .normalized();
        assert_eq!(short.floats.len(), 96);
    }

    #[test]
    fn output_map_names_the_enabled_registers() {
        let mut regs = vec![0u32; 0x300];
        regs[0x2BD] = 0b101; // o0 and o2
        regs[0x050] = 0x0302_0100; // slot 0: position xyzw
        regs[0x051] = 0x1F1F_0D0C; // slot 1: texcoord0 uv
        let n = outmap_names(&regs, 0x2BD);
        assert_eq!(n[0], "position");
        assert_eq!(n[1], "");
        assert_eq!(n[2], "texcoord0");
    }

    #[test]
    fn vec_parsing() {
        assert_eq!(parse_vec4("1, 2, 3, 4"), Some([1.0, 2.0, 3.0, 4.0]));
        assert_eq!(parse_vec4("1 2 3"), Some([1.0, 2.0, 3.0, 1.0]));
        assert_eq!(parse_vec4("0.5"), Some([0.5, 0.0, 0.0, 0.0]));
        assert_eq!(parse_vec4(""), None);
        assert_eq!(parse_vec4("a, b"), None);
        assert_eq!(parse_vec4("1,2,3,4,5"), None);
        assert_eq!(parse_ivec4("3, 0, 1"), Some([3, 0, 1, 0]));
        assert_eq!(parse_ivec4("256"), None);
    }
}
