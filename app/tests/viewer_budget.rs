//! The viewer on hostile inputs (issue 18): a trace that runs out of a work budget is indexed
//! on the worker while the UI keeps drawing frames, the log lists the budget diagnostics (what
//! ran out, which scope), the indexed trace answers a seek, and indexing a long hostile trace
//! can be cancelled from the progress bar.
//!
//! The inputs are small equivalents of `transfers_max.ctf` (display transfers of 4096x4096
//! RGBA8, the per-transfer maximum, many per frame: the transfer-pixel budgets end them) and
//! `ffff_draws.ctf` (draws of 0xFFFFFFFF vertices: the vertex budgets end them), written by
//! the tests of `tests/tests/hostile_inputs.rs` at full size.

mod kittest_common;
mod viewer_common;

use egui_kittest::kittest::Queryable;
use kittest_common::{harness, has_label, step_until, wait_indexed};
use pica_cmd::citrace::{CiTraceBuilder, InitialState};
use pica_cmd::cmdlist::CmdListBuilder;
use picaview::viewer::command::AppCommand;
use viewer_common::ui::state_at_selection;
use viewer_common::{LIST_ADDR, VERTEX_ADDR, setup, write_temp_trace};

/// `n` display transfers of 4096x4096 RGBA8 pixels (FCRAM to FCRAM), `per_frame` per frame,
/// started by stream register writes.
fn transfers_trace(n: u32, per_frame: u32) -> Vec<u8> {
    let d = (4096 << 16) | 4096;
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    for (pa, value) in [
        (0x1040_0C00, 0x2000_0000 >> 3),
        (0x1040_0C04, 0x2400_0000 >> 3),
        (0x1040_0C08, d),
        (0x1040_0C0C, d),
        (0x1040_0C10, 0),
    ] {
        b.register_write(pa, value);
    }
    for t in 0..n {
        b.register_write(0x1040_0C18, 1);
        if t % per_frame == per_frame - 1 {
            b.frame_marker();
        }
    }
    b.build().expect("transfer trace")
}

/// `frames` frames of `draws` draws of 0xFFFFFFFF vertices each (the synthetic trace's shader
/// and layout, its 3 vertices of data: the rest read past them).
fn ffff_draws_trace(frames: u32, draws: u32) -> Vec<u8> {
    let mut tb = CiTraceBuilder::new(InitialState::citra_sized());
    let mut verts = Vec::new();
    for k in 0..3 {
        for v in [k as f32 * 0.5, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0] {
            verts.extend_from_slice(&f32::to_le_bytes(v));
        }
    }
    tb.memory_load(VERTEX_ADDR, &verts).expect("vertex load");
    let mut b = CmdListBuilder::new();
    setup(&mut b);
    b.write(0x228, u32::MAX);
    for _ in 0..draws {
        b.write(0x22E, 1);
    }
    b.finalize();
    let list = b.to_bytes();
    for _ in 0..frames {
        tb.submit_command_list(LIST_ADDR, &list).expect("submit");
        tb.frame_marker();
    }
    tb.build().expect("trace builds")
}

/// The log lines of budget diagnostics.
fn budget_lines(h: &egui_kittest::Harness<'static, picaview::viewer::ViewerApp>) -> Vec<String> {
    h.state()
        .log
        .iter()
        .filter(|l| l.starts_with("budget ("))
        .cloned()
        .collect()
}

/// Transfers past the transfer-pixel budget: the UI draws frames while the worker indexes, the
/// log names the budget that ran out, and a seek after indexing is answered.
#[test]
fn transfers_over_budget_are_logged_and_the_viewer_answers() {
    let (dir, path) = write_temp_trace(
        "budget-transfers",
        "transfers.ctf",
        &transfers_trace(60, 20),
    );
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    let lines = budget_lines(&h);
    assert!(
        lines.iter().any(|l| l.contains("transfer-pixels")),
        "no transfer-pixel budget line in the log: {:?}",
        h.state().log
    );
    // A seek: select a command of the last frame; the worker answers its state.
    let end = viewer_common::ui::trace_index(&h).end.writes;
    h.state_mut()
        .push(AppCommand::SelectCommand(end.saturating_sub(1)));
    step_until(&mut h, "state at the selected command", state_at_selection);
    let _ = std::fs::remove_dir_all(dir);
}

/// Draws of 0xFFFFFFFF vertices: indexing a long run of them shows a progress bar with Cancel
/// while the UI keeps drawing frames, and Cancel stops the worker; a short run indexes and its
/// budget diagnostics are logged.
#[test]
fn ffff_draws_index_cancellably_and_log_their_budget() {
    // Long: many frames of such draws (the trace budget ends it only after many seconds).
    let (dir, path) = write_temp_trace("budget-ffff", "ffff.ctf", &ffff_draws_trace(400, 200));
    let mut h = harness(Some(path));
    step_until(&mut h, "the indexing progress bar", |h| {
        h.state()
            .trace()
            .is_some_and(|s| s.progress.as_ref().is_some_and(|p| p.cancellable))
            && has_label(h, "Cancel")
    });
    // The UI keeps answering while the worker indexes: frames are drawn and the progress bar
    // stays up.
    for _ in 0..10 {
        h.step();
    }
    assert!(
        h.state().trace().is_some_and(|s| s.index.is_none()),
        "the long trace indexed too fast to cancel"
    );
    // The progress bar is shown in the status bar and in the central panel, each with Cancel.
    h.query_all_by_label("Cancel")
        .next()
        .expect("a Cancel button")
        .click();
    step_until(&mut h, "cancelled", |h| {
        h.state()
            .log
            .iter()
            .any(|l| l.contains("indexing cancelled"))
    });
    drop(h);
    let _ = std::fs::remove_dir_all(dir);

    // Short: 2 frames of 20 such draws (each capped at 2^20 vertices) index; the frame's
    // 16 Mi vertex budget runs out and its cut is in the log.
    let (dir, path) = write_temp_trace("budget-ffff-short", "ffff.ctf", &ffff_draws_trace(2, 20));
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    let lines = budget_lines(&h);
    assert!(
        lines.iter().any(|l| l.contains("vertices")),
        "no vertex budget line in the log: {:?}",
        h.state().log
    );
    h.state_mut().push(AppCommand::SelectDraw(0));
    step_until(&mut h, "state at draw 0", state_at_selection);
    let _ = std::fs::remove_dir_all(dir);
}
