//! `picaview render`: replays a CiTrace and writes screens or PICA buffers as PNG images.
//!
//! `--frame N` (0-based) is the state the replay has when the stream reaches its N-th frame
//! marker; with `--after-draw M`, the state right after the M-th draw (0-based) of that frame.
//! Citra records a frame marker before the writes that swap the LCD to the new image, so the
//! screens at marker N still show the image finished before it: that is what the console showed
//! at that moment, and it is not shifted here.
//!
//! `--target depth` maps the depth values present in the buffer (or `--depth-range a..b`, as
//! fractions of the format's maximum) to black..white, so that a scene drawn in a narrow range
//! near the far plane is not a nearly uniform image.
//!
//! `--tev-solo STAGE[:alpha]` (with `--after-draw`) re-renders that draw with one combiner
//! stage's output as its final colour (`gpu_core::tev::TevSolo`): the replay runs to the end
//! of the previous draw, sets the solo and runs the draw. With `--target color` the image
//! shows what the stage computed at every pixel the draw wrote.
//!
//! `--all-frames` writes `DIR/frame_NNNN.png` when `-o` is a directory (or a name without a
//! `.png` extension, created if needed), and `NAME_NNNN.png` beside it when `-o NAME.png`.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target, screen_image};
use gpu_core::tev::{SoloChannel, TevSolo};
use gpu_core::texture::DecodedImage;
use pica_cmd::citrace::TraceSource;

use crate::cmd_trace::open_trace;

/// Which image to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RenderTarget {
    /// The top LCD as a person sees it (400x240).
    Top,
    /// The bottom LCD (320x240).
    Bottom,
    /// The PICA colour buffer currently configured (upright: window y up).
    Color,
    /// The PICA depth buffer currently configured, as grey levels (larger values lighter), the
    /// depth range present (or --depth-range) stretched to black..white.
    Depth,
}

/// Arguments of `picaview render`.
#[derive(Args, Debug)]
pub struct RenderArgs {
    /// The trace (.ctf).
    pub trace: PathBuf,
    /// Frame (0-based): the state when the stream reaches this frame marker.
    #[arg(long, conflicts_with = "all_frames")]
    pub frame: Option<u32>,
    /// Draw within the frame (0-based): the state right after it.
    #[arg(long, conflicts_with = "all_frames")]
    pub after_draw: Option<u64>,
    /// Which image.
    #[arg(long, value_enum, default_value = "top")]
    pub target: RenderTarget,
    /// Depth values shown black..white with --target depth, as fractions of the format's
    /// maximum (e.g. 0.9..1); default: the range present in the buffer.
    #[arg(long, value_name = "A..B", value_parser = parse_depth_range)]
    pub depth_range: Option<DepthRange>,
    /// Render every frame: -o DIR writes DIR/frame_0000.png, ...; -o NAME.png writes
    /// NAME_0000.png, NAME_0001.png, ...
    #[arg(long)]
    pub all_frames: bool,
    /// Sample textures like Citra's software renderer: nearest, from the base level only, no
    /// filtering or mipmapping (to compare with Citra frame for frame). Default: as the
    /// hardware does.
    #[arg(long)]
    pub citra_swrast: bool,
    /// Re-render the --after-draw draw with combiner stage STAGE (0-5) as its final colour:
    /// `STAGE` or `STAGE:color` its RGB (opaque), `STAGE:alpha` its alpha as grey,
    /// `STAGE:rgba` both; no fog or blending (use --target color to see the draw's output).
    #[arg(long, value_name = "STAGE[:alpha]", requires = "after_draw", value_parser = parse_tev_solo)]
    pub tev_solo: Option<TevSolo>,
    /// Apply the edits of this edit script while replaying (syntax: `picaview edit --help`);
    /// no trace is written.
    #[arg(long, value_name = "FILE")]
    pub edits: Option<PathBuf>,
    /// Output PNG file, `-` for stdout (with --all-frames: a directory, or NAME.png for
    /// NAME_NNNN.png files).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Pixel-pipeline worker threads (default: the available cores). Images are
    /// bit-identical for every count.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Work budgets (`--budget SPEC`).
    #[command(flatten)]
    pub budget: crate::budget_flag::BudgetArgs,
}

