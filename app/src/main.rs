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
mod cmd_disasm;
mod cmd_render;
mod cmd_shader;
mod cmd_trace;
mod cmd_view;
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
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        // `picaview trace dump X | head`: the reader has all it wanted.
        Err(err) if report::is_broken_pipe(&err) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            // One line; no backtrace, even with RUST_BACKTRACE set: these are the user's
            // errors (bad files, bad values), not bugs. Panics still print theirs.
            report::print_error(&err, json);
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
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
        return cmd_view::run(&cli.view);
    };
    match subcommand {
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
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut command(), "picaview", &mut script);
            std::io::stdout().lock().write_all(&script)?;
            Ok(())
        }
    }
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
