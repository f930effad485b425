//! `picaview shader run FILE.shbin [--entry N] --input v0=x,y,z,w … --uniform c4=x,y,z,w …
//! --int i0=x,y,z,w --bool b3=1 [--trace] [--json]`: runs one invocation of a compiled shader on
//! the reference interpreter and prints its output registers (and, with `--trace`, every step).
//!
//! The DVLE's constant table is applied first (as the loader does when it binds the program);
//! values given on the command line are applied after it and win. Registers may be named by
//! number (`v0`, `c4`, `i0`, `b3`), by the names in the DVLE's uniform table, or by an element
//! of an array uniform (`mtx[2]=...` is the third register of the array `mtx`).
//!
//! Bounded output: `--trace` keeps the first `--trace-limit` steps (default
//! [`DEFAULT_TRACE_LIMIT`]) and counts the rest; a geometry shader's primitives are kept up to
//! [`MAX_PRIMITIVES`] and counted beyond. JSON names registers as strings (`"reg": "o1"`), as
//! the rest of picaview's JSON does.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use shader_unit::decode::{DstReg, Instr, Program, RegRef};
use shader_unit::disasm::instruction_text;
use shader_unit::dvlb::{ConstantValue, Dvle, ShaderFile, ShaderKind, UniformRegister};
use shader_unit::float::F24;
use shader_unit::interp::{
    EmitSink, EmittedPrimitive, ExecConfig, Interpreter, RunStats, ShaderTracer, StepRecord,
    Uniforms, Vec4,
};

/// Arguments of `picaview shader`.
#[derive(clap::Args, Debug)]
pub struct ShaderArgs {
    #[command(subcommand)]
    command: ShaderCommand,
}

#[derive(clap::Subcommand, Debug)]
enum ShaderCommand {
    /// Run one invocation of a shader and print its outputs.
    Run(RunArgs),
}

/// Arguments of `picaview shader run`.
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// Shader binary (`.shbin`, DVLB) or shader object (DVOJ).
    pub file: PathBuf,
    /// DVLE (executable) to run, 0-based.
    #[arg(long, default_value_t = 0)]
    pub entry: usize,
    /// Input register value, `v0=x,y,z,w` (1-4 components, missing ones are 0). Repeatable.
    #[arg(long = "input", value_name = "vN=x,y,z,w")]
    pub inputs: Vec<String>,
    /// Float uniform value, `c4=x,y,z,w`. Repeatable.
    #[arg(long = "uniform", value_name = "cN=x,y,z,w")]
    pub uniforms: Vec<String>,
    /// Integer uniform value, `i0=x,y,z,w` (unsigned bytes). Repeatable.
    #[arg(long = "int", value_name = "iN=x,y,z,w")]
    pub ints: Vec<String>,
    /// Bool uniform value, `b3=1` (1/0/true/false). Repeatable.
    #[arg(long = "bool", value_name = "bN=0|1")]
    pub bools: Vec<String>,
    /// Print every executed instruction with its operands and results (the first
    /// `--trace-limit` of them; the rest are counted).
    #[arg(long)]
    pub trace: bool,
    /// With `--trace`: how many steps to keep and print.
    #[arg(long, default_value_t = DEFAULT_TRACE_LIMIT)]
    pub trace_limit: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Instruction budget for the invocation.
    #[arg(long, default_value_t = shader_unit::interp::DEFAULT_BUDGET)]
    pub budget: u64,
    /// Plain IEEE arithmetic (keep -0 and subnormals) instead of the hardware's flushing.
    #[arg(long)]
    pub ieee: bool,
}

/// Steps `--trace` keeps by default.
pub const DEFAULT_TRACE_LIMIT: usize = 10_000;

/// Geometry-shader primitives kept for printing; later ones are only counted.
pub const MAX_PRIMITIVES: usize = 10_000;

/// A tracer that keeps the first `limit` steps and counts all of them.
struct BoundedRecorder {
    steps: Vec<StepRecord>,
    total: u64,
    limit: usize,
}

impl ShaderTracer for BoundedRecorder {
    const ENABLED: bool = true;

    fn step(&mut self, record: &StepRecord) {
        self.total += 1;
        if self.steps.len() < self.limit {
            self.steps.push(*record);
        }
    }
}

/// An emit sink that keeps the first [`MAX_PRIMITIVES`] primitives and counts all of them.
#[derive(Default)]
struct BoundedPrimitives {
    kept: Vec<EmittedPrimitive>,
    total: u64,
}

