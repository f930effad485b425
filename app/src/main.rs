//! `picaview`: the PICA200 trace viewer and its headless command-line tools.
//!
//! Each subcommand lives in its own module (`cmd_*.rs`); this file parses arguments, adds the
//! examples every subcommand's `--help` ends with, dispatches, and reports errors the way
//! [`report`] describes (one line, no backtrace, quiet on a closed pipe, JSON with `--json`).

use std::io::Write as _;

use anyhow::Result;
use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

mod budget_flag;
mod cmd_asm;
mod cmd_bench;
mod cmd_bench_replay;
mod cmd_cmdlist;
mod cmd_compare;
mod cmd_costs;
mod cmd_diff;
mod cmd_disasm;
mod cmd_edit;
mod cmd_pixel;
mod cmd_reduce;
mod cmd_render;
mod cmd_shader;
mod cmd_shader_trace;
mod cmd_trace;
mod cmd_trim;
mod cmd_view;
mod cmd_who_touched;
mod report;

#[derive(Parser)]
#[command(
    name = "picaview",
    version,
    about = "PICA200 (Nintendo 3DS GPU) trace replayer, shader debugger and viewer",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a subcommand: open the viewer (on FILE, or on the bundled demo trace).
    #[command(flatten)]
    view: cmd_view::ViewArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Print the physical memory map the replayer models.
    MemMap,
    /// Assemble picasso-syntax shader sources into one .shbin (byte-identical to picasso 2.7.1).
    Asm(cmd_asm::AsmArgs),
    /// Disassemble a compiled shader (.shbin) to picasso assembly.
    Disasm(cmd_disasm::DisasmArgs),
    /// Run a compiled shader (.shbin) on the reference interpreter.
    Shader(cmd_shader::ShaderArgs),
    /// Benchmarks (`bench shader`: the W1/W2/W3 shader workloads; `bench replay`: a trace).
    Bench(cmd_bench::BenchArgs),
    /// Decode a raw PICA command list, every register write named.
    Cmdlist(cmd_cmdlist::CmdlistArgs),
    /// Inspect a CiTrace (.ctf) file: `trace info`, `trace dump`, `trace check`.
    Trace(cmd_trace::TraceArgs),
    /// Replay a CiTrace and write a screen or PICA buffer as PNG (or every frame).
    Render(cmd_render::RenderArgs),
    /// Replay two traces (or one under two configurations) in lock step and report the first
    /// differing draw, vertex and shader instruction (exit status 0 same, 1 different, 2 error).
    Diff(cmd_diff::DiffArgs),
    /// Check every frame of traces against golden PNGs (exit status 0 match, 1 mismatch,
    /// 2 error).
    Compare(cmd_compare::CompareArgs),
    /// Per-draw cost table of a frame: vertices, shader instructions, triangles, fragments.
    Costs(cmd_costs::CostsArgs),
    /// Pixel history: every draw, fill and transfer that touched one pixel in a frame.
    Pixel(cmd_pixel::PixelArgs),
    /// Write a new trace with edits baked in: register writes, uniforms, fixed attributes,
    /// shaders (the input is never modified).
    Edit(cmd_edit::EditArgs),
    /// Write a trace of frames A..B that starts from the full GPU state at frame A.
    Trim(cmd_trim::TrimArgs),
    /// Shrink a trace by delta debugging while a pixel (or a shell predicate) keeps its result.
    Reduce(cmd_reduce::ReduceArgs),
    /// Step through one vertex-shader or geometry-shader invocation of a trace's draw.
    ShaderTrace(cmd_shader_trace::ShaderTraceArgs),
    /// Every producer and consumer of a physical address range, in trace order (loads, fills,
    /// transfers, texture copies, draws rendering into it, sampling it, reading vertices).
    WhoTouched(cmd_who_touched::WhoTouchedArgs),
    /// Print a shell completion script (e.g. `picaview completions bash > picaview.bash`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// The examples shown at the end of `--help`, by subcommand path (`[]` = the top level).
