//! `picaview render`: replays a CiTrace and writes screens or PICA buffers as PNG images.
//!
//! `--frame N` (0-based) is the state the replay has when the stream reaches its N-th frame
//! marker; with `--after-draw M`, the state right after the M-th draw (0-based) of that frame.
//! Citra records a frame marker before the writes that swap the LCD to the new image, so the
//! screens at marker N still show the image finished before it: that is what the console showed
//! at that moment, and it is not shifted here.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target, TraceIndex, screen_image};
use gpu_core::texture::DecodedImage;
use pica_cmd::citrace::{CiTrace, TraceSource};

/// Which image to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RenderTarget {
    /// The top LCD as a person sees it (400x240).
    Top,
    /// The bottom LCD (320x240).
    Bottom,
    /// The PICA colour buffer currently configured (upright: window y up).
    Color,
    /// The PICA depth buffer currently configured, as grey levels (white = far).
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
    /// Render every frame into the directory given by -o (frame_0000.png, ...).
    #[arg(long)]
    pub all_frames: bool,
    /// Output PNG file (or directory with --all-frames).
    #[arg(short, long)]
    pub output: PathBuf,
}

/// Runs `picaview render`.
pub fn run(args: &RenderArgs) -> Result<()> {
    let trace = CiTrace::open(&args.trace)
        .with_context(|| format!("cannot read trace {}", args.trace.display()))?;
    let mut replay = Replay::new(trace);
    if args.all_frames {
        return all_frames(&mut replay, args);
    }
    let frame = args.frame.unwrap_or(0);
    let target = match args.after_draw {
        None => Target::Frame(frame),
        Some(m) => {
            let index = replay.build_index();
            Target::AfterDraw(draw_in_frame(&index, frame, m)?)
        }
    };
    if !replay.seek(target, &mut ()) {
        let markers = replay.position().frame;
        bail!(
            "the trace ends before {target:?}: it has {markers} frame marker(s) and {} draw(s)",
            replay.position().draws
        );
    }
    let img = image_of(&replay, args.target)?;
    save_png(&img, &args.output)?;
    eprintln!(
        "wrote {} ({}x{}) at {:?}",
        args.output.display(),
        img.width,
        img.height,
        replay.position()
    );
    Ok(())
}

/// Global index of draw `m` of frame `frame`.
pub fn draw_in_frame(index: &TraceIndex, frame: u32, m: u64) -> Result<u64> {
    let Some(f) = index.frames.get(frame as usize) else {
        bail!(
            "the trace has {} frames; frame {frame} does not exist",
            index.frames.len()
        );
    };
    let count = f.draws.end - f.draws.start;
    if m >= count {
        bail!("frame {frame} has {count} draws; draw {m} does not exist");
    }
    Ok(f.draws.start + m)
}

fn all_frames<S: TraceSource>(replay: &mut Replay<S>, args: &RenderArgs) -> Result<()> {
    std::fs::create_dir_all(&args.output)
        .with_context(|| format!("cannot create {}", args.output.display()))?;
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
        let img = image_of(replay, args.target)?;
        save_png(&img, &args.output.join(format!("frame_{f:04}.png")))?;
        if let Some(b) = &bar {
            b.inc(1);
        }
    }
    if let Some(b) = bar {
        b.finish();
    }
    eprintln!("wrote {frames} frames to {}", args.output.display());
    Ok(())
}

/// The requested image of the replay's current state.
pub fn image_of<S: TraceSource>(replay: &Replay<S>, target: RenderTarget) -> Result<DecodedImage> {
    let gpu = replay.gpu();
    let mem = replay.mem();
    Ok(match target {
        RenderTarget::Top => screen_image(gpu, mem, Screen::Top).context("top screen")?,
        RenderTarget::Bottom => screen_image(gpu, mem, Screen::Bottom).context("bottom screen")?,
        RenderTarget::Color => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            let pixels = fb.read_color_image(mem).context("colour buffer")?;
            DecodedImage {
                width: fb.width,
                height: fb.height,
                pixels,
            }
        }
        RenderTarget::Depth => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            let max = fb
                .depth_format
                .map(|f| f.max_depth())
                .unwrap_or(0xFF_FFFF)
                .max(1);
            let pixels = fb
                .read_depth_image(mem)
                .context("depth buffer")?
                .into_iter()
                .map(|(d, _)| {
                    let g = (u64::from(d) * 255 / u64::from(max)) as u8;
                    [g, g, g, 255]
                })
                .collect();
            DecodedImage {
                width: fb.width,
                height: fb.height,
                pixels,
            }
        }
    })
}

/// Writes an RGBA image as PNG.
pub fn save_png(img: &DecodedImage, path: &Path) -> Result<()> {
    let bytes: Vec<u8> = img.pixels.iter().flatten().copied().collect();
    let buf = image::RgbaImage::from_raw(img.width, img.height, bytes)
        .context("image size does not match its pixels")?;
    buf.save_with_format(path, image::ImageFormat::Png)
        .with_context(|| format!("cannot write {}", path.display()))
}
