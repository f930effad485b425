//! `picaview`: the PICA200 trace viewer and its headless command-line tools.
//!
//! Each subcommand lives in its own module (`cmd_*.rs`); this file only parses arguments and
//! dispatches.

use anyhow::Result;
use clap::{Parser, Subcommand};

mod cmd_asm;
mod cmd_bench;
mod cmd_bench_replay;
mod cmd_cmdlist;
mod cmd_disasm;
mod cmd_render;
mod cmd_shader;
mod cmd_trace;
mod cmd_view;

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
    /// Benchmarks (`bench shader`: the W1/W2/W3 shader workloads).
    Bench(cmd_bench::BenchArgs),
    /// Decode a raw PICA command list, every register write named.
    Cmdlist(cmd_cmdlist::CmdlistArgs),
    /// Inspect a CiTrace (.ctf) file: `trace info`, `trace dump`, `trace check`.
    Trace(cmd_trace::TraceArgs),
    /// Replay a CiTrace and write a screen or PICA buffer as PNG (or every frame).
    Render(cmd_render::RenderArgs),
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            // The cause chain on one line per cause; a backtrace only when asked for with
            // RUST_BACKTRACE (anyhow captures it then).
            eprintln!("error: {err:#}");
            if std::env::var_os("RUST_BACKTRACE").is_some_and(|v| v != "0") {
                eprintln!("{}", err.backtrace());
            }
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<()> {
    let Some(command) = cli.command else {
        return cmd_view::run(&cli.view);
    };
    match command {
        Command::MemMap => {
            for r in gpu_core::memory::REGIONS {
                println!(
                    "{:<16} 0x{:08X}..0x{:08X} ({} KiB)",
                    r.name,
                    r.base,
                    r.end(),
                    r.size / 1024
                );
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
    }
}