const EXAMPLES: &[(&[&str], &str)] = &[
    (
        &[],
        "  picaview                                   open the viewer on the demo trace
  picaview game.ctf --draw 23 --tab shader   open a trace at draw 23 in the shader debugger
  picaview trace info game.ctf               what a trace contains
  picaview render game.ctf --frame 2 -o top.png
  picaview completions bash > ~/.local/share/bash-completion/completions/picaview",
    ),
    (&["mem-map"], "  picaview mem-map"),
    (
        &["asm"],
        "  picaview asm shader.v.pica -o shader.shbin
  picaview asm vshader.v.pica gshader.g.pica -o program.shbin
  picaview disasm a.shbin | picaview asm - -o b.shbin      round trip through stdin",
    ),
    (
        &["disasm"],
        "  picaview disasm shader.shbin
  picaview disasm shader.shbin --entry 1 --raw
  picaview disasm shader.shbin --json | jq '.'",
    ),
    (
        &["shader"],
        "  picaview shader run shader.shbin --input v0=1,2,3,1 --uniform c4=1,0,0,1",
    ),
    (
        &["shader", "run"],
        "  picaview shader run shader.shbin --input v0=1,2,3,1 --uniform c4=1,0,0,1
  picaview shader run shader.shbin --entry 1 --int i0=4,0,1,0 --bool b3=1 --trace
  picaview shader run shader.shbin --input v0=0.5 --json",
    ),
    (
        &["bench"],
        "  picaview bench shader --workload W1 --vertices 1000000
  picaview bench replay game.ctf --runs 3",
    ),
    (
        &["bench", "shader"],
        "  picaview bench shader
  picaview bench shader --workload W2 --vertices 100000 --batch 4096",
    ),
    (
        &["bench", "replay"],
        "  picaview bench replay assets/demos/cube.ctf
  picaview bench replay game.ctf --runs 1 --seeks 100
  picaview bench replay long.ctf --keyframe-budget 64",
    ),
    (
        &["cmdlist"],
        "  picaview cmdlist list.bin
  picaview cmdlist list.bin --json | jq '.[] | select(.name == \"DRAWARRAYS\")'
  picaview cmdlist list.bin --count-bits 11          headers as Citra reads them",
    ),
    (
        &["trace"],
        "  picaview trace info game.ctf
  picaview trace dump game.ctf | less
  picaview trace check game.ctf --json",
    ),
    (
        &["trace", "info"],
        "  picaview trace info game.ctf
  picaview trace info game.ctf --limit 20            list only the first 20 draws
  picaview trace info game.ctf --json | jq '.frames[0].draws[0]'",
    ),
    (
        &["trace", "dump"],
        "  picaview trace dump game.ctf | less
  picaview trace dump game.ctf | head -50
  picaview trace dump game.ctf --json | jq -c '.[] | select(.type == \"frame_marker\")'",
    ),
    (
        &["trace", "check"],
        "  picaview trace check game.ctf
  picaview trace check game.ctf --json | jq '.counts'",
    ),
    (
        &["render"],
        "  picaview render game.ctf -o top.png                       top screen at frame 0
  picaview render game.ctf --frame 3 --target bottom -o bottom.png
  picaview render game.ctf --frame 1 --after-draw 5 --target color -o draw5.png
  picaview render game.ctf --target depth --depth-range 0.9..1 -o depth.png
  picaview render game.ctf --all-frames -o frames/            frames/frame_0000.png, ...
  picaview render game.ctf --all-frames -o shot.png           shot_0000.png, shot_0001.png, ...",
    ),
    (
        &["diff"],
        "  picaview diff before.ctf after.ctf
  picaview diff game.ctf game.ctf --engine-a reference --engine-b fast
  picaview diff game.ctf game.ctf --pixel-a reference --textures-b citra-swrast
  picaview diff a.ctf b.ctf --json | jq '.vertex'",
    ),
    (
        &["compare"],
        "  picaview compare game.ctf --golden goldens/ --update          write the golden images
  picaview compare *.ctf --golden goldens/ --tolerance 2 --write-diff diffs/
  picaview compare game.ctf --golden citra/ --citra-swrast --target all --json",
    ),
    (
        &["costs"],
        "  picaview costs game.ctf --frame 2
  picaview costs game.ctf --frame 0 --sort fragments | head
  picaview costs game.ctf --json | jq '.draws[] | select(.stats.fragments_depth_failed > 0)'",
    ),
    (
        &["pixel"],
        "  picaview pixel game.ctf --frame 2 --target top --x 200 --y 120
  picaview pixel game.ctf --frame 2 --target top-right --x 200 --y 120
  picaview pixel game.ctf --frame 2 --after-draw 5 --target color --x 10 --y 300
  picaview pixel game.ctf --target depth --x 10 --y 300 --json | jq -c 'select(.type == \"draw\")'",
    ),
    (
        &["edit"],
        "  picaview edit game.ctf --set 'draw 12: 0x0C3=0xFF0000FF' -o red.ctf
  picaview edit game.ctf --uniform 'draw 12: vs c4=1,0.5,0,1' --shader 'draw 12: vs=flat.v.pica' -o new.ctf
  picaview edit game.ctf --script edits.txt -o new.ctf
  picaview render game.ctf --edits edits.txt --frame 2 -o edited.png      without writing a trace",
    ),
    (
        &["trim"],
        "  picaview trim game.ctf --frames 10..12 -o short.ctf
  picaview trim game.ctf --frames 7 -o one_frame.ctf",
    ),
    (
        &["reduce"],
        "  picaview reduce game.ctf --frame 3 --pixel 200,120 -o small.ctf
  picaview reduce game.ctf --frame 3 --pixel 10,10 --target top --max-steps 500 -o small.ctf
  picaview reduce game.ctf --frame 0 --predicate 'picaview trace check \"$1\" | grep -q overflow' -o small.ctf",
    ),
    (
        &["shader-trace"],
        "  picaview shader-trace game.ctf --draw 12 --vertex 3         the VS of vertex 3 of draw 12
  picaview shader-trace assets/demos/geoshader.ctf --draw 1 --gs-invocation 0
  picaview shader-trace game.ctf --draw 12 --json | jq '.trace | length'",
    ),
    (
        &["who-touched"],
        "  picaview who-touched game.ctf 0x18000000 --len 0x5DC00   who wrote/read the colour buffer
  picaview who-touched game.ctf 0x18460000 --limit 20
  picaview who-touched game.ctf 0x18460000 --json | jq -c '.[] | select(.write == false)'",
    ),
    (
        &["completions"],
        "  picaview completions bash > ~/.local/share/bash-completion/completions/picaview
  picaview completions zsh > ~/.zfunc/_picaview
  picaview completions fish > ~/.config/fish/completions/picaview.fish",
    ),
];

