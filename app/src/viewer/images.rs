//! Image extraction for the viewer: screens, render targets, textures and raw memory, plus the
//! pixel picker and the timeline thumbnails.
//!
//! Stage: presentation, run on the worker thread. Inputs: a GPU state ([`Gpu`]: PICA registers,
//! external/LCD registers) and physical memory ([`PhysMem`]). Outputs: [`ImageData`] (RGBA8,
//! top row first), [`PixelInfo`] and [`Thumb`]. Registers read: the render-target registers
//! through `FramebufferConfig::from_regs` (0x112-0x11E), the texture-unit registers through
//! `TextureConfig::from_regs` (0x080-0x0A7), the LCD framebuffer registers through
//! `LcdFramebufferConfig` and `gpu_core::lcd::scan_out` (PDC blocks at PA 0x10400400 /
//! 0x10400500; the top screen's right eye reads framebuffer B when 3D is on).
//!
//! Orientation: every image is stored top row first. The colour and depth buffers are shown with
//! memory row 0 at the top (window y grows upwards, so window row `h − 1 − r` is image row `r`),
//! which is how `FramebufferConfig::read_color_image` returns them; a 3DS render target is
//! 240 wide and 400 tall and looks rotated until the display transfer and LCD turn it — the UI
//! can rotate the view.

use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::gpu::Gpu;
use gpu_core::lcd::{Eye, LCD_ROW_PIXELS, LcdColorFill, LcdFramebufferConfig, Screen, scan_out};
use gpu_core::memory::PhysMem;
use gpu_core::pixel::Rgba;
use gpu_core::texture::config::CubeFace;
use gpu_core::texture::{TextureConfig, TextureFormat, decode_at, decode_texture};

use super::protocol::{
    CustomFormat, CustomImage, ImageData, ImageKind, ImageSource, PixelInfo, Thumb,
};

/// Largest side of a render target the viewer decodes (FRAMEBUFFER_DIM allows 1024 × 1024;
/// anything larger comes from garbage registers).
pub const MAX_TARGET_SIDE: u32 = 2048;

/// Largest thumbnail side.
pub const THUMB_SIDE: u32 = 64;

fn face(i: u8) -> CubeFace {
    CubeFace::ALL
        .get(usize::from(i))
        .copied()
        .unwrap_or(CubeFace::ALL[0])
}

fn check_target(fb: &FramebufferConfig) -> Result<(), String> {
    if fb.width == 0 || fb.height == 0 || fb.width > MAX_TARGET_SIDE || fb.height > MAX_TARGET_SIDE
    {
        return Err(format!(
            "render target size {}x{} (FRAMEBUFFER_DIM 0x11E) is not displayable",
            fb.width, fb.height
        ));
    }
    Ok(())
}

/// The screen and eye a screen source shows; `None` for the other sources.
pub fn screen_eye(source: ImageSource) -> Option<(Screen, Eye)> {
    match source {
        ImageSource::TopScreen => Some((Screen::Top, Eye::Left)),
        ImageSource::TopScreenRight => Some((Screen::Top, Eye::Right)),
        ImageSource::BottomScreen => Some((Screen::Bottom, Eye::Left)),
        _ => None,
    }
}

/// True when the top screen shows each eye a different framebuffer in `ext_regs` (the
/// external register file, PA 0x10400000 + 4·i): 3D on and framebuffer B set.
pub fn top_screen_stereo(ext_regs: &[u32]) -> bool {
    let cfg =
        LcdFramebufferConfig::from_ext_regs(Screen::Top, ext_regs, gpu_core::gpu::EXT_REG_BASE);
    cfg.stereo() && cfg.address(Eye::Right) != cfg.address(Eye::Left)
}

