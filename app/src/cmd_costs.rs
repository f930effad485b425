//! `picaview costs TRACE.ctf --frame N [--sort COLUMN] [--json]`: the per-draw cost table of a
//! frame, the same rows as the viewer's Costs tab
//! ([`picaview::viewer::panels::cost`]): vertices fetched and shaded, post-transform cache hits,
//! shader instructions (total and per vertex), triangles in / after clipping / clipped away /
//! culled / rasterised, fragments generated / killed by the alpha, stencil and depth tests /
//! written, texture samples and the texels they fetched.
//!
//! The counters come from one replay of the trace (the index pass, which asks for them:
//! `Observer::wants_costs`); replays that nobody reads costs from (`render`, `bench replay`'s
//! timed runs, the viewer's seeks) run the per-fragment code without the cost counters.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Result, bail};
use gpu_core::replay::Replay;
use picaview::viewer::panels::cost::{CostColumn, CostRow, frame_rows, sort_rows, totals};

use crate::cmd_trace::open_trace;

/// Arguments of `picaview costs`.
#[derive(clap::Args, Debug)]
pub struct CostsArgs {
    /// The trace (.ctf).
    pub trace: PathBuf,
    /// The frame (0-based).
    #[arg(long, default_value_t = 0)]
    pub frame: u32,
    /// Sort by this column, largest first (e.g. `fragments`, `vs-instr`, `written`); default:
    /// draw order.
    #[arg(long)]
    pub sort: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// The column named `name` (its title with spaces or dashes, case-insensitive).
fn column(name: &str) -> Option<CostColumn> {
    let norm = |s: &str| s.to_ascii_lowercase().replace([' ', '-', '_', '/'], "");
    let want = norm(name);
    CostColumn::ALL
        .into_iter()
        .find(|c| norm(c.title()) == want)
}

#[derive(serde::Serialize)]
struct JsonRow<'a> {
    #[serde(flatten)]
    row: &'a CostRow,
    vs_instructions_per_vertex: f64,
}

/// Runs the command.
pub fn run(args: &CostsArgs) -> Result<()> {
    let sort = match &args.sort {
        None => None,
        Some(name) => match column(name) {
            Some(c) => Some(c),
            None => bail!(
                "unknown column {name:?}; columns: {}",
                CostColumn::ALL
                    .iter()
                    .map(|c| c.title().replace(' ', "-"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        },
    };
    let mut replay = Replay::new(open_trace(&args.trace)?);
    // Keyframes are not needed here: the streaming index keeps none.
    let index = replay
        .build_index_streaming(&mut |_| true)
        .unwrap_or_default();
    if args.frame as usize >= index.frames.len() {
        bail!(
            "frame {} does not exist (the trace has {} frames)",
            args.frame,
            index.frames.len()
        );
    }
    let mut rows = frame_rows(&index, args.frame);
    if let Some(c) = sort {
        sort_rows(&mut rows, c, false);
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        let json_rows: Vec<JsonRow> = rows
            .iter()
            .map(|row| JsonRow {
                row,
                vs_instructions_per_vertex: row.vs_per_vertex(),
            })
            .collect();
        let doc = serde_json::json!({
            "frame": args.frame,
            "draws": json_rows,
            "totals": totals(&rows),
        });
        serde_json::to_writer_pretty(&mut out, &doc)?;
        writeln!(out)?;
        return Ok(());
    }
    writeln!(
        out,
        "frame {}: {} draws (vertex-cache hits: indices seen before in the same draw; texture samples: fragments x sampled units; texels: texels those samples fetched, 1 per nearest tap, 4 per bilinear tap, per mip level read)",
        args.frame,
        rows.len()
    )?;
    let widths: Vec<usize> = CostColumn::ALL
        .iter()
        .map(|c| {
            rows.iter()
                .map(|r| c.text(r).len())
                .chain([c.title().len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let header: Vec<String> = CostColumn::ALL
        .iter()
        .zip(&widths)
        .map(|(c, w)| format!("{:>w$}", c.title(), w = *w))
        .collect();
    writeln!(out, "{}", header.join("  "))?;
    for r in &rows {
        let cells: Vec<String> = CostColumn::ALL
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{:>w$}", c.text(r), w = *w))
            .collect();
        writeln!(out, "{}", cells.join("  "))?;
    }
    let t = totals(&rows);
    writeln!(
        out,
        "total: {} fetched, {} shaded, {} cache hits, {} VS instructions, {} triangles in, {} rasterised, {} fragments generated, {} written, {} texture samples, {} texels fetched",
        t.vertices_loaded,
        t.vs_invocations,
        t.vertex_cache_hits,
        t.vs_instructions,
        t.triangles_assembled,
        t.triangles_rasterized,
        t.fragments_generated,
        t.fragments_written,
        t.texture_samples,
        t.texels_fetched
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names() {
        assert_eq!(column("fragments"), Some(CostColumn::Fragments));
        assert_eq!(column("VS-instr"), Some(CostColumn::VsInstructions));
        assert_eq!(column("vs/vertex"), Some(CostColumn::VsPerVertex));
        assert_eq!(column("cache_hits"), Some(CostColumn::CacheHits));
        assert_eq!(column("texels"), Some(CostColumn::TexelsFetched));
        assert_eq!(column("tex-samples"), Some(CostColumn::TextureSamples));
        assert_eq!(column("nope"), None);
    }
}