/// The command-line definition with the examples attached.
fn command() -> clap::Command {
    EXAMPLES.iter().fold(Cli::command(), |cmd, (path, text)| {
        with_example(cmd, path, text)
    })
}

fn with_example(cmd: clap::Command, path: &[&str], text: &'static str) -> clap::Command {
    match path.split_first() {
        None if cmd.get_name() == "edit" => {
            cmd.after_help(format!("Examples:\n{text}\n\n{}", cmd_edit::SYNTAX))
        }
        None => cmd.after_help(format!("Examples:\n{text}")),
        Some((first, rest)) => cmd.mut_subcommand(*first, |sub| with_example(sub, rest, text)),
    }
}

/// True if the command line asks for JSON output (errors are then JSON too).
fn json_requested() -> bool {
    std::env::args_os()
        .skip(1)
        .take_while(|a| a != "--")
        .any(|a| a == "--json")
}

fn main() -> std::process::ExitCode {
    report::install_panic_hook();
    let json = json_requested();
    let cli = match command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
    {
        Ok(cli) => cli,
        Err(e) => {
            if json && e.use_stderr() {
                report::print_usage_error_json(&e);
                return std::process::ExitCode::from(2);
            }
            // --help / --version on stdout (status 0), usage errors on stderr (status 2).
            e.exit();
        }
    };
    // diff and compare use status 1 for "different", so their errors exit with 2.
    let gate = matches!(cli.command, Some(Command::Diff(_) | Command::Compare(_)));
    match run(cli) {
        Ok(status) => std::process::ExitCode::from(status),
        // `picaview trace dump X | head`: the reader has all it wanted.
        Err(err) if report::is_broken_pipe(&err) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            // One line; no backtrace, even with RUST_BACKTRACE set: these are the user's
            // errors (bad files, bad values), not bugs. Panics still print theirs.
            report::print_error(&err, json);
            if gate {
                std::process::ExitCode::from(2)
            } else {
                std::process::ExitCode::FAILURE
            }
        }
    }
}

