//! `picaview`: the PICA200 trace viewer and its headless command-line tools.
//!
//! Each subcommand lives in its own module (`cmd_*.rs`); this file only parses arguments and
//! dispatches.

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "picaview", version, about = "PICA200 (Nintendo 3DS GPU) trace replayer, shader debugger and viewer")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Print the physical memory map the replayer models.
    MemMap,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::MemMap => {
            for r in gpu_core::memory::REGIONS {
                println!("{:<16} 0x{:08X}..0x{:08X} ({} KiB)", r.name, r.base, r.end(), r.size / 1024);
            }
            Ok(())
        }
    }
}
