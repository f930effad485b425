//! Golden images of every bundled demo trace (`assets/demos/*.ctf`), produced by replaying the
//! trace through the whole model: command lists, vertex pipeline, rasterizer, fragment
//! pipeline, memory fills, display transfers and LCD scan-out. Exact match.
//!
//! For each demo: the top and bottom screens at every frame marker (what the console showed
//! then), and the PICA colour buffer after the first draw of frame 1 (time travel into the
//! middle of a command list). The test also replays each trace a second time from scratch and
//! through keyframe seeks, and requires bit-identical results (determinism).

use std::path::PathBuf;

use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target, screen_image};
use gpu_core::texture::DecodedImage;
use pica_cmd::citrace::CiTrace;
use picaview_tests::image_compare::{RgbaImage, Tolerance, assert_golden, image_from_rows};

fn demos() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/demos");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "ctf"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn to_image(img: &DecodedImage) -> RgbaImage {
    image_from_rows(img.width, img.height, &img.pixels)
}

fn name_of(p: &std::path::Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[test]
fn demo_traces_render_their_goldens() {
    let demos = demos();
    assert!(!demos.is_empty(), "no demo traces in assets/demos");
    for path in demos {
        let name = name_of(&path);
        let bytes = std::fs::read(&path).unwrap();
        let mut replay = Replay::new(CiTrace::from_bytes(bytes.clone()).unwrap());
        let index = replay.build_index();
        assert!(!index.draws.is_empty(), "{name}: no draws");
        let frames = index.frames.iter().filter(|f| !f.unterminated).count() as u32;
        assert!(frames >= 1, "{name}: no frame markers");
        let real_diags: Vec<_> = index
            .diagnostics
            .iter()
            .map(|(_, d)| d.detail.clone())
            .collect();
        assert!(
            real_diags.is_empty(),
            "{name}: diagnostics while replaying: {real_diags:#?}"
        );
        let mut fresh = Replay::new(CiTrace::from_bytes(bytes).unwrap());
        for f in 0..frames {
            assert!(replay.seek(Target::Frame(f), &mut ()));
            assert!(fresh.run_until(Target::Frame(f), &mut ()));
            for (screen, tag) in [(Screen::Top, "top"), (Screen::Bottom, "bottom")] {
                let img = screen_image(replay.gpu(), replay.mem(), screen).unwrap();
                let again = screen_image(fresh.gpu(), fresh.mem(), screen).unwrap();
                assert_eq!(
                    img, again,
                    "{name} frame {f} {tag}: seek and linear replay differ"
                );
                assert_golden(
                    &format!("demo_{name}_f{f}_{tag}"),
                    &to_image(&img),
                    Tolerance::EXACT,
                );
            }
        }
        // Time travel into frame 1 (or 0): right after its first draw.
        let frame = index
            .frames
            .iter()
            .find(|f| f.index == 1 && !f.draws.is_empty())
            .or_else(|| index.frames.first())
            .unwrap();
        assert!(replay.seek(Target::AfterDraw(frame.draws.start), &mut ()));
        let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
        let pixels = fb.read_color_image(replay.mem()).unwrap();
        let img = image_from_rows(fb.width, fb.height, &pixels);
        assert_golden(
            &format!("demo_{name}_after_draw{}", frame.draws.start),
            &img,
            Tolerance::EXACT,
        );
    }
}
