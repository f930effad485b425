//! The bundled demo traces (`assets/demos/*.ctf`): rebuilding them with the scene builder gives
//! exactly the committed bytes, they stay small, and each replays (through gpu-core's trace
//! player) into pictures with the content its description promises.
//!
//! After a deliberate change to a demo or to the scene builder, regenerate the files with
//! `cargo run -p picaview-tests --bin gen_demos` and review the PNGs it can write (`--png DIR`).

use std::collections::BTreeSet;

use gpu_core::debug::DiagKind;
use gpu_core::texture::DecodedImage;
use picaview_tests::scene::demos::{DEMOS, Demo, demos_dir};
use picaview_tests::scene::preview::{Rendered, render_frames};

/// Upper bound for a demo file (the CiTrace header alone is about 58 KB).
const MAX_DEMO_BYTES: usize = 1 << 20;

fn demo(name: &str) -> Demo {
    DEMOS
        .iter()
        .copied()
        .find(|d| d.name == name)
        .unwrap_or_else(|| panic!("no demo {name}"))
}

fn committed(name: &str) -> Vec<u8> {
    let path = demos_dir().join(format!("{name}.ctf"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn rendered(name: &str) -> Rendered {
    let r = render_frames(committed(name)).unwrap_or_else(|e| panic!("replaying {name}: {e}"));
    // Only features the core does not implement yet may be reported (e.g. fog before it is
    // wired into the pixel pipeline); anything else means a broken trace.
    let bad: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.kind != DiagKind::Unsupported)
        .collect();
    assert!(bad.is_empty(), "{name}: unexpected diagnostics {bad:?}");
    r
}

fn px(img: &DecodedImage, x: u32, y: u32) -> [i32; 4] {
    img.get(x, y).map(|p| p.map(i32::from)).unwrap_or([-1; 4])
}

fn near(a: [i32; 4], b: [i32; 3], tol: i32) -> bool {
    (0..3).all(|c| (a[c] - b[c]).abs() <= tol)
}

fn distinct_colours(img: &DecodedImage) -> usize {
    img.pixels.iter().collect::<BTreeSet<_>>().len()
}

#[test]
fn committed_demo_traces_are_reproducible() {
    for d in &DEMOS {
        let built = (d.build)().unwrap_or_else(|e| panic!("building {}: {e}", d.name));
        let again = (d.build)().unwrap_or_else(|e| panic!("building {}: {e}", d.name));
        assert!(built == again, "{}: two builds differ", d.name);
        let file = committed(d.name);
        assert!(
            built == file,
            "{}: assets/demos/{}.ctf ({} bytes) differs from a fresh build ({} bytes); \
             regenerate with `cargo run -p picaview-tests --bin gen_demos`",
            d.name,
            d.name,
            file.len(),
            built.len()
        );
        assert!(
            file.len() < MAX_DEMO_BYTES,
            "{}: {} bytes",
            d.name,
            file.len()
        );
    }
}

#[test]
fn every_committed_demo_is_listed_in_the_readme() {
    let readme = std::fs::read_to_string(demos_dir().join("README.md")).expect("README.md");
    for d in &DEMOS {
        assert!(
            readme.contains(&format!("{}.ctf", d.name)),
            "{} not described",
            d.name
        );
    }
}

#[test]
fn cube_demo_shows_a_cube_and_a_ui() {
    let r = rendered("cube");
    assert_eq!(r.frames.len(), 6);
    assert_eq!(r.draws, 6 * 11);
    for (k, f) in r.frames.iter().enumerate() {
        // Sky at the top corners, the (brown, textured) cube in the middle.
        assert!(
            near(px(&f.top, 2, 1), [90, 150, 230], 6),
            "frame {k}: sky {:?}",
            px(&f.top, 2, 1)
        );
        let c = px(&f.top, 200, 120);
        assert!(
            c[0] > c[2] + 20,
            "frame {k}: cube centre {c:?} is not brown"
        );
        assert!(distinct_colours(&f.top) > 500, "frame {k}: top too plain");
        // Bottom: title bar blue, highlighted button orange, the others grey.
        let title = px(&f.bottom, 160, 32);
        assert!(title[2] > title[0] + 100, "frame {k}: title bar {title:?}");
        for b in 0..3u32 {
            let p = px(&f.bottom, 100, 84 + 52 * b);
            let lit = b == k as u32 % 3;
            assert_eq!(p[0] > p[2] + 60, lit, "frame {k} button {b}: {p:?}");
        }
        // The icon's middle is its white triangle, its corner transparent over the panel.
        assert!(near(px(&f.bottom, 246, 104), [255, 255, 255], 8));
    }
    // The cube turns: consecutive frames differ.
    for w in r.frames.windows(2) {
        assert_ne!(w[0].top.pixels, w[1].top.pixels);
    }
}

#[test]
fn geoshader_demo_shows_the_particles() {
    let r = rendered("geoshader");
    assert_eq!(r.frames.len(), 4);
    assert_eq!(r.draws, 4 * 2);
    for (k, f) in r.frames.iter().enumerate() {
        // Dark background corners, a bright bulge in the middle.
        let corner = px(&f.top, 1, 1);
        assert!(
            corner[0] + corner[1] + corner[2] < 90,
            "frame {k}: corner {corner:?}"
        );
        let bright = (180..220)
            .flat_map(|x| (100..140).map(move |y| (x, y)))
            .filter(|&(x, y)| px(&f.top, x, y)[..3].iter().sum::<i32>() > 500)
            .count();
        assert!(
            bright > 50,
            "frame {k}: only {bright} bright pixels in the bulge"
        );
        assert!(distinct_colours(&f.top) > 300, "frame {k}: too few colours");
    }
    for w in r.frames.windows(2) {
        assert_ne!(w[0].top.pixels, w[1].top.pixels);
    }
}

#[test]
fn fog_blend_demo_shows_ground_sky_and_panels() {
    let r = rendered("fog_blend");
    assert_eq!(r.frames.len(), 4);
    assert_eq!(r.draws, 4 * 25);
    for (k, f) in r.frames.iter().enumerate() {
        assert!(
            near(px(&f.top, 200, 2), [196, 208, 224], 2),
            "frame {k}: sky"
        );
        let ground = px(&f.top, 200, 236);
        assert!(
            ground[1] > ground[0] && ground[1] > ground[2],
            "frame {k}: ground {ground:?}"
        );
        // Translucent panels tint what is behind them: the right column is blue-ish over the
        // ground, the left one red-ish.
        let tinted = |pred: &dyn Fn([i32; 4]) -> bool| {
            (0..400)
                .flat_map(|x| (120..240).map(move |y| (x, y)))
                .filter(|&(x, y)| pred(px(&f.top, x, y)))
                .count()
        };
        assert!(
            tinted(&|p| p[2] > p[1] + 20) > 500,
            "frame {k}: no blue panels"
        );
        assert!(
            tinted(&|p| p[0] > p[1] + 20) > 500,
            "frame {k}: no red panels"
        );
    }
}

#[test]
fn stress_demo_draws_hundreds_of_objects() {
    let d = demo("stress");
    let r = rendered(d.name);
    assert_eq!(r.frames.len(), 3);
    assert_eq!(r.draws, 3 * 312);
    for (k, f) in r.frames.iter().enumerate() {
        assert!(distinct_colours(&f.top) > 1000, "frame {k}: top");
        assert!(distinct_colours(&f.bottom) > 500, "frame {k}: bottom");
    }
    for w in r.frames.windows(2) {
        assert_ne!(w[0].top.pixels, w[1].top.pixels);
        assert_ne!(w[0].bottom.pixels, w[1].bottom.pixels);
    }
}