/// The default number of pixel-pipeline workers: the available cores (1 if unknown).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Depth values (fractions of the depth format's maximum) shown as black and white.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DepthRange {
    /// Shown black.
    pub lo: f64,
    /// Shown white.
    pub hi: f64,
}

/// Parses `STAGE[:color|:alpha|:rgba]` with STAGE 0-5.
fn parse_tev_solo(s: &str) -> Result<TevSolo, String> {
    let (stage, channel) = s.split_once(':').unwrap_or((s, "color"));
    let stage = match stage.trim().parse::<u8>() {
        Ok(n) if n < 6 => n,
        _ => return Err(format!("expected a combiner stage 0-5, got '{stage}'")),
    };
    let channel = match channel.trim().to_ascii_lowercase().as_str() {
        "color" | "colour" | "rgb" => SoloChannel::Color,
        "alpha" | "a" => SoloChannel::Alpha,
        "rgba" | "both" => SoloChannel::Both,
        other => {
            return Err(format!(
                "expected STAGE, STAGE:color, STAGE:alpha or STAGE:rgba, got ':{other}'"
            ));
        }
    };
    Ok(TevSolo { stage, channel })
}

/// Parses `A..B` with 0 <= A < B <= 1.
fn parse_depth_range(s: &str) -> Result<DepthRange, String> {
    let (a, b) = s
        .split_once("..")
        .ok_or_else(|| format!("expected A..B (e.g. 0.9..1), got '{s}'"))?;
    let num = |t: &str| {
        t.trim()
            .parse::<f64>()
            .map_err(|_| format!("'{t}' is not a number (expected A..B, e.g. 0.9..1)"))
    };
    let (lo, hi) = (num(a)?, num(b)?);
    if !(0.0..=1.0).contains(&lo) || !(0.0..=1.0).contains(&hi) || lo >= hi {
        return Err(format!(
            "expected 0 <= A < B <= 1 (fractions of the depth format's maximum), got {lo}..{hi}"
        ));
    }
    Ok(DepthRange { lo, hi })
}

/// Runs `picaview render`.
pub fn run(args: &RenderArgs) -> Result<()> {
    // The output is checked before the (possibly long) replay.
    check_output(args)?;
    let trace = open_trace(&args.trace)?;
    let mut replay = Replay::new(trace);
    if args.citra_swrast {
        replay.set_render_mode(gpu_core::texture::RenderMode::CitraSwrast);
    }
    replay.set_threads(args.threads.map_or_else(default_threads, usize::from));
    if let Some(path) = &args.edits {
        let edits = crate::cmd_edit::read_script_file(path)?;
        replay
            .set_edits(edits)
            .with_context(|| path.display().to_string())?;
    }
    replay.set_work_budget(args.budget.budget());
    if args.all_frames {
        return all_frames(&mut replay, args);
    }
    let frame = args.frame.unwrap_or(0);
    let target = match args.after_draw {
        None => Target::Frame(frame),
        Some(m) => {
            let draw = draw_in_frame(&mut replay, frame, m)
                .with_context(|| args.trace.display().to_string())?;
            Target::AfterDraw(draw)
        }
    };
    let reached = match (args.tev_solo, target) {
        (Some(solo), Target::AfterDraw(draw)) => {
            // Only this draw runs with the solo: from the end of the previous one.
            match draw.checked_sub(1) {
                Some(prev) => replay.seek(Target::AfterDraw(prev), &mut ()),
                None => replay.seek(Target::AfterWrite(0), &mut ()),
            };
            replay.set_tev_solo(Some(solo));
            replay.run_until(target, &mut ())
        }
        _ => replay.seek(target, &mut ()),
    };
    if !reached {
        let markers = replay.position().frame;
        let valid = match markers {
            0 => "it has no frame marker".to_string(),
            1 => "it has 1 frame marker (use --frame 0)".to_string(),
            n => format!("it has {n} frame markers (use --frame 0..{})", n - 1),
        };
        bail!(
            "{}: the trace ends before frame {frame}: {valid}",
            args.trace.display()
        );
    }
    let img = image_of(&replay, args.target, args.depth_range)
        .with_context(|| format!("{}: no image at frame {frame}", args.trace.display()))?;
    let shown = if is_stdout(&args.output) {
        save_png_to(&img.image, &mut std::io::stdout().lock())?;
        "PNG to stdout".to_string()
    } else {
        save_png(&img.image, &args.output)?;
        args.output.display().to_string()
    };
    let pos = replay.position();
    let solo = args.tev_solo.map_or(String::new(), |s| {
        let what = match s.channel {
            SoloChannel::Color => "colour",
            SoloChannel::Alpha => "alpha",
            SoloChannel::Both => "colour and alpha",
        };
        format!("; the last draw shows combiner stage {}'s {what}", s.stage)
    });
    eprintln!(
        "wrote {shown} ({}x{}) at frame {}, after {} draw(s) and {} register write(s){}{solo}",
        img.image.width, img.image.height, pos.frame, pos.draws, pos.writes, img.note
    );
    Ok(())
}

