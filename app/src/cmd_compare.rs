//! `picaview compare`: checks every frame of one or more traces against a directory of
//! reference ("golden") PNG images, with a per-channel tolerance, and writes difference
//! images: the building block of a rendering regression suite over many traces.
//!
//! Layout of the golden directory (what `--update` writes):
//!
//! ```text
//! GOLDEN/<trace-stem>/frame_NNNN_top.png      top screen at frame marker NNNN
//! GOLDEN/<trace-stem>/frame_NNNN_bottom.png   bottom screen
//! GOLDEN/<trace-stem>/frame_NNNN_color.png    PICA colour buffer (with --target color or all)
//! ```
//!
//! `<trace-stem>` is the trace's file name without `.ctf`; frame NNNN is the state when the
//! stream reaches its NNNN-th frame marker (as `picaview render --frame NNNN`). A trace without
//! a frame marker is compared at its end as frame 0000. A difference image
//! `<name>.diff.png` goes to `--write-diff DIR/<trace-stem>/`: pixels within the tolerance are a
//! dimmed grey copy of the rendered image, pixels beyond it red (brighter for larger
//! differences).
//!
//! Traces are processed in parallel on a bounded rayon pool (`--jobs`); the report lists them
//! in the order given. Exit status: 0 when every image matches, 1 on any mismatch (including
//! a missing golden file or an image that could not be rendered), 2 on an error (bad
//! arguments, or a trace that cannot be read: the report still covers the other traces).

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target, screen_image};
use gpu_core::texture::{DecodedImage, RenderMode};
use pica_cmd::citrace::{StreamEvent, TraceSource};
use serde::Serialize;

use crate::cmd_render::save_png;
use crate::cmd_trace::open_trace;

/// Which images of each frame are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompareTarget {
    /// The top and bottom screens (the default).
    Screens,
    /// The PICA colour buffer configured at the frame marker.
    Color,
    /// Screens and colour buffer.
    All,
}

/// Arguments of `picaview compare`.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Traces (.ctf).
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// The golden directory (GOLDEN/<trace-stem>/frame_NNNN_<image>.png).
    #[arg(long)]
    pub golden: PathBuf,
    /// Largest per-channel difference (0-255) still counted as equal.
    #[arg(long, default_value_t = 0)]
    pub tolerance: u8,
    /// Write difference images of mismatching frames to DIR/<trace-stem>/.
    #[arg(long, value_name = "DIR")]
    pub write_diff: Option<PathBuf>,
    /// Write the rendered images as the new golden files instead of comparing.
    #[arg(long)]
    pub update: bool,
    /// Which images to compare.
    #[arg(long, value_enum, default_value = "screens")]
    pub target: CompareTarget,
    /// Sample textures like Citra's software renderer (nearest, base level only).
    #[arg(long)]
    pub citra_swrast: bool,
    /// Traces replayed at the same time (default: the number of cores, at most 8).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

/// The result of one image.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageStatus {
    /// Identical within the tolerance.
    Match,
    /// Some pixels differ beyond the tolerance.
    Differ,
    /// No golden file (run with --update to create it).
    MissingGolden,
    /// The golden file could not be read or has another size.
    BadGolden,
    /// The image could not be rendered (e.g. the LCD is not set up).
    NotRendered,
    /// Written with --update.
    Updated,
}

/// One compared image.
#[derive(Clone, Debug, Serialize)]
pub struct ImageResult {
    /// File name inside the trace's golden directory.
    pub name: String,
    /// Outcome.
    pub status: ImageStatus,
    /// Pixels beyond the tolerance.
    pub differing: u64,
    /// Largest per-channel difference seen.
    pub max_channel_diff: u8,
    /// First pixel beyond the tolerance (x, row from the top).
    pub first: Option<(u32, u32)>,
    /// Difference image written, if any.
    pub diff_image: Option<String>,
    /// Explanation for the statuses that need one.
    pub detail: Option<String>,
}

/// One trace's results.
#[derive(Clone, Debug, Serialize)]
pub struct TraceResult {
    /// The trace as given.
    pub trace: String,
    /// Its golden directory.
    pub golden_dir: String,
    /// Frames compared.
    pub frames: u32,
    /// Images in order (by frame, then top, bottom, color).
    pub images: Vec<ImageResult>,
    /// Golden files of this trace's naming pattern that no rendered image corresponds to.
    pub extra_golden: Vec<String>,
    /// Set when the trace could not be processed at all.
    pub error: Option<String>,
}