impl EmitSink for BoundedPrimitives {
    fn primitive(&mut self, vertices: [&[Vec4; 16]; 3], winding: bool) {
        self.total += 1;
        if self.kept.len() < MAX_PRIMITIVES {
            self.kept.push(EmittedPrimitive {
                vertices: [*vertices[0], *vertices[1], *vertices[2]],
                winding,
            });
        }
    }
}

/// Runs `picaview shader …`.
pub fn run(args: &ShaderArgs) -> Result<()> {
    match &args.command {
        ShaderCommand::Run(a) => {
            let text = run_shader(a)?;
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .context("cannot write to stdout")
        }
    }
}

/// Everything one `shader run` produced.
struct Outcome {
    stats: RunStats,
    outputs: Vec<(usize, Option<String>, u16, Vec4)>,
    trace: Vec<StepRecord>,
    /// Steps executed while tracing (may exceed `trace.len()`).
    trace_total: u64,
    primitives: Vec<EmittedPrimitive>,
    /// Primitives emitted (may exceed `primitives.len()`).
    primitives_total: u64,
}

/// Runs the shader described by `args` and renders the result (text or JSON).
pub fn run_shader(args: &RunArgs) -> Result<String> {
    let parsed = crate::cmd_disasm::load_shader(&args.file)?;
    let dvlb = match parsed {
        ShaderFile::Dvlb(d) => d,
        ShaderFile::Dvoj(o) => o.to_dvlb(),
    };
    let dvle = dvlb.dvles.get(args.entry).with_context(|| {
        format!(
            "DVLE {} does not exist (the file has {})",
            args.entry,
            dvlb.dvles.len()
        )
    })?;
    let program = Program::new(&dvlb.dvlp.code, &dvlb.operand_descriptors());

    let mut uniforms = Uniforms::default();
    apply_constants(dvle, &mut uniforms);
    let mut interp = Interpreter::new(ExecConfig {
        budget: args.budget,
        flush: !args.ieee,
        round_f24: false,
    });
    for spec in &args.inputs {
        let (reg, v) = parse_assignment(spec, 'v', dvle)?;
        let slot = interp
            .state
            .inputs
            .get_mut(reg)
            .with_context(|| format!("{spec}: no input register v{reg}"))?;
        *slot = parse_vec4(v).with_context(|| format!("bad value in `{spec}`"))?;
    }
    for spec in &args.uniforms {
        let (reg, v) = parse_assignment(spec, 'c', dvle)?;
        let slot = uniforms
            .f
            .get_mut(reg)
            .with_context(|| format!("{spec}: no float uniform c{reg} (c0-c95)"))?;
        *slot = parse_vec4(v).with_context(|| format!("bad value in `{spec}`"))?;
    }
    for spec in &args.ints {
        let (reg, v) = parse_assignment(spec, 'i', dvle)?;
        let slot = uniforms
            .i
            .get_mut(reg)
            .with_context(|| format!("{spec}: no integer uniform i{reg} (i0-i3)"))?;
        *slot = parse_ivec4(v).with_context(|| format!("bad value in `{spec}`"))?;
    }
    for spec in &args.bools {
        let (reg, v) = parse_assignment(spec, 'b', dvle)?;
        let slot = uniforms
            .b
            .get_mut(reg)
            .with_context(|| format!("{spec}: no bool uniform b{reg} (b0-b15)"))?;
        *slot = match v.trim() {
            "1" | "true" => true,
            "0" | "false" => false,
            other => bail!("bad bool value `{other}` in `{spec}` (use 0/1/true/false)"),
        };
    }

    let mut recorder = BoundedRecorder {
        steps: Vec::new(),
        total: 0,
        limit: args.trace_limit,
    };
    let mut primitives = BoundedPrimitives::default();
    let entry = dvle.main_start;
    let result = if args.trace {
        interp.run_with(&program, &uniforms, entry, &mut recorder, &mut primitives)
    } else {
        interp.run_with(&program, &uniforms, entry, &mut (), &mut primitives)
    };
    let stats = result.with_context(|| {
        format!(
            "the shader did not reach END (DVLE {}, entry {entry})",
            args.entry
        )
    })?;

    let outputs = output_registers(dvle, &program)
        .into_iter()
        .map(|(reg, sem, mask)| (reg, sem, mask, interp.state.outputs[reg]))
        .collect();
    let outcome = Outcome {
        stats,
        outputs,
        trace: recorder.steps,
        trace_total: recorder.total,
        primitives: primitives.kept,
        primitives_total: primitives.total,
    };
    let kind = dvle.kind;
    Ok(if args.json {
        render_json(&outcome, kind)
    } else {
        render_text(&outcome, kind)
    })
}