/// Decodes `source` from a GPU state.
pub fn extract(gpu: &Gpu, mem: &PhysMem, source: ImageSource) -> Result<ImageData, String> {
    match source {
        ImageSource::TopScreen | ImageSource::TopScreenRight | ImageSource::BottomScreen => {
            let (screen, eye) = screen_eye(source).unwrap_or((Screen::Top, Eye::Left));
            let cfg = LcdFramebufferConfig::from_ext_regs(
                screen,
                &gpu.ext_regs[..],
                gpu_core::gpu::EXT_REG_BASE,
            );
            let fill =
                LcdColorFill::from_lcd_regs(screen, &gpu.lcd_regs[..], gpu_core::gpu::LCD_REG_BASE);
            let img = scan_out(mem, &cfg, eye, fill).map_err(|e| e.to_string())?;
            let eye_text = match (screen, eye) {
                (Screen::Top, Eye::Right) if cfg.stereo() => " (right eye, 3D on)",
                (Screen::Top, Eye::Right) => " (right eye: 3D off, framebuffer A)",
                _ => "",
            };
            let description = match cfg.format {
                Some(f) => format!(
                    "{:?} screen{eye_text}: framebuffer 0x{:08X}, {}, stride {} bytes, scanned out upright",
                    screen,
                    cfg.address(eye),
                    f.name(),
                    cfg.stride
                ),
                None => format!("{screen:?} screen{eye_text}"),
            };
            Ok(ImageData {
                width: img.width,
                height: img.height,
                pixels: img.pixels,
                kind: ImageKind::Color,
                description,
            })
        }
        ImageSource::Color => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            check_target(&fb)?;
            let pixels = fb.read_color_image(mem).map_err(|e| e.to_string())?;
            let fmt = fb.color_format.map_or_else(
                || format!("format {}", fb.color_format_id),
                |f| f.name().into(),
            );
            Ok(ImageData {
                width: fb.width,
                height: fb.height,
                pixels,
                kind: ImageKind::Color,
                description: format!(
                    "colour buffer 0x{:08X}, {}x{}, {fmt}, {:?}",
                    fb.color_addr, fb.width, fb.height, fb.tile_mode
                ),
            })
        }
        ImageSource::Depth | ImageSource::Stencil => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            check_target(&fb)?;
            let values = fb.read_depth_image(mem).map_err(|e| e.to_string())?;
            let fmt = fb.depth_format.map_or_else(
                || format!("format {}", fb.depth_format_id),
                |f| f.name().into(),
            );
            if source == ImageSource::Stencil {
                if !fb.depth_format.is_some_and(|f| f.has_stencil()) {
                    return Err(format!("the depth buffer format ({fmt}) has no stencil"));
                }
                let pixels = values.iter().map(|&(_, s)| [s, s, s, 255]).collect();
                return Ok(ImageData {
                    width: fb.width,
                    height: fb.height,
                    pixels,
                    kind: ImageKind::Stencil,
                    description: format!(
                        "stencil of 0x{:08X}, {}x{}, {fmt} (grey = stencil value)",
                        fb.depth_addr, fb.width, fb.height
                    ),
                });
            }
            let lo = values.iter().map(|v| v.0).min().unwrap_or(0);
            let hi = values.iter().map(|v| v.0).max().unwrap_or(0);
            let span = u64::from(hi - lo).max(1);
            let pixels = values
                .iter()
                .map(|&(d, _)| {
                    // ok: (d - lo) <= span, so the quotient is at most 255.
                    let g = (u64::from(d - lo) * 255 / span) as u8;
                    [g, g, g, 255]
                })
                .collect();
            Ok(ImageData {
                width: fb.width,
                height: fb.height,
                pixels,
                kind: ImageKind::Depth,
                description: format!(
                    "depth of 0x{:08X}, {}x{}, {fmt}; grey auto-ranged over {lo}..={hi}",
                    fb.depth_addr, fb.width, fb.height
                ),
            })
        }
        ImageSource::Texture {
            unit,
            face: f,
            level,
        } => {
            if unit > 2 {
                return Err(format!("texture unit {unit} does not exist (0-2)"));
            }
            let cfg = TextureConfig::from_regs(&gpu.regs, usize::from(unit));
            let img = decode_texture(mem, &cfg, face(f), usize::from(level))
                .map_err(|e| e.to_string())?;
            let fmt = cfg
                .format
                .map_or_else(|| format!("format {}", cfg.format_id), |f| f.name().into());
            Ok(ImageData {
                width: img.width,
                height: img.height,
                pixels: img.pixels,
                kind: ImageKind::Color,
                description: format!(
                    "texture unit {unit}: 0x{:08X}, {}x{} (level {level}: {}x{}), {fmt}, {:?}",
                    cfg.face_address(face(f)),
                    cfg.width,
                    cfg.height,
                    img.width,
                    img.height,
                    cfg.texture_type
                ),
            })
        }
        ImageSource::Custom(c) => custom(mem, c),
    }
}

fn custom(mem: &PhysMem, c: CustomImage) -> Result<ImageData, String> {
    if c.width == 0 || c.height == 0 || c.width > MAX_TARGET_SIDE || c.height > MAX_TARGET_SIDE {
        return Err(format!(
            "size {}x{} is not displayable (1-2048)",
            c.width, c.height
        ));
    }
    let description = format!(
        "memory 0x{:08X}, {}x{}, {}",
        c.addr,
        c.width,
        c.height,
        c.format.name()
    );
    if let Some(t) = c.format.texture() {
        let img = decode_at(mem, c.addr, c.width, c.height, t).map_err(|e| e.to_string())?;
        return Ok(ImageData {
            width: img.width,
            height: img.height,
            pixels: img.pixels,
            kind: ImageKind::Color,
            description,
        });
    }
    let f = c.format.color().ok_or("invalid format")?;
    let bpp = f.bytes_per_pixel();
    let row_bytes = c.width as usize * bpp;
    let mut pixels = Vec::with_capacity(c.width as usize * c.height as usize);
    let mut row = vec![0u8; row_bytes];
    for y in 0..c.height {
        let addr = u64::from(c.addr) + u64::from(y) * row_bytes as u64;
        let addr = u32::try_from(addr).map_err(|_| "image runs past the 32-bit address space")?;
        mem.read(addr, &mut row)
            .map_err(|_| format!("row {y} at 0x{addr:08X} is not in mapped memory"))?;
        pixels.extend(row.chunks_exact(bpp).map(|px| f.decode(px)));
    }
    Ok(ImageData {
        width: c.width,
        height: c.height,
        pixels,
        kind: ImageKind::Color,
        description,
    })
}