/// Runs the command line; returns the exit status.
fn run(cli: Cli) -> Result<u8> {
    let Some(subcommand) = cli.command else {
        // Problems the viewer window would only show after opening (or that keep it from
        // opening with an obscure message) are reported here, on the command line.
        if let Some(file) = &cli.view.file {
            report::check_input_file(
                file,
                "a CiTrace (.ctf), a shader binary (.shbin) or a raw command list",
            )?;
        }
        check_display()?;
        return cmd_view::run(&cli.view).map(|()| 0);
    };
    let plain = match subcommand {
        Command::Diff(args) => return cmd_diff::run(&args),
        Command::Compare(args) => return cmd_compare::run(&args),
        Command::MemMap => {
            let mut out = std::io::stdout().lock();
            for r in gpu_core::memory::REGIONS {
                writeln!(
                    out,
                    "{:<16} 0x{:08X}..0x{:08X} ({} KiB)",
                    r.name,
                    r.base,
                    r.end(),
                    r.size / 1024
                )?;
            }
            Ok(())
        }
        Command::Asm(args) => cmd_asm::run(&args),
        Command::Disasm(args) => cmd_disasm::run(&args),
        Command::Shader(args) => cmd_shader::run(&args),
        Command::Bench(args) => cmd_bench::run(&args),
        Command::Cmdlist(args) => cmd_cmdlist::run(&args),
        Command::Trace(args) => cmd_trace::run(&args),
        Command::Render(args) => cmd_render::run(&args),
        Command::Costs(args) => cmd_costs::run(&args),
        Command::Pixel(args) => cmd_pixel::run(&args),
        Command::Edit(args) => cmd_edit::run(&args),
        Command::Trim(args) => cmd_trim::run(&args),
        Command::Reduce(args) => cmd_reduce::run(&args),
        Command::ShaderTrace(args) => cmd_shader_trace::run(&args),
        Command::WhoTouched(args) => cmd_who_touched::run(&args),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command(), "picaview", &mut script);
            std::io::stdout().lock().write_all(&script)?;
            Ok(())
        }
    };
    plain.map(|()| 0)
}

/// On X11/Wayland systems: fails with a plain explanation when no display is reachable (winit
/// would report an OS error with a source path).
fn check_display() -> Result<()> {
    if cfg!(all(unix, not(target_os = "macos"))) {
        let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty());
        if !set("DISPLAY") && !set("WAYLAND_DISPLAY") && !set("WAYLAND_SOCKET") {
            anyhow::bail!(
                "the viewer needs an X11 or Wayland display, and neither DISPLAY nor WAYLAND_DISPLAY is set (the subcommands work without one: picaview --help)"
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand, at every depth, ends its help with examples.
    #[test]
    fn every_subcommand_has_examples() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            let has = cmd
                .get_after_help()
                .is_some_and(|h| h.to_string().starts_with("Examples:"));
            if !has {
                missing.push(path.to_string());
            }
            for sub in cmd.get_subcommands() {
                if sub.get_name() != "help" {
                    walk(sub, &format!("{path} {}", sub.get_name()), missing);
                }
            }
        }
        let mut missing = Vec::new();
        let mut cmd = command();
        cmd.build();
        walk(&cmd, "picaview", &mut missing);
        assert!(missing.is_empty(), "no examples in --help of: {missing:?}");
    }

    #[test]
    fn command_definition_is_consistent() {
        command().debug_assert();
    }
}