/// Loads the DVLE's constant table into `u` (bool, int and float24 constants).
fn apply_constants(dvle: &Dvle, u: &mut Uniforms) {
    for c in &dvle.constants {
        let reg = usize::from(c.register);
        match c.value {
            ConstantValue::Bool(b) => {
                if let Some(slot) = u.b.get_mut(reg) {
                    *slot = b;
                }
            }
            ConstantValue::Int(v) => {
                if let Some(slot) = u.i.get_mut(reg) {
                    *slot = v;
                }
            }
            ConstantValue::Float(raw) => {
                if let Some(slot) = u.f.get_mut(reg) {
                    *slot = raw.map(|w| F24::from_bits(w).to_f32());
                }
            }
            ConstantValue::Unknown => {}
        }
    }
}

/// The output registers to print: the DVLE output table (register, semantic, mask), or, if the
/// table is empty, every register the program writes.
fn output_registers(dvle: &Dvle, program: &Program) -> Vec<(usize, Option<String>, u16)> {
    let mut out: Vec<(usize, Option<String>, u16)> = Vec::new();
    for e in &dvle.outputs {
        let reg = usize::from(e.register);
        if reg >= 16 {
            continue;
        }
        let name = e
            .semantic
            .picasso_name()
            .map(str::to_string)
            .unwrap_or_else(|| format!("type{}", e.semantic.to_raw()));
        match out.iter_mut().find(|(r, _, _)| *r == reg) {
            Some(existing) => {
                existing.2 |= e.mask;
                if let Some(n) = &mut existing.1 {
                    n.push('+');
                    n.push_str(&name);
                }
            }
            None => out.push((reg, Some(name), e.mask)),
        }
    }
    if out.is_empty() {
        let mut written = 0u16;
        for instr in program.instrs() {
            for w in instr.writes() {
                if let RegRef::Output(r) = w.reg {
                    written |= 1 << (r & 15);
                }
            }
        }
        out = (0..16)
            .filter(|r| written & (1 << r) != 0)
            .map(|r| (r, None, 0xF))
            .collect();
    }
    out.sort_by_key(|(r, _, _)| *r);
    out
}

/// Parses `NAME=VALUE` where NAME is `<prefix><index>` or a name from the DVLE uniform table.
fn parse_assignment<'a>(spec: &'a str, prefix: char, dvle: &Dvle) -> Result<(usize, &'a str)> {
    let (name, value) = spec
        .split_once('=')
        .with_context(|| format!("`{spec}`: expected NAME=VALUE"))?;
    let name = name.trim();
    if let Some(n) = name
        .strip_prefix(prefix)
        .and_then(|n| n.parse::<usize>().ok())
    {
        return Ok((n, value));
    }
    // `array[k]`: element k of an array uniform.
    let (base, element) = match name.strip_suffix(']').and_then(|n| n.split_once('[')) {
        Some((base, k)) => {
            let k = k
                .trim()
                .parse::<u32>()
                .with_context(|| format!("`{name}`: the index in [] must be a number"))?;
            (base.trim(), Some(k))
        }
        None => (name, None),
    };
    for u in &dvle.uniforms {
        if u.name == base {
            let reg = match (prefix, u.start_register()) {
                ('v', UniformRegister::Input(n))
                | ('c', UniformRegister::Float(n))
                | ('i', UniformRegister::Int(n))
                | ('b', UniformRegister::Bool(n)) => Some(usize::from(n)),
                _ => None,
            };
            let reg = reg.with_context(|| format!("`{base}` is not a {prefix} register"))?;
            return match element {
                None => Ok((reg, value)),
                Some(k) if k < u.len() => Ok((reg + k as usize, value)),
                Some(k) => bail!(
                    "`{name}`: `{base}` has {} register(s), so index {k} is out of range",
                    u.len()
                ),
            };
        }
    }
    bail!("`{name}`: expected {prefix}N, a name from the DVLE uniform table or name[index]")
}

