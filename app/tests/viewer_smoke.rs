//! Checks a screenshot of the real viewer window (taken by `.ci/gui-smoke` under Xvfb with Mesa's
//! software GL): it must be the viewer showing the demo trace, not a blank or black window.
//!
//! The check itself is tested on synthetic images here; the screenshot test is `#[ignore]`d and
//! run by the smoke script with `PICAVIEW_SMOKE_PNG` set.

use image::RgbaImage;

/// Why a screenshot is not the viewer, or `Ok` with a summary.
fn check_screenshot(img: &RgbaImage) -> Result<String, String> {
    let (w, h) = img.dimensions();
    if w < 640 || h < 400 {
        return Err(format!("screenshot is only {w}x{h}"));
    }
    let total = (w * h) as f64;
    let mut counts = std::collections::HashMap::new();
    let mut colourful = 0u64;
    let mut sum = 0f64;
    let mut sum2 = 0f64;
    for p in img.pixels() {
        let [r, g, b, _] = p.0;
        *counts.entry([r, g, b]).or_insert(0u64) += 1;
        let (lo, hi) = (r.min(g).min(b), r.max(g).max(b));
        if hi - lo >= 60 {
            colourful += 1;
        }
        let l = (u32::from(r) + u32::from(g) + u32::from(b)) as f64 / 3.0;
        sum += l;
        sum2 += l * l;
    }
    let mean = sum / total;
    let var = sum2 / total - mean * mean;
    let (top, top_n) = counts
        .iter()
        .max_by_key(|(_, n)| **n)
        .map(|(c, n)| (*c, *n))
        .unwrap_or(([0, 0, 0], 0));
    let distinct = counts.len();
    let top_share = top_n as f64 / total;
    let colour_share = colourful as f64 / total;
    let summary = format!(
        "{w}x{h}, {distinct} colours, luminance variance {var:.0}, most common {top:?} ({:.0}%), colourful pixels {:.1}%",
        top_share * 100.0,
        colour_share * 100.0
    );
    if distinct < 200 || var < 100.0 {
        return Err(format!("blank-looking window: {summary}"));
    }
    // egui's dark theme: the most common colour is a dark grey panel fill.
    let grey = top.iter().max().unwrap_or(&0) - top.iter().min().unwrap_or(&0) <= 4;
    if !(grey && top[0] < 60 && top_share > 0.2) {
        return Err(format!(
            "does not look like the viewer's dark panels: {summary}"
        ));
    }
    // The demo's screens (sky, crate, UI) are colourful; the UI chrome is grey.
    if colour_share < 0.03 {
        return Err(format!("no rendered 3DS screens visible: {summary}"));
    }
    Ok(summary)
}

#[test]
#[ignore = "run by .ci/gui-smoke on a screenshot of the real window"]
fn screenshot_shows_the_viewer() {
    let path =
        std::env::var("PICAVIEW_SMOKE_PNG").expect("PICAVIEW_SMOKE_PNG names the screenshot");
    let img = image::open(&path).expect("screenshot is a PNG").to_rgba8();
    match check_screenshot(&img) {
        Ok(s) => println!("gui smoke: {path}: {s}"),
        Err(e) => panic!("gui smoke: {path}: {e}"),
    }
}

#[test]
fn the_check_rejects_blank_black_and_grey_images() {
    let black = RgbaImage::from_pixel(1280, 800, image::Rgba([0, 0, 0, 255]));
    assert!(check_screenshot(&black).is_err());
    let small = RgbaImage::from_pixel(100, 100, image::Rgba([27, 27, 27, 255]));
    assert!(check_screenshot(&small).is_err());
    // Grey UI chrome only (text noise, no rendered screens).
    let mut grey = RgbaImage::from_pixel(1280, 800, image::Rgba([27, 27, 27, 255]));
    for (i, p) in grey.pixels_mut().enumerate() {
        if i % 7 == 0 {
            let v = (i % 251) as u8;
            *p = image::Rgba([v, v, v, 255]);
        }
    }
    let e = check_screenshot(&grey).expect_err("no screens");
    assert!(e.contains("no rendered 3DS screens"), "{e}");
}

#[test]
fn the_check_accepts_a_viewer_like_image() {
    // Dark panels with grey text noise and a colourful "screen" in one corner.
    let mut img = RgbaImage::from_pixel(1280, 800, image::Rgba([27, 27, 27, 255]));
    for (x, y, p) in img.enumerate_pixels_mut() {
        if x > 1040 && y < 400 {
            *p = image::Rgba([(x % 200) as u8 + 40, (y % 120) as u8, 220, 255]);
        } else if (x + y) % 11 == 0 {
            let v = ((x * 7 + y * 3) % 256) as u8;
            *p = image::Rgba([v, v, v, 255]);
        }
    }
    let s = check_screenshot(&img).expect("viewer-like");
    assert!(s.contains("1280x800"));
}