/// `-o -`: the PNG goes to stdout.
fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Rejects outputs that cannot work before any replay: a name without `.png` (only PNG is
/// written), a missing parent directory, an existing directory as a file name, stdout for
/// several frames.
fn check_output(args: &RenderArgs) -> Result<()> {
    let out = &args.output;
    if args.all_frames {
        if is_stdout(out) {
            bail!("-o -: --all-frames writes one PNG per frame and cannot write them to stdout");
        }
        return Ok(());
    }
    if is_stdout(out) {
        return Ok(());
    }
    if out.is_dir() {
        bail!(
            "{}: is a directory; -o names the PNG file to write (or use --all-frames to write every frame into a directory)",
            out.display()
        );
    }
    if !out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("png"))
    {
        bail!(
            "{}: picaview writes PNG images only; name the output NAME.png (or - for stdout)",
            out.display()
        );
    }
    if let Some(parent) = out.parent()
        && !parent.as_os_str().is_empty()
        && !parent.is_dir()
    {
        bail!(
            "{}: the directory {} does not exist",
            out.display(),
            parent.display()
        );
    }
    Ok(())
}

/// Global index of draw `m` of frame `frame`, found by replaying up to the end of the frame
/// (no keyframes: memory stays bounded on long traces). Leaves the replay there.
pub fn draw_in_frame<S: TraceSource>(replay: &mut Replay<S>, frame: u32, m: u64) -> Result<u64> {
    replay.rewind();
    // Frame N is the stream between frame markers N-1 and N (or the end of the stream).
    if frame > 0 && !replay.run_until(Target::Frame(frame - 1), &mut ()) {
        let markers = replay.position().frame;
        bail!("the trace has {markers} frame marker(s); frame {frame} does not exist");
    }
    let start = replay.position();
    let closed = replay.run_until(Target::Frame(frame), &mut ());
    let end = replay.position();
    // An unclosed tail counts as a frame when anything happens in it (or if it is the only one).
    if !closed && frame > 0 && end.writes == start.writes {
        bail!(
            "the trace has {} frame(s); frame {frame} does not exist",
            end.frame
        );
    }
    let count = end.draws - start.draws;
    if m >= count {
        let valid = match count {
            0 => "it has no draw".to_string(),
            1 => "it has 1 draw (use --after-draw 0)".to_string(),
            n => format!("it has {n} draws (use --after-draw 0..{})", n - 1),
        };
        bail!("draw {m} of frame {frame} does not exist: {valid}");
    }
    Ok(start.draws + m)
}

/// Where `--all-frames` writes frame `f`.
#[derive(Debug, PartialEq)]
enum FramePaths {
    /// `DIR/frame_NNNN.png`.
    Dir(PathBuf),
    /// `STEM_NNNN.png` in the parent of `-o STEM.png`.
    Numbered { dir: PathBuf, stem: String },
}

impl FramePaths {
    /// `-o` is a directory (existing, or named without a `.png` extension) or `NAME.png`.
    fn of(output: &Path) -> Self {
        let is_png = output
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("png"));
        match output.file_stem() {
            Some(stem) if is_png && !output.is_dir() => FramePaths::Numbered {
                dir: output.parent().map(Path::to_path_buf).unwrap_or_default(),
                stem: stem.to_string_lossy().into_owned(),
            },
            _ => FramePaths::Dir(output.to_path_buf()),
        }
    }

    fn path(&self, f: u64) -> PathBuf {
        match self {
            FramePaths::Dir(d) => d.join(format!("frame_{f:04}.png")),
            FramePaths::Numbered { dir, stem } => dir.join(format!("{stem}_{f:04}.png")),
        }
    }

    /// Creates the directory the files go to.
    fn prepare(&self) -> Result<()> {
        let dir = match self {
            FramePaths::Dir(d) => d,
            FramePaths::Numbered { dir, .. } if dir.as_os_str().is_empty() => return Ok(()),
            FramePaths::Numbered { dir, .. } => dir,
        };
        if dir.exists() && !dir.is_dir() {
            bail!(
                "{}: exists and is not a directory (--all-frames writes one PNG per frame into a directory, or NAME_NNNN.png for -o NAME.png)",
                dir.display()
            );
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))
    }
}