fn parse_vec4(s: &str) -> Result<Vec4> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 4 {
        bail!("expected 1 to 4 comma-separated numbers");
    }
    let mut v = [0.0f32; 4];
    for (slot, p) in v.iter_mut().zip(&parts) {
        *slot = match p.to_ascii_lowercase().as_str() {
            "inf" | "+inf" => f32::INFINITY,
            "-inf" => f32::NEG_INFINITY,
            "nan" => f32::NAN,
            _ => p
                .parse::<f32>()
                .with_context(|| format!("`{p}` is not a number"))?,
        };
    }
    Ok(v)
}

fn parse_ivec4(s: &str) -> Result<[u8; 4]> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 4 {
        bail!("expected 1 to 4 comma-separated integers 0-255");
    }
    let mut v = [0u8; 4];
    for (slot, p) in v.iter_mut().zip(&parts) {
        *slot = p
            .parse::<u8>()
            .with_context(|| format!("`{p}` is not an integer 0-255"))?;
    }
    Ok(v)
}

pub(crate) fn fmt_vec(v: &Vec4) -> String {
    format!("({}, {}, {}, {})", v[0], v[1], v[2], v[3])
}

fn dst_name(reg: DstReg) -> String {
    match reg {
        DstReg::Output(i) => format!("o{i}"),
        DstReg::Temp(i) => format!("r{i}"),
    }
}

fn mask_text(mask: u16) -> String {
    // Output-table masks: bit 0 = x … bit 3 = w.
    ["x", "y", "z", "w"]
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, c)| *c)
        .collect()
}

/// One executed instruction as a text line (also used by `picaview shader-trace`).
pub(crate) fn step_text(s: &StepRecord) -> String {
    let mut line = format!("{:03X}  {:<36}", s.pc, instruction_text(&s.instr));
    for (i, v) in s.srcs.iter().take(usize::from(s.src_count)).enumerate() {
        let _ = write!(line, " src{}={}", i + 1, fmt_vec(v));
    }
    if let Some((reg, before, after)) = s.dst {
        let _ = write!(
            line,
            " {}: {} -> {}",
            dst_name(reg),
            fmt_vec(&before),
            fmt_vec(&after)
        );
    }
    match s.instr {
        Instr::Mova { .. } => {
            let _ = write!(line, " a0=({}, {})", s.a0[0], s.a0[1]);
        }
        Instr::Cmp { .. }
        | Instr::Unary {
            op: shader_unit::decode::UnaryOp::Litp,
            ..
        } => {
            let _ = write!(line, " cmp=({}, {})", s.cmp[0], s.cmp[1]);
        }
        Instr::Loop { .. } => {
            let _ = write!(line, " aL={}", s.al);
        }
        _ => {}
    }
    let [c, i, l] = s.stack_depths;
    let _ = write!(line, "  [aL={} call={c} if={i} loop={l}", s.al);
    if let Some(rem) = s.loop_remaining {
        let _ = write!(line, " left={rem}");
    }
    let _ = write!(line, "] -> {:03X}", s.next_pc);
    line
}

fn render_text(o: &Outcome, kind: ShaderKind) -> String {
    let mut s = String::new();
    if !o.trace.is_empty() {
        s.push_str("trace:\n");
        for step in &o.trace {
            s.push_str(&step_text(step));
            s.push('\n');
        }
        let more = o.trace_total.saturating_sub(o.trace.len() as u64);
        if more > 0 {
            let _ = writeln!(
                s,
                "... {more} more steps not shown ({} executed; raise --trace-limit to see them)",
                o.trace_total
            );
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "{} shader, {} instructions executed",
        kind_name(kind),
        o.stats.instructions
    );
    if o.stats.unknown_ops > 0 {
        let _ = writeln!(
            s,
            "warning: {} undefined opcodes executed as NOP",
            o.stats.unknown_ops
        );
    }
    for (reg, sem, mask, v) in &o.outputs {
        let label = match sem {
            Some(name) => format!("o{reg} ({name}.{})", mask_text(*mask)),
            None => format!("o{reg}"),
        };
        let _ = writeln!(s, "{label:<28} = {}", fmt_vec(v));
    }
    if o.stats.emits > 0 {
        let _ = writeln!(
            s,
            "{} EMIT, {} primitives",
            o.stats.emits, o.primitives_total
        );
        for (n, p) in o.primitives.iter().enumerate() {
            let _ = writeln!(s, "primitive {n} (winding {}):", p.winding);
            for (k, v) in p.vertices.iter().enumerate() {
                let regs: Vec<String> = o
                    .outputs
                    .iter()
                    .map(|(r, _, _, _)| format!("o{r}={}", fmt_vec(&v[*r])))
                    .collect();
                let _ = writeln!(s, "  v{k}: {}", regs.join(" "));
            }
        }
        let more = o.primitives_total.saturating_sub(o.primitives.len() as u64);
        if more > 0 {
            let _ = writeln!(s, "... {more} more primitives not shown");
        }
    }
    s
}

fn kind_name(kind: ShaderKind) -> &'static str {
    match kind {
        ShaderKind::Vertex => "vertex",
        ShaderKind::Geometry => "geometry",
        ShaderKind::Other(_) => "unknown-kind",
    }
}