impl TraceResult {
    fn ok(&self) -> bool {
        self.error.is_none()
            && self.extra_golden.is_empty()
            && self
                .images
                .iter()
                .all(|i| matches!(i.status, ImageStatus::Match | ImageStatus::Updated))
    }
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct CompareReport {
    /// Per trace, in the order given.
    pub traces: Vec<TraceResult>,
    /// Images compared (or written).
    pub images: u64,
    /// Images that did not match (any status but match/updated).
    pub mismatches: u64,
    /// True when everything matched.
    pub ok: bool,
}

/// Runs `picaview compare`; returns the exit status (0 all match, 1 mismatch, 2 a trace could
/// not be read).
pub fn run(args: &CompareArgs) -> Result<u8> {
    let mut stems = std::collections::BTreeMap::new();
    for t in &args.traces {
        let stem = trace_stem(t)?;
        if let Some(prev) = stems.insert(stem.clone(), t.clone()) {
            bail!(
                "{} and {} share the golden directory name '{stem}' (their file names without .ctf); rename one",
                prev.display(),
                t.display()
            );
        }
    }
    if !args.update && !args.golden.is_dir() {
        bail!(
            "{}: no such golden directory (create it with --update)",
            args.golden.display()
        );
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .clamp(1, 8);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .context("cannot start the worker threads")?;
    let results: Vec<TraceResult> = pool.install(|| {
        use rayon::prelude::*;
        args.traces
            .par_iter()
            .map(|t| compare_trace(t, args))
            .collect()
    });
    let images = results.iter().map(|r| r.images.len() as u64).sum();
    let mismatches = results
        .iter()
        .map(|r| {
            r.images
                .iter()
                .filter(|i| !matches!(i.status, ImageStatus::Match | ImageStatus::Updated))
                .count() as u64
                + r.extra_golden.len() as u64
                + u64::from(r.error.is_some())
        })
        .sum();
    let report = CompareReport {
        ok: results.iter().all(TraceResult::ok),
        traces: results,
        images,
        mismatches,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        print_text(&mut out, &report, args)?;
    }
    Ok(if report.traces.iter().any(|t| t.error.is_some()) {
        2
    } else if report.ok {
        0
    } else {
        1
    })
}

fn print_text(out: &mut impl std::io::Write, r: &CompareReport, args: &CompareArgs) -> Result<()> {
    for t in &r.traces {
        if let Some(e) = &t.error {
            writeln!(out, "{}: ERROR {e}", t.trace)?;
            continue;
        }
        let bad: Vec<&ImageResult> = t
            .images
            .iter()
            .filter(|i| !matches!(i.status, ImageStatus::Match | ImageStatus::Updated))
            .collect();
        let verdict = if args.update {
            format!(
                "wrote {} golden image(s) to {}",
                t.images.len(),
                t.golden_dir
            )
        } else if bad.is_empty() && t.extra_golden.is_empty() {
            format!("ok ({} image(s))", t.images.len())
        } else {
            format!(
                "FAIL ({} of {} image(s) differ{})",
                bad.len(),
                t.images.len(),
                if t.extra_golden.is_empty() {
                    String::new()
                } else {
                    format!(", {} golden file(s) without a frame", t.extra_golden.len())
                }
            )
        };
        writeln!(out, "{}: {} frame(s), {verdict}", t.trace, t.frames)?;
        for i in bad {
            let mut line = format!("  {}: ", i.name);
            match i.status {
                ImageStatus::Differ => {
                    line.push_str(&format!(
                        "{} pixel(s) differ by more than {} (largest channel difference {})",
                        i.differing, args.tolerance, i.max_channel_diff
                    ));
                    if let Some((x, y)) = i.first {
                        line.push_str(&format!(", first at ({x},{y})"));
                    }
                }
                ImageStatus::MissingGolden => line.push_str("no golden file (use --update)"),
                ImageStatus::BadGolden | ImageStatus::NotRendered => {
                    line.push_str(i.detail.as_deref().unwrap_or("cannot compare"));
                }
                ImageStatus::Match | ImageStatus::Updated => {}
            }
            if let Some(d) = &i.diff_image {
                line.push_str(&format!("; difference image {d}"));
            }
            writeln!(out, "{line}")?;
        }
        for e in &t.extra_golden {
            writeln!(out, "  {e}: golden file without a rendered frame")?;
        }
    }
    if !args.update {
        writeln!(
            out,
            "{} trace(s), {} image(s): {}",
            r.traces.len(),
            r.images,
            if r.ok {
                "all match".to_string()
            } else {
                format!("{} mismatch(es)", r.mismatches)
            }
        )?;
    }
    Ok(())
}

/// The trace's golden directory name: its file name without `.ctf`.
pub fn trace_stem(path: &Path) -> Result<String> {
    let name = path
        .file_name()
        .with_context(|| format!("{}: not a file name", path.display()))?
        .to_string_lossy();
    Ok(name
        .strip_suffix(".ctf")
        .or_else(|| name.strip_suffix(".CTF"))
        .unwrap_or(&name)
        .to_string())
}

/// The golden file name of image `kind` at frame `f`.
pub fn golden_name(f: u32, kind: &str) -> String {
    format!("frame_{f:04}_{kind}.png")
}

fn kinds(target: CompareTarget) -> &'static [&'static str] {
    match target {
        CompareTarget::Screens => &["top", "bottom"],
        CompareTarget::Color => &["color"],
        CompareTarget::All => &["top", "bottom", "color"],
    }
}

fn compare_trace(path: &Path, args: &CompareArgs) -> TraceResult {
    let stem = trace_stem(path).unwrap_or_default();
    let dir = args.golden.join(&stem);
    let mut result = TraceResult {
        trace: path.display().to_string(),
        golden_dir: dir.display().to_string(),
        frames: 0,
        images: Vec::new(),
        extra_golden: Vec::new(),
        error: None,
    };
    if let Err(e) = compare_trace_into(path, args, &dir, &stem, &mut result) {
        result.error = Some(crate::report::one_line(&e));
    }
    result
}

fn compare_trace_into(
    path: &Path,
    args: &CompareArgs,
    dir: &Path,
    stem: &str,
    result: &mut TraceResult,
) -> Result<()> {
    let trace = open_trace(path)?;
    let mut replay = Replay::new(trace);
    if args.citra_swrast {
        replay.set_render_mode(RenderMode::CitraSwrast);
    }
    let markers = replay
        .trace()
        .events()
        .filter(|e| matches!(e, StreamEvent::FrameMarker))
        .count() as u32;
    if args.update {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let diff_dir = args.write_diff.as_ref().map(|d| d.join(stem));
    let frames = markers.max(1);
    result.frames = frames;
    let mut expected = std::collections::BTreeSet::new();
    for f in 0..frames {
        let target = if markers == 0 {
            Target::End
        } else {
            Target::Frame(f)
        };
        replay.run_until(target, &mut ());
        for kind in kinds(args.target) {
            let name = golden_name(f, kind);
            expected.insert(name.clone());
            let img = frame_image(&replay, kind);
            let r = check_image(&name, img, dir, diff_dir.as_deref(), args)?;
            result.images.push(r);
        }
    }
    if !args.update && dir.is_dir() {
        let mut extra = Vec::new();
        for entry in
            std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?
        {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if is_golden_name(&name, args.target) && !expected.contains(&name) {
                extra.push(name);
            }
        }
        extra.sort();
        result.extra_golden = extra;
    }
    Ok(())
}

/// True for `frame_NNNN_<kind>.png` with a kind the target compares.
fn is_golden_name(name: &str, target: CompareTarget) -> bool {
    let Some(rest) = name.strip_prefix("frame_") else {
        return false;
    };
    let Some(rest) = rest.strip_suffix(".png") else {
        return false;
    };
    let Some((num, kind)) = rest.split_once('_') else {
        return false;
    };
    num.len() >= 4 && num.bytes().all(|b| b.is_ascii_digit()) && kinds(target).contains(&kind)
}

fn frame_image<S: TraceSource>(replay: &Replay<S>, kind: &str) -> Result<DecodedImage, String> {
    let (gpu, mem) = (replay.gpu(), replay.mem());
    match kind {
        "top" => screen_image(gpu, mem, Screen::Top).map_err(|e| format!("top screen: {e}")),
        "bottom" => {
            screen_image(gpu, mem, Screen::Bottom).map_err(|e| format!("bottom screen: {e}"))
        }
        _ => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            let pixels = fb
                .read_color_image(mem)
                .map_err(|e| format!("colour buffer: {e}"))?;
            Ok(DecodedImage {
                width: fb.width,
                height: fb.height,
                pixels,
            })
        }
    }
}

fn check_image(
    name: &str,
    img: Result<DecodedImage, String>,
    dir: &Path,
    diff_dir: Option<&Path>,
    args: &CompareArgs,
) -> Result<ImageResult> {
    let golden_path = dir.join(name);
    let mut r = ImageResult {
        name: name.to_string(),
        status: ImageStatus::Match,
        differing: 0,
        max_channel_diff: 0,
        first: None,
        diff_image: None,
        detail: None,
    };
    let img = match img {
        Ok(i) => i,
        Err(e) => {
            r.status = ImageStatus::NotRendered;
            r.detail = Some(format!("not rendered: {e}"));
            if args.update {
                // Nothing to write; a stale golden file would fail the next comparison.
                if golden_path.exists() {
                    std::fs::remove_file(&golden_path)
                        .with_context(|| format!("cannot remove {}", golden_path.display()))?;
                }
            }
            return Ok(r);
        }
    };
    if args.update {
        save_png(&img, &golden_path)?;
        r.status = ImageStatus::Updated;
        return Ok(r);
    }
    if !golden_path.exists() {
        r.status = ImageStatus::MissingGolden;
        return Ok(r);
    }
    let golden = match load_png(&golden_path) {
        Ok(g) => g,
        Err(e) => {
            r.status = ImageStatus::BadGolden;
            r.detail = Some(format!("cannot read the golden file: {e}"));
            return Ok(r);
        }
    };
    if (golden.width, golden.height) != (img.width, img.height) {
        r.status = ImageStatus::BadGolden;
        r.detail = Some(format!(
            "golden file is {}x{}, the rendered image {}x{}",
            golden.width, golden.height, img.width, img.height
        ));
        return Ok(r);
    }
    let mut diff_pixels = Vec::with_capacity(img.pixels.len());
    for (i, (p, g)) in img.pixels.iter().zip(&golden.pixels).enumerate() {
        let d = (0..4).map(|c| p[c].abs_diff(g[c])).max().unwrap_or(0);
        r.max_channel_diff = r.max_channel_diff.max(d);
        if d > args.tolerance {
            r.differing += 1;
            if r.first.is_none() {
                let w = img.width.max(1) as usize;
                r.first = Some(((i % w) as u32, (i / w) as u32));
            }
            diff_pixels.push([128u8.saturating_add(d / 2), 0, 0, 255]);
        } else {
            let grey = ((u16::from(p[0]) + u16::from(p[1]) + u16::from(p[2])) / 12) as u8;
            diff_pixels.push([grey, grey, grey, 255]);
        }
    }
    if r.differing > 0 {
        r.status = ImageStatus::Differ;
        if let Some(dd) = diff_dir {
            std::fs::create_dir_all(dd)
                .with_context(|| format!("cannot create {}", dd.display()))?;
            let path = dd.join(name.replace(".png", ".diff.png"));
            save_png(
                &DecodedImage {
                    width: img.width,
                    height: img.height,
                    pixels: diff_pixels,
                },
                &path,
            )?;
            r.diff_image = Some(path.display().to_string());
        }
    }
    Ok(r)
}

/// Largest golden image accepted (pixels), so that a hostile PNG cannot exhaust memory.
const MAX_GOLDEN_PIXELS: u64 = 4096 * 4096;

/// Reads a PNG as RGBA8.
pub fn load_png(path: &Path) -> Result<DecodedImage> {
    let reader = image::ImageReader::open(path)
        .with_context(|| format!("cannot open {}", path.display()))?
        .with_guessed_format()?;
    let (w, h) = reader.into_dimensions()?;
    if u64::from(w) * u64::from(h) > MAX_GOLDEN_PIXELS {
        bail!("{w}x{h} is larger than any picaview image");
    }
    let img = image::ImageReader::open(path)?
        .with_guessed_format()?
        .decode()?
        .to_rgba8();
    let (width, height) = img.dimensions();
    let pixels = img.pixels().map(|p| p.0).collect();
    Ok(DecodedImage {
        width,
        height,
        pixels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_names_and_stems() {
        assert_eq!(golden_name(3, "top"), "frame_0003_top.png");
        assert!(is_golden_name("frame_0003_top.png", CompareTarget::Screens));
        assert!(!is_golden_name(
            "frame_0003_color.png",
            CompareTarget::Screens
        ));
        assert!(is_golden_name("frame_0003_color.png", CompareTarget::All));
        assert!(!is_golden_name(
            "frame_0003_top.diff.png",
            CompareTarget::Screens
        ));
        assert!(!is_golden_name("notes.txt", CompareTarget::All));
        assert_eq!(trace_stem(Path::new("a/b/cube.ctf")).unwrap(), "cube");
        assert_eq!(trace_stem(Path::new("x.bin")).unwrap(), "x.bin");
    }
}
