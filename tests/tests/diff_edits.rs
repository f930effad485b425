//! `diff` under edit lists (issue 16, "an edit list on/off"): one trace replayed with and
//! without an edit list, compared in lock step on the bundled cube demo. A TEV edit before
//! draw 5 is found at draw 5 (colour only); a uniform edit is found at its draw, vertex 0 and
//! the instruction that reads the uniform; an edit that writes a register's current value
//! changes nothing; an edit for a draw the trace does not have is reported as never applied.

use gpu_core::replay::diff::{
    DiffOptions, DiffOutcome, FirstDifference, diff_replays, set_side_edits, unapplied_edits,
};
use gpu_core::replay::edit::EditList;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::scene::demos::demos_dir;

fn cube() -> Vec<u8> {
    std::fs::read(demos_dir().join("cube.ctf")).expect("demo exists")
}

fn replay(bytes: &[u8], script: Option<&str>) -> Replay<Vec<u8>> {
    let mut r = Replay::new(CiTrace::from_bytes(bytes.to_vec()).expect("trace parses"));
    if let Some(script) = script {
        let edits = EditList::parse_script(script, &mut |p| Err(format!("no file {p}")))
            .expect("script parses");
        set_side_edits(&mut r, edits).expect("edits compile");
    }
    r
}

fn diff(a: &mut Replay<Vec<u8>>, b: &mut Replay<Vec<u8>>) -> DiffOutcome {
    diff_replays(a, b, &DiffOptions::default(), &mut |_| true).expect("not cancelled")
}

fn different(o: DiffOutcome) -> FirstDifference {
    match o {
        DiffOutcome::Different(d) => *d,
        DiffOutcome::Same { draws, .. } => panic!("expected a difference, all {draws} draws agree"),
    }
}

#[test]
fn tev_edit_is_found_at_its_draw() {
    let bytes = cube();
    let mut a = replay(&bytes, None);
    // Stage 0 outputs its constant colour (green) from draw 5 on.
    let mut b = replay(
        &bytes,
        Some("draw 5: 0x0C0=0x000E000E\ndraw 5: 0x0C2=0\ndraw 5: 0x0C3=0xFF00FF00\n"),
    );
    let d = different(diff(&mut a, &mut b));
    assert_eq!(d.draw, Some(5), "{}", d.summary());
    let c = d.color.as_ref().expect("the colour differs");
    assert!(c.differing > 0);
    assert_eq!(c.b, [0, 255, 0, 255], "side B draws the constant colour");
    assert!(d.vertex.is_none(), "the vertex shader is untouched");
    assert!(unapplied_edits(&b).is_empty());
    // The same list on both sides: identical.
    let script = "draw 5: 0x0C0=0x000E000E\ndraw 5: 0x0C2=0\ndraw 5: 0x0C3=0xFF00FF00\n";
    let mut a = replay(&bytes, Some(script));
    let mut b = replay(&bytes, Some(script));
    assert!(diff(&mut a, &mut b).is_same());
}

#[test]
fn uniform_edit_is_found_at_its_vertex_and_instruction() {
    let bytes = cube();
    let mut a = replay(&bytes, None);
    let mut b = replay(&bytes, Some("draw 5: vs c95=1,2,3,4\n"));
    let d = different(diff(&mut a, &mut b));
    assert_eq!(d.draw, Some(5), "{}", d.summary());
    let v = d.vertex.as_ref().expect("a shaded vertex differs");
    assert_eq!(v.index_in_draw, 0);
    // The injected uniform is visible to the re-run (it runs after the draw's trigger write).
    let i = d.instruction.as_ref().expect("a divergent instruction");
    assert!(i.text.contains("c95"), "{}", d.summary());
    assert!(
        !d.notes.iter().any(|n| n.contains("run configuration")),
        "{:?}",
        d.notes
    );
}

#[test]
fn edit_without_observable_effect_is_the_same() {
    let bytes = cube();
    // The value TEXENV0_COLOR already holds when draw 5 starts.
    let mut probe = replay(&bytes, None);
    assert!(probe.run_until(Target::AfterDraw(4), &mut ()));
    let value = probe.gpu().regs[0x0C3];
    let script = format!("draw 5: 0x0C3=0x{value:08X}\n");
    let mut a = replay(&bytes, None);
    let mut b = replay(&bytes, Some(&script));
    let o = diff(&mut a, &mut b);
    assert!(o.is_same(), "{o:?}");
    assert!(unapplied_edits(&b).is_empty(), "the edit did run");
}

#[test]
fn edit_for_a_missing_draw_is_reported_unapplied() {
    let bytes = cube();
    let mut a = replay(&bytes, None);
    let mut b = replay(
        &bytes,
        Some("draw 9999: 0x0C3=0x1\noff draw 1: 0x0C3=0x2\n"),
    );
    assert!(diff(&mut a, &mut b).is_same());
    let missing = unapplied_edits(&b);
    assert_eq!(
        missing.len(),
        1,
        "{missing:?} (disabled edits are not listed)"
    );
    assert!(missing[0].starts_with("edit 0 (draw 9999"), "{missing:?}");
    assert!(unapplied_edits(&a).is_empty());
}
