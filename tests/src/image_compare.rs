//! Software-only image comparison for golden-image tests.
//!
//! Input: an actual RGBA image (what the emulator produced) and a golden PNG in
//! `tests/goldens/`. Output: `Ok(())` when they match within a [`Tolerance`], else an error
//! message; on failure the actual image (`NAME.new.png`) and a diff image (`NAME.diff.png`) are
//! written next to the golden so a person can look at them (both names are git-ignored).
//!
//! Setting the environment variable `UPDATE_GOLDENS=1` rewrites the golden from the actual image
//! instead of comparing (review the new PNGs before committing them).
//!
//! The diff image shows matching pixels as a dimmed grey copy of the golden and differing pixels
//! in red, brighter for larger differences, so the location of a regression is obvious.

use std::path::{Path, PathBuf};

pub use image::RgbaImage;

/// How different two images may be and still match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tolerance {
    /// Largest allowed absolute difference of any channel of a pixel for it to count as equal.
    pub per_channel: u8,
    /// Number of pixels allowed to differ by more than `per_channel`.
    pub max_differing_pixels: usize,
}

impl Tolerance {
    /// Bit-exact: every channel of every pixel equal.
    pub const EXACT: Tolerance = Tolerance {
        per_channel: 0,
        max_differing_pixels: 0,
    };
}

/// The result of comparing two images of the same size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// Pixels whose largest channel difference exceeds the tolerance's `per_channel`.
    pub differing_pixels: usize,
    /// Largest channel difference anywhere.
    pub max_channel_diff: u8,
    /// First differing pixel (x, y from the top-left), if any.
    pub first_difference: Option<(u32, u32)>,
}

impl Comparison {
    /// True if the comparison is within `tol`.
    pub fn within(&self, tol: Tolerance) -> bool {
        self.differing_pixels <= tol.max_differing_pixels
    }
}

/// Compares two images pixel by pixel. `None` if their sizes differ.
pub fn compare(actual: &RgbaImage, expected: &RgbaImage, per_channel: u8) -> Option<Comparison> {
    if actual.dimensions() != expected.dimensions() {
        return None;
    }
    let mut c = Comparison {
        differing_pixels: 0,
        max_channel_diff: 0,
        first_difference: None,
    };
    for (x, y, a) in actual.enumerate_pixels() {
        let e = expected.get_pixel(x, y);
        let d = channel_diff(a.0, e.0);
        c.max_channel_diff = c.max_channel_diff.max(d);
        if d > per_channel {
            c.differing_pixels += 1;
            if c.first_difference.is_none() {
                c.first_difference = Some((x, y));
            }
        }
    }
    Some(c)
}

fn channel_diff(a: [u8; 4], b: [u8; 4]) -> u8 {
    a.iter()
        .zip(&b)
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap_or(0)
}

/// A diff image: matching pixels are a dimmed grey copy of `expected`, pixels differing by more
/// than `per_channel` are red with brightness growing with the difference. Images of different
/// sizes are compared over their common area; the rest is shown in magenta.
pub fn diff_image(actual: &RgbaImage, expected: &RgbaImage, per_channel: u8) -> RgbaImage {
    let (w, h) = (
        actual.width().max(expected.width()),
        actual.height().max(expected.height()),
    );
    RgbaImage::from_fn(w, h, |x, y| {
        let in_a = x < actual.width() && y < actual.height();
        let in_e = x < expected.width() && y < expected.height();
        if !(in_a && in_e) {
            return image::Rgba([255, 0, 255, 255]);
        }
        let a = actual.get_pixel(x, y).0;
        let e = expected.get_pixel(x, y).0;
        let d = channel_diff(a, e);
        if d > per_channel {
            image::Rgba([128u8.saturating_add(d / 2), 0, 0, 255])
        } else {
            let l = ((u32::from(e[0]) + u32::from(e[1]) + u32::from(e[2])) / 12) as u8;
            image::Rgba([l, l, l, 255])
        }
    })
}