fn all_frames<S: TraceSource>(replay: &mut Replay<S>, args: &RenderArgs) -> Result<()> {
    let paths = FramePaths::of(&args.output);
    paths.prepare()?;
    let frames = replay
        .trace()
        .events()
        .filter(|e| matches!(e, pica_cmd::citrace::StreamEvent::FrameMarker))
        .count() as u64;
    let bar = if std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(frames);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {pos}/{len} frames {elapsed} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Some(bar)
    } else {
        None
    };
    for f in 0..frames {
        replay.run_until(Target::Frame(f as u32), &mut ());
        let img = image_of(replay, args.target, args.depth_range)
            .with_context(|| format!("{}: no image at frame {f}", args.trace.display()))?;
        save_png(&img.image, &paths.path(f))?;
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish();
    }
    match &paths {
        FramePaths::Dir(d) => eprintln!("wrote {frames} frames to {}", d.display()),
        FramePaths::Numbered { .. } if frames > 0 => eprintln!(
            "wrote {frames} frames: {} .. {}",
            paths.path(0).display(),
            paths.path(frames - 1).display()
        ),
        FramePaths::Numbered { .. } => eprintln!("the trace has no frame marker; wrote nothing"),
    }
    Ok(())
}

/// A rendered image and a note for the user (the depth range shown, for depth images).
pub struct Rendered {
    /// The pixels.
    pub image: DecodedImage,
    /// Appended to the "wrote ..." line (empty or starting with "; ").
    pub note: String,
}

/// The requested image of the replay's current state. Depth images stretch `range` (default:
/// the range present) to black..white.
pub fn image_of<S: TraceSource>(
    replay: &Replay<S>,
    target: RenderTarget,
    range: Option<DepthRange>,
) -> Result<Rendered> {
    let gpu = replay.gpu();
    let mem = replay.mem();
    let plain = |image| Rendered {
        image,
        note: String::new(),
    };
    Ok(match target {
        RenderTarget::Top => plain(screen_image(gpu, mem, Screen::Top).context("top screen")?),
        RenderTarget::Bottom => {
            plain(screen_image(gpu, mem, Screen::Bottom).context("bottom screen")?)
        }
        RenderTarget::Color => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            let pixels = fb.read_color_image(mem).context("colour buffer")?;
            plain(DecodedImage {
                width: fb.width,
                height: fb.height,
                pixels,
            })
        }
        RenderTarget::Depth => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            let max = fb
                .depth_format
                .map(|f| f.max_depth())
                .unwrap_or(0xFF_FFFF)
                .max(1);
            let depths: Vec<u32> = fb
                .read_depth_image(mem)
                .context("depth buffer")?
                .into_iter()
                .map(|(d, _)| d)
                .collect();
            let (pixels, map) = depth_to_grey(&depths, max, range);
            let frac = |d: u32| f64::from(d) / f64::from(max);
            let (lo, hi) = (map.lo, map.hi);
            let note = match (range, depths.first()) {
                (None, Some(&d)) if depths.iter().all(|&x| x == d) => format!(
                    "; depth is {:.6} (0x{d:06X}) everywhere, shown as its absolute grey level",
                    frac(d)
                ),
                _ => format!(
                    "; depth {:.6}..{:.6} ({}; 0x{lo:06X}..0x{hi:06X} of 0x{max:06X}) shown black..white{}",
                    frac(lo),
                    frac(hi),
                    if range.is_some() { "given" } else { "present" },
                    match map.background {
                        Some(b) if b <= lo => format!(", background 0x{b:06X} black"),
                        Some(b) => format!(", background 0x{b:06X} white"),
                        None => String::new(),
                    }
                ),
            };
            Rendered {
                image: DecodedImage {
                    width: fb.width,
                    height: fb.height,
                    pixels,
                },
                note,
            }
        }
    })
}

