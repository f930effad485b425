//! `picaview edit`: applies an edit list to a CiTrace and writes a new trace with the edits
//! baked in (the input file is never modified); also reads edit scripts for `render --edits`.
//!
//! Edits come from `--set`, `--uniform`, `--attr`, `--shader` (one edit-script line each; all
//! four take any line, the names only say what one usually passes) and `--script FILE` (one edit
//! per line). The syntax is `gpu_core::replay::edit`'s (printed by `picaview edit --help`).
//! Shader paths in a script are relative to the script's directory.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;
use gpu_core::replay::edit::{EditList, save_edited};

use crate::cmd_trace::open_trace;

/// The edit-script syntax, shown by `picaview edit --help`.
pub const SYNTAX: &str = "\
Edit syntax (one edit per --set/--uniform/--attr/--shader value or script line; `#` comments;
a line starting with `off` is a disabled edit; draws are 0-based over the whole trace, `cmd N`
is the N-th register write, 1-based, as `trace info` and the viewer count them):
  draw 12: 0x0C0=0x00FF00FF[/MASK]    write PICA register 0x0C0 before draw 12 (byte mask 0x0-0xF)
  cmd 345: 0x0C0=0x12345678[/MASK]    execute write 345 (which must address 0x0C0) with this value
  draw 12: vs c4=1,0.5,0,1            float uniform (rounded to float24); gs for the geometry unit
  draw 12: vs c4=f32:1,0.5,0,1        float uniform uploaded in float32 mode (exact)
  draw 12: vs i1=3,0,1,0              integer uniform (x, y, z, w bytes)
  draw 12: vs b3=1                    boolean uniform
  draw 12: attr 2=1,0,0,1             fixed attribute (float24)
  draw 12: vs=flat.v.pica             replace the program by picasso assembly (gs= for the GS)
Edits before a draw stay in effect until the trace writes the same state again; the upload
cursors they move are put back. Errors in a shader are reported as file:line:column.";

/// Arguments of `picaview edit`.
#[derive(Args, Debug)]
pub struct EditArgs {
    /// The trace (.ctf); it is not modified.
    pub trace: PathBuf,
    /// A register edit, e.g. 'draw 12: 0x0C0=0x00FF00FF' or 'cmd 345: 0x0C0=0x1/0x3'.
    #[arg(long = "set", value_name = "EDIT")]
    pub set: Vec<String>,
    /// A uniform edit, e.g. 'draw 12: vs c4=1,0.5,0,1'.
    #[arg(long = "uniform", value_name = "EDIT")]
    pub uniform: Vec<String>,
    /// A fixed-attribute edit, e.g. 'draw 12: attr 2=1,0,0,1'.
    #[arg(long = "attr", value_name = "EDIT")]
    pub attr: Vec<String>,
    /// A shader replacement, e.g. 'draw 12: vs=file.v.pica'.
    #[arg(long = "shader", value_name = "EDIT")]
    pub shader: Vec<String>,
    /// An edit script (one edit per line).
    #[arg(long, value_name = "FILE")]
    pub script: Option<PathBuf>,
    /// The new trace.
    #[arg(short, long)]
    pub output: PathBuf,
}

/// Reads an edit script; shader paths are relative to `base`.
pub fn read_script(text: &str, base: &Path) -> Result<EditList> {
    let mut load = |p: &str| {
        let path = base.join(p);
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))
    };
    Ok(EditList::parse_script(text, &mut load)?)
}

/// Reads an edit-script file.
pub fn read_script_file(path: &Path) -> Result<EditList> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    read_script(&text, base).with_context(|| path.display().to_string())
}

/// The edit list of the arguments: the script's edits, then the single edits in the order
/// --set, --uniform, --attr, --shader.
pub fn edit_list(args: &EditArgs) -> Result<EditList> {
    let mut list = match &args.script {
        Some(p) => read_script_file(p)?,
        None => EditList::default(),
    };
    for (flag, lines) in [
        ("--set", &args.set),
        ("--uniform", &args.uniform),
        ("--attr", &args.attr),
        ("--shader", &args.shader),
    ] {
        for line in lines {
            let one =
                read_script(line, Path::new(".")).with_context(|| format!("{flag} '{line}'"))?;
            list.edits.extend(one.edits);
        }
    }
    Ok(list)
}

/// True when two paths name the same existing file.
fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Writes `bytes` to `path` through a temporary file beside it (no half-written output).
pub fn write_new_trace(path: &Path, bytes: &[u8]) -> Result<()> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "trace.ctf".into());
    let tmp = path.with_file_name(format!(".{name}.partial"));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

/// Refuses to overwrite the input.
pub fn check_not_input(input: &Path, output: &Path) -> Result<()> {
    if same_file(input, output) {
        bail!(
            "{}: the output would overwrite the input trace; choose another -o",
            output.display()
        );
    }
    Ok(())
}

/// Runs `picaview edit`.
pub fn run(args: &EditArgs) -> Result<()> {
    check_not_input(&args.trace, &args.output)?;
    let edits = edit_list(args)?;
    if edits.edits.is_empty() {
        bail!("no edits given (use --set, --uniform, --attr, --shader or --script)");
    }
    let trace = open_trace(&args.trace)?;
    let (builder, report) =
        save_edited(trace, &edits).with_context(|| args.trace.display().to_string())?;
    let bytes = builder.build()?;
    write_new_trace(&args.output, &bytes)?;
    eprintln!(
        "wrote {} ({} bytes): {} edit(s), {} write override(s) baked, writes inserted before {} draw(s); {} -> {} stream elements",
        args.output.display(),
        bytes.len(),
        edits.edits.iter().filter(|e| e.enabled).count(),
        report.overrides,
        report.injections,
        report.elements_in,
        report.elements_out
    );
    Ok(())
}