/// Builds an image from decoded pixels, rows top first (as
/// `gpu_core::framebuffer::FramebufferConfig::read_color_image` returns them).
pub fn image_from_rows(width: u32, height: u32, pixels: &[[u8; 4]]) -> RgbaImage {
    RgbaImage::from_fn(width, height, |x, y| {
        let i = (y * width + x) as usize;
        image::Rgba(pixels.get(i).copied().unwrap_or([255, 0, 255, 255]))
    })
}

/// The directory holding the golden PNGs: `tests/goldens` of this crate.
pub fn goldens_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("goldens")
}

fn update_requested() -> bool {
    std::env::var("UPDATE_GOLDENS").is_ok_and(|v| v == "1")
}

/// Compares `actual` with the golden `tests/goldens/NAME.png`.
///
/// * `UPDATE_GOLDENS=1`: writes `actual` as the golden and succeeds.
/// * Golden missing or different (beyond `tol`): writes `NAME.new.png` (the actual image) and,
///   if the golden exists, `NAME.diff.png` next to it, and returns an error describing the
///   mismatch and how to update.
/// * Match: removes stale `NAME.new.png` / `NAME.diff.png` and succeeds.
pub fn check_golden(name: &str, actual: &RgbaImage, tol: Tolerance) -> Result<(), String> {
    check_golden_in(&goldens_dir(), name, actual, tol, update_requested())
}

/// [`check_golden`] with an explicit directory and update flag (for testing the checker).
pub fn check_golden_in(
    dir: &Path,
    name: &str,
    actual: &RgbaImage,
    tol: Tolerance,
    update: bool,
) -> Result<(), String> {
    let golden = dir.join(format!("{name}.png"));
    let new = dir.join(format!("{name}.new.png"));
    let diff = dir.join(format!("{name}.diff.png"));
    if update {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        actual
            .save(&golden)
            .map_err(|e| format!("writing {}: {e}", golden.display()))?;
        let _ = std::fs::remove_file(&new);
        let _ = std::fs::remove_file(&diff);
        return Ok(());
    }
    let expected = match image::open(&golden) {
        Ok(img) => img.to_rgba8(),
        Err(e) => {
            let _ = std::fs::create_dir_all(dir);
            let _ = actual.save(&new);
            return Err(format!(
                "golden {} cannot be read ({e}); the actual image is in {}. \
                 Run with UPDATE_GOLDENS=1 to create it.",
                golden.display(),
                new.display()
            ));
        }
    };
    let verdict = compare(actual, &expected, tol.per_channel);
    match verdict {
        Some(c) if c.within(tol) => {
            let _ = std::fs::remove_file(&new);
            let _ = std::fs::remove_file(&diff);
            Ok(())
        }
        other => {
            let _ = actual.save(&new);
            let _ = diff_image(actual, &expected, tol.per_channel).save(&diff);
            let what = match other {
                None => format!(
                    "size {}x{} differs from the golden's {}x{}",
                    actual.width(),
                    actual.height(),
                    expected.width(),
                    expected.height()
                ),
                Some(c) => format!(
                    "{} pixels differ by more than {} (allowed: {}); largest channel difference \
                     {}; first at {:?}",
                    c.differing_pixels,
                    tol.per_channel,
                    tol.max_differing_pixels,
                    c.max_channel_diff,
                    c.first_difference
                ),
            };
            Err(format!(
                "image {name} does not match {}: {what}. Actual: {}, diff: {}. \
                 If the change is intended, rerun with UPDATE_GOLDENS=1.",
                golden.display(),
                new.display(),
                diff.display()
            ))
        }
    }
}