/// How raw depth values become grey levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct DepthMap {
    /// Shown black (or the darkest non-background grey).
    lo: u32,
    /// Shown white (or the lightest non-background grey).
    hi: u32,
    /// The cleared background: the most frequent value when it covers at least a quarter of
    /// the buffer and is the nearest or farthest value present. It keeps the extreme grey of
    /// its side and the rest of the range is stretched over the other 7/8 of the greys, so
    /// that the drawn geometry is not squeezed into a few grey levels next to it.
    background: Option<u32>,
}

/// Grey levels left between the background and the nearest drawn depth.
const BACKGROUND_GAP: u64 = 32;

impl DepthMap {
    /// `range` (fractions of `max`) or, by default, what `depths` holds. A buffer holding one
    /// value everywhere is shown as that value's absolute level (0 = black, `max` = white),
    /// since there is no range to stretch.
    fn new(depths: &[u32], max: u32, range: Option<DepthRange>) -> Self {
        if let Some(r) = range {
            return DepthMap {
                lo: (r.lo * f64::from(max)).round() as u32,
                hi: (r.hi * f64::from(max)).round() as u32,
                background: None,
            };
        }
        let mut sorted = depths.to_vec();
        sorted.sort_unstable();
        let (Some(&lo), Some(&hi)) = (sorted.first(), sorted.last()) else {
            return DepthMap {
                lo: 0,
                hi: max,
                background: None,
            };
        };
        if lo == hi {
            return DepthMap {
                lo: 0,
                hi: max,
                background: None,
            };
        }
        // The most frequent value (runs of the sorted copy).
        let (mut mode, mut mode_n, mut run_v, mut run_n) = (lo, 0usize, lo, 0usize);
        for &d in &sorted {
            if d == run_v {
                run_n += 1;
            } else {
                run_v = d;
                run_n = 1;
            }
            if run_n > mode_n {
                (mode, mode_n) = (run_v, run_n);
            }
        }
        let rest_lo = sorted.iter().copied().find(|&d| d != lo).unwrap_or(hi);
        let rest_hi = sorted
            .iter()
            .rev()
            .copied()
            .find(|&d| d != hi)
            .unwrap_or(lo);
        let dominant = mode_n > 1 && mode_n * 4 >= sorted.len();
        match mode {
            m if dominant && m == lo => DepthMap {
                lo: rest_lo,
                hi,
                background: Some(m),
            },
            m if dominant && m == hi => DepthMap {
                lo,
                hi: rest_hi,
                background: Some(m),
            },
            _ => DepthMap {
                lo,
                hi,
                background: None,
            },
        }
    }

    fn grey(&self, d: u32) -> u8 {
        let (mut g0, mut g1) = (0u64, 255u64);
        match self.background {
            Some(b) if d == b => return if b <= self.lo { 0 } else { 255 },
            Some(b) if b <= self.lo => g0 = BACKGROUND_GAP,
            Some(_) => g1 = 255 - BACKGROUND_GAP,
            None => {}
        }
        let span = u64::from(self.hi.saturating_sub(self.lo));
        if span == 0 {
            return if d <= self.lo { g0 as u8 } else { g1 as u8 };
        }
        let x = u64::from(d.clamp(self.lo, self.hi) - self.lo);
        (g0 + (x * (g1 - g0) + span / 2) / span).min(255) as u8
    }
}

/// Maps raw depth values to grey pixels (see [`DepthMap`]); returns the map used.
fn depth_to_grey(depths: &[u32], max: u32, range: Option<DepthRange>) -> (Vec<[u8; 4]>, DepthMap) {
    let map = DepthMap::new(depths, max, range);
    let pixels = depths
        .iter()
        .map(|&d| {
            let g = map.grey(d);
            [g, g, g, 255]
        })
        .collect();
    (pixels, map)
}