/// A JSON number, or a string for the values JSON cannot hold.
fn jnum(f: f32) -> Value {
    if f.is_nan() {
        json!("nan")
    } else if f.is_infinite() {
        json!(if f > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(f)
    }
}

/// A vector as a JSON array (non-finite values as strings).
pub(crate) fn jvec(v: &Vec4) -> Value {
    Value::Array(v.iter().map(|&f| jnum(f)).collect())
}

/// One executed instruction as JSON (also used by `picaview shader-trace`).
pub(crate) fn step_json(s: &StepRecord) -> Value {
    json!({
        "pc": s.pc,
        "text": instruction_text(&s.instr),
        "srcs": s.srcs.iter().take(usize::from(s.src_count)).map(jvec).collect::<Vec<_>>(),
        "dst": s.dst.map(|(reg, before, after)| json!({ "reg": dst_name(reg), "before": jvec(&before), "after": jvec(&after) })),
        "a0": s.a0,
        "aL": s.al,
        "loop_remaining": s.loop_remaining,
        "cmp": s.cmp,
        "stack_depths": { "call": s.stack_depths[0], "if": s.stack_depths[1], "loop": s.stack_depths[2] },
        "next_pc": s.next_pc,
    })
}

fn render_json(o: &Outcome, kind: ShaderKind) -> String {
    let outputs: Vec<Value> = o
        .outputs
        .iter()
        .map(|(reg, sem, mask, v)| json!({ "reg": format!("o{reg}"), "semantic": sem, "mask": mask, "value": jvec(v) }))
        .collect();
    let trace: Vec<Value> = o.trace.iter().map(step_json).collect();
    let primitives: Vec<Value> = o
        .primitives
        .iter()
        .map(|p| {
            json!({
                "winding": p.winding,
                "vertices": p.vertices.iter().map(|v| o.outputs.iter().map(|(r, _, _, _)| json!({ "reg": format!("o{r}"), "value": jvec(&v[*r]) })).collect::<Vec<_>>()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut v = json!({
        "kind": kind_name(kind),
        "instructions": o.stats.instructions,
        "unknown_ops": o.stats.unknown_ops,
        "outputs": outputs,
    });
    if !trace.is_empty() {
        v["trace"] = Value::Array(trace);
        v["trace_steps"] = json!(o.trace_total);
        v["trace_truncated"] = json!(o.trace_total > o.trace.len() as u64);
    }
    if o.stats.emits > 0 {
        v["emits"] = json!(o.stats.emits);
        v["primitives"] = Value::Array(primitives);
        v["primitives_total"] = json!(o.primitives_total);
    }
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shader-unit/tests/fixtures/real")
            .join(rel)
    }

    fn args(file: PathBuf) -> RunArgs {
        RunArgs {
            file,
            entry: 0,
            inputs: vec![],
            uniforms: vec![],
            ints: vec![],
            bools: vec![],
            trace: false,
            trace_limit: DEFAULT_TRACE_LIMIT,
            json: false,
            budget: shader_unit::interp::DEFAULT_BUDGET,
            ieee: false,
        }
    }

    #[test]
    fn runs_a_real_shader_with_named_and_numbered_registers() {
        // Re-Craft-3DS world.shbin (nihstro): o0 = projection * (inpos + infxyz/255), constants
        // c94/c95 come from the DVLE constant table.
        let mut a = args(fixture(
            "SomeRandoLameo+Re-Craft-3DS/ea554bf/romfs/shaders/world.shbin",
        ));
        a.inputs = vec!["inpos=1,2,3,1".into(), "v2=255,510,0".into()];
        a.uniforms = vec![
            "c0=1,0,0,0".into(),
            "projection=1,0,0,0".into(),
            "c1=0,1,0,0".into(),
            "c3=0,0,0,1".into(),
        ];
        let text = run_shader(&a).unwrap();
        assert!(text.contains("12 instructions executed"), "{text}");
        assert!(
            text.contains("o0 (position.xyzw)           = (1, 2, 0, 1)"),
            "{text}"
        );
        // colour = incol * c95.w, where c95.w is the float24 constant 1/255 from the DVLE
        // constant table (slightly below 1/255 after f24 rounding), alpha 1.
        assert!(
            text.contains("o1 (color.xyzw)              = (0.99999994, 1.9999999, 0, 1)"),
            "{text}"
        );
        a.trace = true;
        a.json = true;
        let json: Value = serde_json::from_str(&run_shader(&a).unwrap()).unwrap();
        assert_eq!(json["trace"].as_array().unwrap().len(), 12);
        assert_eq!(json["outputs"][0]["semantic"], "position");
        assert_eq!(json["trace"][0]["text"], "mul r0.xyz, c95.wwwx, v3.xyzx");
    }

    #[test]
    fn array_elements_json_register_names_and_bounded_trace() {
        // Craftus world.shbin (picasso): `projection` is the 4-register array c0-c3.
        let file = fixture("Lukas1h+Craftus-Rehabilitated/7d0e9b1/build/world.shbin");
        let bytes = std::fs::read(&file).unwrap();
        let dvlb = match shader_unit::dvlb::parse_shader_file(&bytes).unwrap() {
            ShaderFile::Dvlb(d) => d,
            ShaderFile::Dvoj(o) => o.to_dvlb(),
        };
        let dvle = &dvlb.dvles[0];
        let proj = dvle
            .uniforms
            .iter()
            .find(|u| u.name == "projection")
            .unwrap();
        let UniformRegister::Float(base) = proj.start_register() else {
            panic!("projection is a float uniform")
        };
        let base = usize::from(base);
        assert_eq!(
            parse_assignment("projection[2]=1,2", 'c', dvle).unwrap(),
            (base + 2, "1,2")
        );
        assert_eq!(
            parse_assignment(" projection [ 0 ] =1", 'c', dvle)
                .unwrap()
                .0,
            base
        );
        let e = parse_assignment("projection[4]=1", 'c', dvle).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        assert!(parse_assignment("projection[x]=1", 'c', dvle).is_err());
        assert!(parse_assignment("nosuch[1]=1", 'c', dvle).is_err());

        let mut a = args(file);
        a.uniforms = vec!["projection[0]=1,0,0,0".into()];
        a.json = true;
        a.trace = true;
        a.trace_limit = 3;
        let json: Value = serde_json::from_str(&run_shader(&a).unwrap()).unwrap();
        assert_eq!(json["outputs"][0]["reg"], "o0");
        assert_eq!(json["trace"].as_array().unwrap().len(), 3);
        assert_eq!(json["trace_truncated"], true);
        assert!(json["trace_steps"].as_u64().unwrap() > 3);
        a.json = false;
        let text = run_shader(&a).unwrap();
        assert!(text.contains("more steps not shown"), "{text}");
    }

    #[test]
    fn reports_bad_arguments() {
        let file = fixture("Lukas1h+Craftus-Rehabilitated/7d0e9b1/build/world.shbin");
        let mut a = args(file.clone());
        a.entry = 9;
        assert!(
            run_shader(&a)
                .unwrap_err()
                .to_string()
                .contains("DVLE 9 does not exist")
        );
        let mut a = args(file.clone());
        a.uniforms = vec!["c96=1".into()];
        assert!(run_shader(&a).is_err());
        let mut a = args(file.clone());
        a.bools = vec!["b1=maybe".into()];
        assert!(run_shader(&a).is_err());
        let mut a = args(file);
        a.inputs = vec!["nosuchname=1".into()];
        assert!(run_shader(&a).is_err());
        assert!(run_shader(&args(PathBuf::from("/nonexistent.shbin"))).is_err());
    }

    #[test]
    fn parses_values() {
        assert_eq!(parse_vec4("1, 2.5,-3").unwrap(), [1.0, 2.5, -3.0, 0.0]);
        assert!(parse_vec4("inf,-inf,nan,0").unwrap()[2].is_nan());
        assert!(parse_vec4("1,2,3,4,5").is_err());
        assert!(parse_vec4("x").is_err());
        assert_eq!(parse_ivec4("3,0,1").unwrap(), [3, 0, 1, 0]);
        assert!(parse_ivec4("256").is_err());
        assert_eq!(mask_text(0b1011), "xyw");
    }
}