fn hex_bytes(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn rgba_text(c: Rgba) -> String {
    format!("R {} G {} B {} A {}", c[0], c[1], c[2], c[3])
}

/// Address, raw bytes and decoded value of pixel (x, y) (y = image row from the top).
pub fn pick(gpu: &Gpu, mem: &PhysMem, source: ImageSource, x: u32, y: u32) -> PixelInfo {
    let mut rows = vec![("pixel".to_string(), format!("({x}, {y})"))];
    let mut add = |k: &str, v: String| rows.push((k.to_string(), v));
    match source {
        ImageSource::Color | ImageSource::Depth | ImageSource::Stencil => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            if y >= fb.height || x >= fb.width {
                add("error", "outside the render target".into());
                return PixelInfo { rows };
            }
            let wy = fb.height - 1 - y;
            add("window (x, y)", format!("({x}, {wy}) (y up)"));
            if source == ImageSource::Color {
                match fb.color_pixel_addr(x, wy) {
                    Ok(addr) => {
                        add("address", format!("0x{addr:08X}"));
                        let n = fb.color_format.map_or(4, |f| f.bytes_per_pixel());
                        match mem.read_vec(addr, n) {
                            Ok(b) => add("raw bytes", hex_bytes(&b)),
                            Err(e) => add("raw bytes", e.to_string()),
                        }
                    }
                    Err(e) => add("address", e.to_string()),
                }
                match fb.read_color(mem, x, wy) {
                    Ok(c) => add("decoded", rgba_text(c)),
                    Err(e) => add("decoded", e.to_string()),
                }
            } else {
                match fb.depth_pixel_addr(x, wy) {
                    Ok(addr) => {
                        add("address", format!("0x{addr:08X}"));
                        let n = fb.depth_format.map_or(4, |f| f.bytes_per_pixel());
                        match mem.read_vec(addr, n) {
                            Ok(b) => add("raw bytes", hex_bytes(&b)),
                            Err(e) => add("raw bytes", e.to_string()),
                        }
                    }
                    Err(e) => add("address", e.to_string()),
                }
                match fb.read_depth_stencil(mem, x, wy) {
                    Ok((d, s)) => {
                        let max = fb.depth_format.map_or(1, |f| f.max_depth()).max(1);
                        add(
                            "depth",
                            format!("{d} (0x{d:06X}) = {:.6}", f64::from(d) / f64::from(max)),
                        );
                        if fb.depth_format.is_some_and(|f| f.has_stencil()) {
                            add("stencil", format!("{s} (0x{s:02X})"));
                        }
                    }
                    Err(e) => add("decoded", e.to_string()),
                }
            }
        }
        ImageSource::TopScreen | ImageSource::TopScreenRight | ImageSource::BottomScreen => {
            let (screen, eye) = screen_eye(source).unwrap_or((Screen::Top, Eye::Left));
            let fill =
                LcdColorFill::from_lcd_regs(screen, &gpu.lcd_regs[..], gpu_core::gpu::LCD_REG_BASE);
            if fill.enabled {
                add("LCD colour fill", rgba_text(fill.color));
                return PixelInfo { rows };
            }
            let cfg = LcdFramebufferConfig::from_ext_regs(
                screen,
                &gpu.ext_regs[..],
                gpu_core::gpu::EXT_REG_BASE,
            );
            let Some(f) = cfg.format else {
                add(
                    "error",
                    format!("invalid LCD format 0x{:X}", cfg.format_word),
                );
                return PixelInfo { rows };
            };
            if y >= LCD_ROW_PIXELS {
                add("error", "outside the screen".into());
                return PixelInfo { rows };
            }
            // scan_out: screen column x is framebuffer row x; screen row y is pixel 239 − y.
            let bpp = f.bytes_per_pixel() as u64;
            let addr = u64::from(cfg.address(eye))
                + u64::from(x) * u64::from(cfg.stride)
                + u64::from(LCD_ROW_PIXELS - 1 - y) * bpp;
            match u32::try_from(addr) {
                Ok(addr) => {
                    add("address", format!("0x{addr:08X}"));
                    add("format", f.name().into());
                    match mem.read_vec(addr, f.bytes_per_pixel()) {
                        Ok(b) => {
                            add("raw bytes", hex_bytes(&b));
                            add("decoded", rgba_text(f.decode(&b)));
                        }
                        Err(e) => add("raw bytes", e.to_string()),
                    }
                }
                Err(_) => add("address", "past the 32-bit address space".into()),
            }
        }
        ImageSource::Texture {
            unit,
            face: fc,
            level,
        } => {
            let cfg = TextureConfig::from_regs(&gpu.regs, usize::from(unit.min(2)));
            let Some(fmt) = cfg.format else {
                add("error", format!("invalid texture format {}", cfg.format_id));
                return PixelInfo { rows };
            };
            let Some(layout) = cfg.layout() else {
                add("error", "texture has no usable size".into());
                return PixelInfo { rows };
            };
            let Some(info) = layout.levels().get(usize::from(level)).copied() else {
                add("error", format!("no mip level {level}"));
                return PixelInfo { rows };
            };
            let base = cfg.face_address(face(fc)).wrapping_add(info.offset);
            texel_rows(mem, base, fmt, x, y, info.width, &mut add);
        }
        ImageSource::Custom(c) => {
            if let Some(t) = c.format.texture() {
                texel_rows(mem, c.addr, t, x, y, c.width, &mut add);
            } else if let Some(f) = c.format.color() {
                let bpp = f.bytes_per_pixel() as u64;
                let addr =
                    u64::from(c.addr) + (u64::from(y) * u64::from(c.width) + u64::from(x)) * bpp;
                match u32::try_from(addr) {
                    Ok(addr) => {
                        add("address", format!("0x{addr:08X}"));
                        match mem.read_vec(addr, f.bytes_per_pixel()) {
                            Ok(b) => {
                                add("raw bytes", hex_bytes(&b));
                                add("decoded", rgba_text(f.decode(&b)));
                            }
                            Err(e) => add("raw bytes", e.to_string()),
                        }
                    }
                    Err(_) => add("address", "past the 32-bit address space".into()),
                }
            }
        }
    }
    PixelInfo { rows }
}