/// [`check_golden`] that panics with the error message (for use in `#[test]`s).
#[track_caller]
pub fn assert_golden(name: &str, actual: &RgbaImage, tol: Tolerance) {
    if let Err(msg) = check_golden(name, actual, tol) {
        panic!("{msg}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 4]) -> RgbaImage {
        RgbaImage::from_fn(w, h, |x, y| image::Rgba(f(x, y)))
    }

    #[test]
    fn compare_counts_and_tolerates() {
        let a = img(4, 4, |x, y| [x as u8 * 10, y as u8 * 10, 0, 255]);
        let mut b = a.clone();
        b.put_pixel(2, 1, image::Rgba([20, 10, 3, 255]));
        b.put_pixel(3, 3, image::Rgba([30, 30, 10, 255]));
        let c = compare(&a, &b, 0).unwrap();
        assert_eq!(c.differing_pixels, 2);
        assert_eq!(c.max_channel_diff, 10);
        assert_eq!(c.first_difference, Some((2, 1)));
        assert!(!c.within(Tolerance::EXACT));
        assert!(c.within(Tolerance {
            per_channel: 0,
            max_differing_pixels: 2
        }));
        assert_eq!(compare(&a, &b, 3).unwrap().differing_pixels, 1);
        assert_eq!(compare(&a, &b, 10).unwrap().differing_pixels, 0);
        assert!(compare(&a, &img(4, 5, |_, _| [0; 4]), 0).is_none());
    }

    #[test]
    fn diff_marks_differences_in_red() {
        let a = img(2, 1, |_, _| [90, 90, 90, 255]);
        let b = img(2, 1, |x, _| {
            if x == 0 {
                [90, 90, 90, 255]
            } else {
                [0, 0, 0, 255]
            }
        });
        let d = diff_image(&a, &b, 0);
        assert_eq!(d.get_pixel(0, 0).0, [22, 22, 22, 255]);
        assert_eq!(d.get_pixel(1, 0).0, [128 + 45, 0, 0, 255]);
        let d = diff_image(&a, &img(1, 1, |_, _| [0; 4]), 0);
        assert_eq!(d.get_pixel(1, 0).0, [255, 0, 255, 255]);
    }

    #[test]
    fn golden_workflow_writes_new_and_diff_on_failure() {
        let dir = std::env::temp_dir().join(format!("picaview-golden-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a = img(3, 2, |x, y| [x as u8 * 80, y as u8 * 80, 7, 255]);
        // Missing golden: error, actual written.
        let e = check_golden_in(&dir, "g", &a, Tolerance::EXACT, false).unwrap_err();
        assert!(e.contains("UPDATE_GOLDENS=1"), "{e}");
        assert!(dir.join("g.new.png").exists());
        // Update writes the golden; then it matches and stale files are removed.
        check_golden_in(&dir, "g", &a, Tolerance::EXACT, true).unwrap();
        check_golden_in(&dir, "g", &a, Tolerance::EXACT, false).unwrap();
        assert!(!dir.join("g.new.png").exists());
        // A changed pixel fails with both files written; a tolerance accepts it.
        let mut b = a.clone();
        b.put_pixel(1, 1, image::Rgba([0, 0, 0, 255]));
        let e = check_golden_in(&dir, "g", &b, Tolerance::EXACT, false).unwrap_err();
        assert!(e.contains("1 pixels differ"), "{e}");
        assert!(dir.join("g.new.png").exists());
        assert!(dir.join("g.diff.png").exists());
        let loose = Tolerance {
            per_channel: 0,
            max_differing_pixels: 1,
        };
        check_golden_in(&dir, "g", &b, loose, false).unwrap();
        // The PNG round trip is lossless.
        let back = image::open(dir.join("g.png")).unwrap().to_rgba8();
        assert_eq!(back, a);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn rows_to_image() {
        let px = [[1, 2, 3, 4], [5, 6, 7, 8]];
        let i = image_from_rows(1, 2, &px);
        assert_eq!(i.get_pixel(0, 1).0, [5, 6, 7, 8]);
        // Too few pixels: magenta instead of a panic.
        let i = image_from_rows(2, 2, &px);
        assert_eq!(i.get_pixel(1, 1).0, [255, 0, 255, 255]);
    }
}