/// Writes an RGBA image as PNG.
pub fn save_png(img: &DecodedImage, path: &Path) -> Result<()> {
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?;
    let mut w = std::io::BufWriter::new(file);
    save_png_to(img, &mut w).with_context(|| format!("cannot write {}", path.display()))?;
    w.flush()
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Encodes an RGBA image as PNG into `w`.
pub fn save_png_to(img: &DecodedImage, w: &mut impl std::io::Write) -> Result<()> {
    use image::ImageEncoder as _;
    let bytes: Vec<u8> = img.pixels.iter().flatten().copied().collect();
    if bytes.len() as u64 != u64::from(img.width) * u64::from(img.height) * 4 {
        bail!(
            "image size {}x{} does not match its {} pixels",
            img.width,
            img.height,
            img.pixels.len()
        );
    }
    // Encoded in memory first (a screen is at most a few MiB): the encoder reports I/O errors
    // as text, and a closed pipe must stay recognisable as one.
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png).write_image(
        &bytes,
        img.width,
        img.height,
        image::ExtendedColorType::Rgba8,
    )?;
    w.write_all(&png)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_range_present_is_stretched() {
        let (px, map) = depth_to_grey(&[0xF0_0000, 0xF8_0000, 0xFF_FFFF], 0xFF_FFFF, None);
        assert_eq!(
            (map.lo, map.hi, map.background),
            (0xF0_0000, 0xFF_FFFF, None)
        );
        assert_eq!(px[0][0], 0);
        assert_eq!(px[2][0], 255);
        assert!((120..=136).contains(&px[1][0]), "{}", px[1][0]);
    }

    #[test]
    fn cleared_background_keeps_its_extreme_and_the_rest_is_stretched() {
        // Mostly cleared to 0 (near), geometry between 0x1000 and 0x2000.
        let mut d = vec![0u32; 100];
        d.extend([0x1000, 0x1800, 0x2000]);
        let (px, map) = depth_to_grey(&d, 0xFF_FFFF, None);
        assert_eq!(map.background, Some(0));
        assert_eq!(px[0][0], 0);
        assert_eq!(px[100][0], BACKGROUND_GAP as u8);
        assert_eq!(px[102][0], 255);
        // Cleared to far: the background is white, geometry spans black..
        let mut d = vec![0xFF_FFFFu32; 100];
        d.extend([0x10, 0x20]);
        let (px, _) = depth_to_grey(&d, 0xFF_FFFF, None);
        assert_eq!(
            (px[0][0], px[100][0], px[101][0]),
            (255, 0, 255 - BACKGROUND_GAP as u8)
        );
    }

    #[test]
    fn depth_range_given_clamps() {
        let r = DepthRange { lo: 0.5, hi: 1.0 };
        let (px, _) = depth_to_grey(&[0, 0xFF_FFFF], 0xFF_FFFF, Some(r));
        assert_eq!((px[0][0], px[1][0]), (0, 255));
        let (px, _) = depth_to_grey(&[0x80_0000, 0x80_0000], 0xFF_FFFF, None);
        assert_eq!(px[0][0], 128, "one value everywhere: its absolute level");
    }

    #[test]
    fn depth_range_parses() {
        assert_eq!(
            parse_depth_range("0.9..1"),
            Ok(DepthRange { lo: 0.9, hi: 1.0 })
        );
        assert!(parse_depth_range("1..0.5").is_err());
        assert!(parse_depth_range("0.5").is_err());
        assert!(parse_depth_range("a..b").is_err());
    }

    #[test]
    fn tev_solo_parses() {
        let s = |stage, channel| Ok(TevSolo { stage, channel });
        assert_eq!(parse_tev_solo("2"), s(2, SoloChannel::Color));
        assert_eq!(parse_tev_solo("0:alpha"), s(0, SoloChannel::Alpha));
        assert_eq!(parse_tev_solo("5:RGBA"), s(5, SoloChannel::Both));
        assert_eq!(parse_tev_solo("1:color"), s(1, SoloChannel::Color));
        assert!(parse_tev_solo("6").is_err());
        assert!(parse_tev_solo("x").is_err());
        assert!(parse_tev_solo("1:green").is_err());
        assert!(parse_tev_solo("").is_err());
    }

    #[test]
    fn all_frames_paths() {
        let p = FramePaths::of(Path::new("out/shot.png"));
        assert_eq!(p.path(3), Path::new("out/shot_0003.png"));
        let p = FramePaths::of(Path::new("frames"));
        assert_eq!(p.path(12), Path::new("frames/frame_0012.png"));
    }
}