fn texel_rows(
    mem: &PhysMem,
    base: u32,
    fmt: TextureFormat,
    x: u32,
    y: u32,
    width: u32,
    add: &mut impl FnMut(&str, String),
) {
    let addr = base.wrapping_add(fmt.texel_offset(x, y, width));
    let n = fmt.fetch_bytes() as usize;
    add("format", fmt.name().into());
    add(
        if fmt.is_etc() {
            "block address"
        } else {
            "address"
        },
        format!("0x{addr:08X}"),
    );
    match mem.read_vec(addr, n) {
        Ok(b) => {
            let mut raw = [0u8; 16];
            raw[..n].copy_from_slice(&b);
            let what = match fmt {
                TextureFormat::I4 | TextureFormat::A4 => {
                    let nib = if x & 1 == 0 { b[0] & 0xF } else { b[0] >> 4 };
                    format!("{} (nibble {:X})", hex_bytes(&b), nib)
                }
                _ => hex_bytes(&b),
            };
            add("raw bytes", what);
            add("decoded", rgba_text(fmt.fetch(&raw, x, y)));
        }
        Err(e) => add("raw bytes", e.to_string()),
    }
}

/// A small snapshot of the colour buffer (nearest-neighbour, at most [`THUMB_SIDE`] per side),
/// or `None` when the colour buffer is not readable.
pub fn thumbnail(gpu: &Gpu, mem: &PhysMem) -> Option<Thumb> {
    let fb = FramebufferConfig::from_regs(&gpu.regs);
    check_target(&fb).ok()?;
    fb.color_format?;
    let scale = (fb.width.max(fb.height)).div_ceil(THUMB_SIDE).max(1);
    let (w, h) = (fb.width.div_ceil(scale), fb.height.div_ceil(scale));
    let mut pixels = Vec::with_capacity((w * h) as usize);
    for row in 0..h {
        let wy = fb.height - 1 - (row * scale).min(fb.height - 1);
        for col in 0..w {
            let x = (col * scale).min(fb.width - 1);
            let c = fb.read_color(mem, x, wy).unwrap_or([0, 0, 0, 0]);
            // Opaque: render targets often hold alpha 0.
            pixels.push([c[0], c[1], c[2], 255]);
        }
    }
    Some(Thumb {
        width: w,
        height: h,
        pixels,
    })
}

/// Which custom-format choice matches a texture format (for "open texture as memory").
pub fn custom_format_of(fmt: TextureFormat) -> CustomFormat {
    // ok: texture format ids are 0-13.
    CustomFormat::Tiled(fmt.id() as u8)
}
