//! Scene builder: writes CiTrace files (`.ctf`) of 3DS GPU work built from code, with the register
//! traffic real 3DS graphics libraries (libctru/citro3d) produce, so the traces exercise the
//! emulator like captures of real homebrew do.
//!
//! Stage: producer of traces (input of the trace player). Inputs: calls on [`Scene`] (resources,
//! frames) and [`CommandList`] (GPU state and draws). Output: `.ctf` bytes via pica-cmd's
//! [`CiTraceBuilder`]. Registers written: the PICA registers of the command lists (see
//! [`cmd`]), and through MMIO (stream register writes, physical addresses) the memory-fill units
//! (PA 0x10400010-0x1040002C), the display-transfer engine (PA 0x10400C00-0x10400C18), the
//! command-list kick (PA 0x104018E0/E8/F0, size in **bytes** as Citra records it) and the LCD
//! framebuffer setup of both screens (PDC blocks at PA 0x10400400 / 0x10400500: +0x68/+0x6C and
//! +0x94/+0x98 addresses, +0x70 format, +0x78 displayed buffer, +0x90 stride).
//!
//! # A frame, as a trace records it
//!
//! 1. [`Scene::clear`]: memory fills of the colour and depth buffers (`C3D_RenderTargetClear`).
//! 2. [`Scene::submit`]: the command list's size, address, the memory load of the list itself and
//!    of every vertex/index/texture range its draws read, then the trigger write — the order
//!    Citra's recorder produces, since it records loads while handling the trigger.
//! 3. [`Scene::present`]: a display transfer of the render target (240 × 400 or 240 × 320, RGBA8,
//!    tiled) into the screen's back LCD framebuffer (linear RGB8), as `C3D_FrameEnd` does.
//! 4. [`Scene::end_frame`]: the buffer swap (the PDC writes of GSP `SetBufferSwap`), **then** the
//!    frame marker. So the screens as of frame marker N show frame N. (Citra's own traces may
//!    record the marker before the swap writes, in which case marker N shows frame N − 1; both
//!    are valid streams and a player must not shift either.)
//!
//! Memory (see [`memory`]): render targets in VRAM; the command buffer, vertex/index/texture data
//! and the two LCD framebuffers per screen in the linear heap (FCRAM), as `gfxInitDefault` and
//! `linearAlloc` place them. The initial state is Citra-sized with the LCD registers configured
//! (RGB8, stride 720, buffer 0 displayed) and everything else zero: the first command list sets
//! the GPU state up itself ([`CommandList::defaults`]).
//!
//! Everything is deterministic: no clocks, no randomness, no hash-map iteration.
//!
//! Source tags in comments: \[LC\] devkitPro libctru (`gpu.c`, `shaderProgram.c`, `shbin.c`),
//! \[C3D\] devkitPro citro3d (`base.c`, `effect.c`, `framebuffer.c`, `renderqueue.c`, draw and
//! lighting files) — read to learn the register sequences, not copied — \[C\] Citra, \[3DB\]
//! 3dbrew. Float conversions to float24/float31/float16 truncate the mantissa as \[LC\]'s
//! `f32tof24` does (the alternative, rounding to nearest, would change some low bits).

pub mod cmd;
pub mod demos;
pub mod effect;
pub mod layout;
pub mod lighting;
pub mod math;
pub mod memory;
pub mod preview;
pub mod resources;
pub mod shader;
pub mod texture;

#[cfg(test)]
mod tests;

pub use cmd::{CommandList, Unit};
pub use effect::{Effect, FogLut};
pub use layout::{AttribLayout, BufferLayout};
pub use lighting::{Light, LightEnv, LightLut, LutSlot};
pub use resources::{IndexBuffer, RenderTarget, VertexBuffer};
pub use shader::{ShaderBinary, ShaderProgram};
pub use texture::{Image, Sampler, Texture};

use std::sync::Arc;

use gpu_core::lcd::{Eye, Screen, pdc};
use pica_cmd::citrace::{
    BuildError, CiTraceBuilder, CiTraceError, InitialState, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE,
    PA_CMDLIST_TRIGGER,
};
use pica_cmd::cmdlist::EncodeError;
use pica_cmd::regs::framebuffer::{ColorFormat, DepthFormat};
use pica_cmd::regs::pipeline::IndexFormat;
use pica_cmd::regs::texturing::TextureFormat;

use cmd::Residency;
use memory::{GuestMemory, Pool};
use resources::{color_bytes, depth_bytes};

/// Errors of scene building (and of the verification replay in [`preview`]).
#[derive(Debug, thiserror::Error)]
pub enum SceneError {
    /// An allocation does not fit the pool.
    #[error("out of {pool:?} memory allocating {len} bytes")]
    OutOfMemory {
        /// The pool.
        pool: Pool,
        /// Requested size.
        len: u32,
    },
    /// A range that is not CPU-written memory of the scene (e.g. a render target) was read or
    /// written as data.
    #[error("0x{pa:08X}..+0x{len:X} is not CPU-written scene memory")]
    NotCpuMemory {
        /// First address.
        pa: u32,
        /// Length.
        len: u32,
    },
    /// A shader source did not assemble (the assembler's rendered diagnostics).
    #[error("shader assembly failed:\n{0}")]
    Assembly(String),
    /// A DVLE index past the binary's entries.
    #[error("the shader binary has no entry {0}")]
    NoSuchEntry(usize),
    /// A DVLE used for the wrong stage.
    #[error("shader entry {entry} is not a {expected} shader")]
    WrongShaderKind {
        /// The entry.
        entry: usize,
        /// What was expected.
        expected: &'static str,
    },
    /// A texture format the encoder does not produce (ETC1/ETC1A4).
    #[error("textures in format {0:?} cannot be encoded by the scene builder")]
    UnsupportedTexture(TextureFormat),
    /// A texture level that is not a multiple of 8 in each direction.
    #[error("texture level {width}x{height} is not a multiple of 8x8")]
    TextureSize {
        /// Width.
        width: u32,
        /// Height.
        height: u32,
    },
    /// A command could not be encoded.
    #[error("command-list encoding failed: {0}")]
    Encode(#[from] EncodeError),
    /// `draw_elements` before `set_buffers` (the index buffer offset needs the base address).
    #[error("draw_elements needs set_buffers first")]
    NoBuffers,
    /// A command list larger than the command buffer's free space.
    #[error("command list of {len} bytes does not fit the {free} free bytes of the command buffer")]
    CommandBufferFull {
        /// List size.
        len: usize,
        /// Free space.
        free: u32,
    },
    /// Writing the trace failed.
    #[error("building the trace failed: {0}")]
    Trace(#[from] BuildError),
    /// Reading a trace failed (verification replay).
    #[error("reading the trace failed: {0}")]
    Read(#[from] CiTraceError),
    /// The verification replay could not load memory.
    #[error("replay: {0}")]
    Replay(String),
}

/// Size of the command buffer (bytes): citro3d's default is 256 KiB; stress scenes need more.
pub const COMMAND_BUFFER_SIZE: u32 = 0x10_0000;

/// One screen's pair of LCD framebuffers.
#[derive(Clone, Copy, Debug)]
struct ScreenBuffers {
    screen: Screen,
    /// The two framebuffers (linear RGB8, 240 pixels per row).
    fb: [u32; 2],
    /// The right eye's two framebuffers (B), once [`Scene::set_stereo`] turned 3D on.
    right: Option<[u32; 2]>,
    /// 3D on: swaps write framebuffer B = `right` and interlace mode 2 ("AB").
    stereo: bool,
    /// Index of the framebuffer being displayed.
    shown: usize,
    /// A transfer into the back buffer happened this frame.
    pending: bool,
}

/// LCD framebuffer format: external colour format id 1 = RGB8 (`pica-raster.md` §10.1).
const LCD_FORMAT_RGB8: u32 = 1;
/// LCD format bits 4-5 = 2: interlace mode "AB", stereoscopic 3D (libctru sets bit 5 when 3D
/// is on).
const LCD_FORMAT_STEREO: u32 = 0x20;
/// Bytes per LCD framebuffer pixel (RGB8).
const LCD_BYTES: u32 = 3;
/// LCD framebuffer row stride (240 pixels of RGB8).
const LCD_STRIDE: u32 = 240 * LCD_BYTES;

/// PA of the memory-fill registers: unit 0 at +0x10, unit 1 at +0x20 (start, end, value,
/// control).
const MEMFILL_BASE: [u32; 2] = [0x1040_0010, 0x1040_0020];
/// Display-transfer registers (PA).
mod transfer {
    pub const INPUT: u32 = 0x1040_0C00;
    pub const OUTPUT: u32 = 0x1040_0C04;
    pub const OUTPUT_DIM: u32 = 0x1040_0C08;
    pub const INPUT_DIM: u32 = 0x1040_0C0C;
    pub const FLAGS: u32 = 0x1040_0C10;
    pub const TRIGGER: u32 = 0x1040_0C18;
}

/// External (display transfer / LCD) id of a colour format: 0 RGBA8, 1 RGB8, 2 RGB565,
/// 3 RGB5A1, 4 RGBA4 — 2 and 3 swapped relative to the PICA ids (`pica-raster.md` §10.1).
pub fn external_format(f: ColorFormat) -> u32 {
    match f {
        ColorFormat::Rgb565 => 2,
        ColorFormat::Rgb5a1 => 3,
        other => other.raw(),
    }
}

/// A trace under construction.
#[derive(Debug)]
pub struct Scene {
    trace: CiTraceBuilder,
    mem: GuestMemory,
    residency: Residency,
    cmdbuf: u32,
    cmdbuf_used: u32,
    screens: [ScreenBuffers; 2],
    initialized: bool,
    frames: u32,
    draws: u64,
}

impl Scene {
    /// A new scene: command buffer and LCD framebuffers allocated, LCD registers set up in the
    /// initial state (both screens RGB8, stride 720, framebuffer 0 displayed).
    pub fn new() -> Result<Self, SceneError> {
        let mut mem = GuestMemory::default();
        let cmdbuf = mem.alloc(Pool::Linear, COMMAND_BUFFER_SIZE, 0x80, Some(&[]))?;
        let mut screens = [Screen::Top, Screen::Bottom].map(|screen| ScreenBuffers {
            screen,
            fb: [0; 2],
            right: None,
            stereo: false,
            shown: 0,
            pending: false,
        });
        for s in &mut screens {
            let (w, h) = s.screen.size();
            for fb in &mut s.fb {
                *fb = mem.alloc(Pool::Linear, w * h * LCD_BYTES, 0x80, None)?;
            }
        }
        let mut initial = InitialState::citra_sized();
        for s in &screens {
            let base = s.screen.pdc_base();
            // Upright size: (400 or 320, 240).
            let (long, short) = s.screen.size();
            let regs = [
                // Framebuffer size: width (240, the short side) | height (long side) << 16.
                (pdc::SIZE, (long << 16) | short),
                (pdc::A_FIRST, s.fb[0]),
                (pdc::A_SECOND, s.fb[1]),
                (pdc::B_FIRST, s.fb[0]),
                (pdc::B_SECOND, s.fb[1]),
                (pdc::FORMAT, LCD_FORMAT_RGB8),
                (pdc::SELECT, 0),
                (pdc::STRIDE, LCD_STRIDE),
            ];
            for (off, v) in regs {
                initial.set_gpu_register(base + off, v);
            }
        }
        Ok(Scene {
            trace: CiTraceBuilder::new(initial),
            mem,
            residency: Residency::default(),
            cmdbuf,
            cmdbuf_used: 0,
            screens,
            initialized: false,
            frames: 0,
            draws: 0,
        })
    }

    /// Frame markers written so far.
    pub fn frames(&self) -> u32 {
        self.frames
    }

    /// Draws submitted so far.
    pub fn draws(&self) -> u64 {
        self.draws
    }

    // ----- resources ----------------------------------------------------------------------

    /// Copies `data` into a new linear-heap buffer (0x80-aligned).
    pub fn vertex_buffer(&mut self, data: &[u8]) -> Result<VertexBuffer, SceneError> {
        let len = u32::try_from(data.len()).map_err(|_| SceneError::OutOfMemory {
            pool: Pool::Linear,
            len: u32::MAX,
        })?;
        let pa = self.mem.alloc(Pool::Linear, len, 0x80, Some(data))?;
        Ok(VertexBuffer { pa, len })
    }

    /// Overwrites the start of an existing buffer (the CPU rewriting a dynamic vertex buffer);
    /// later submissions load the new contents.
    pub fn write_buffer(&mut self, buffer: &VertexBuffer, data: &[u8]) -> Result<(), SceneError> {
        if data.len() > buffer.len as usize {
            return Err(SceneError::NotCpuMemory {
                pa: buffer.pa,
                len: u32::try_from(data.len()).unwrap_or(u32::MAX),
            });
        }
        self.mem.write(buffer.pa, data)
    }

    /// A vertex buffer of little-endian f32 values.
    pub fn vertex_buffer_f32(&mut self, data: &[f32]) -> Result<VertexBuffer, SceneError> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.vertex_buffer(&bytes)
    }

    /// A buffer of u16 indices.
    pub fn index_buffer_u16(&mut self, indices: &[u16]) -> Result<IndexBuffer, SceneError> {
        let bytes: Vec<u8> = indices.iter().flat_map(|v| v.to_le_bytes()).collect();
        let b = self.vertex_buffer(&bytes)?;
        Ok(IndexBuffer {
            pa: b.pa,
            format: IndexFormat::U16,
            indices: Arc::from(indices),
        })
    }

    /// A buffer of u8 indices.
    pub fn index_buffer_u8(&mut self, indices: &[u8]) -> Result<IndexBuffer, SceneError> {
        let b = self.vertex_buffer(indices)?;
        let wide: Vec<u16> = indices.iter().map(|&i| u16::from(i)).collect();
        Ok(IndexBuffer {
            pa: b.pa,
            format: IndexFormat::U8,
            indices: Arc::from(wide),
        })
    }

    /// Encodes `image` (and `levels − 1` mip levels) in `format` into a new linear-heap texture.
    pub fn texture(
        &mut self,
        image: &Image,
        format: TextureFormat,
        levels: u32,
        sampler: Sampler,
    ) -> Result<Texture, SceneError> {
        let data = texture::encode_mip_chain(image, format, levels)?;
        let buf = self.vertex_buffer(&data)?;
        Ok(Texture {
            pa: buf.pa,
            size: buf.len,
            width: image.width,
            height: image.height,
            format,
            max_level: levels.max(1) - 1,
            sampler,
        })
    }

    /// A render target in VRAM (`C3D_RenderTargetCreate`): colour buffer, then the optional
    /// depth buffer.
    pub fn render_target(
        &mut self,
        width: u32,
        height: u32,
        color_format: ColorFormat,
        depth: Option<DepthFormat>,
    ) -> Result<RenderTarget, SceneError> {
        let color_pa = self.mem.alloc(
            Pool::Vram,
            width * height * color_bytes(color_format),
            0x100,
            None,
        )?;
        let depth_pa = match depth {
            Some(f) => {
                Some(
                    self.mem
                        .alloc(Pool::Vram, width * height * depth_bytes(f), 0x100, None)?,
                )
            }
            None => None,
        };
        Ok(RenderTarget {
            color_pa,
            depth_pa,
            width,
            height,
            color_format,
            depth_format: depth.unwrap_or(DepthFormat::D16),
        })
    }

    /// The top-screen render target games use: 240 × 400 RGBA8 with a D24S8 depth buffer.
    pub fn top_target(&mut self) -> Result<RenderTarget, SceneError> {
        self.render_target(240, 400, ColorFormat::Rgba8, Some(DepthFormat::D24S8))
    }

    /// The bottom-screen render target: 240 × 320 RGBA8 with a D24S8 depth buffer.
    pub fn bottom_target(&mut self) -> Result<RenderTarget, SceneError> {
        self.render_target(240, 320, ColorFormat::Rgba8, Some(DepthFormat::D24S8))
    }

    // ----- frame operations ---------------------------------------------------------------

    /// A new command list. The scene's first list starts with [`CommandList::defaults`].
    pub fn command_list(&mut self) -> CommandList {
        let mut list = CommandList::new(self.residency.clone());
        if !self.initialized {
            self.initialized = true;
            list.defaults();
        }
        list
    }

    /// Clears a render target with the two memory-fill units (`C3D_RenderTargetClear`): unit 0
    /// fills the colour buffer with `color` `[r, g, b, a]` encoded in its format, unit 1 the depth
    /// buffer with `depth_stencil` (D24S8: stencil << 24 | depth; D24/D16: the depth value).
    /// Each unit's start (PA >> 3), end (PA >> 3, exclusive), value and control (bit 0 start;
    /// bits 8-9 width: 0 16-bit, 1 24-bit, 2 32-bit) are written in that order.
    pub fn clear(&mut self, target: &RenderTarget, color: [u8; 4], depth_stencil: u32) {
        let [r, g, b, a] = color;
        let (value, width) = match target.color_format {
            ColorFormat::Rgba8 => (u32::from_be_bytes([r, g, b, a]), 2),
            ColorFormat::Rgb8 => (u32::from_le_bytes([b, g, r, 0]), 1),
            ColorFormat::Rgb5a1 => (u32::from(gpu_core::pixel::encode_rgb5a1(color)), 0),
            ColorFormat::Rgb565 => (u32::from(gpu_core::pixel::encode_rgb565(color)), 0),
            _ => (u32::from(gpu_core::pixel::encode_rgba4(color)), 0),
        };
        self.memory_fill(0, target.color_pa, target.color_size(), value, width);
        if let Some(depth_pa) = target.depth_pa {
            let width = match target.depth_format {
                DepthFormat::D16 => 0,
                DepthFormat::D24 => 1,
                _ => 2,
            };
            self.memory_fill(1, depth_pa, target.depth_size(), depth_stencil, width);
        }
    }

    fn memory_fill(&mut self, unit: usize, pa: u32, len: u32, value: u32, width: u32) {
        let base = MEMFILL_BASE[unit & 1];
        self.trace
            .register_write(base, pa >> 3)
            .register_write(base + 4, (pa + len) >> 3)
            .register_write(base + 8, value)
            .register_write(base + 0xC, 1 | (width << 8));
    }

    /// Finishes `list` and kicks it: the list is written at the next free place of the command
    /// buffer; the trace gets the size (bytes) and address (PA >> 3) writes, the memory load of
    /// the list, the loads of the distinct memory ranges its draws read (first use order; none
    /// for a texture in a render target), and the trigger write.
    pub fn submit(&mut self, list: CommandList) -> Result<(), SceneError> {
        let done = list.finish()?;
        let free = COMMAND_BUFFER_SIZE - self.cmdbuf_used;
        let len = u32::try_from(done.bytes.len())
            .ok()
            .filter(|&l| l <= free)
            .ok_or(SceneError::CommandBufferFull {
                len: done.bytes.len(),
                free,
            })?;
        let pa = self.cmdbuf + self.cmdbuf_used;
        self.mem.write(pa, &done.bytes)?;
        self.trace
            .register_write(PA_CMDLIST_SIZE, len)
            .register_write(PA_CMDLIST_ADDR, pa >> 3);
        self.trace.memory_load(pa, &done.bytes)?;
        let mut seen: Vec<(u32, u32)> = Vec::new();
        for &(rpa, rlen) in &done.reads {
            if seen.contains(&(rpa, rlen)) {
                continue;
            }
            seen.push((rpa, rlen));
            if self.mem.gpu_only(rpa, rlen) {
                // Render to texture: the draw samples what the GPU rendered, nothing to load.
                continue;
            }
            let data = self.mem.read(rpa, rlen)?;
            self.trace.memory_load(rpa, data)?;
        }
        self.trace.register_write(PA_CMDLIST_TRIGGER, 1);
        // Lists start 16-byte aligned (the list size is a multiple of 16 already).
        self.cmdbuf_used += len.next_multiple_of(16);
        self.residency = done.residency;
        self.draws += u64::from(done.draws);
        Ok(())
    }

    /// Display-transfers `target`'s colour buffer to `screen`'s back LCD framebuffer: tiled →
    /// linear, the target's format → RGB8, no flip, no scaling (citro3d's usual transfer flags).
    /// Registers (PA): input/output address (PA >> 3), output/input dimensions (width | height
    /// << 16), flags (input format bits 8-10, output format bits 12-14), trigger.
    pub fn present(&mut self, target: &RenderTarget, screen: Screen) {
        self.present_eye(target, screen, Eye::Left);
    }

    /// Turns stereoscopic 3D on or off for the top screen (libctru `gfxSet3D`): the first time
    /// it is turned on, two right-eye framebuffers are allocated. From the next swap on
    /// ([`Scene::end_frame`]) the PDC writes put them in framebuffer B and set interlace mode 2
    /// ("AB"); with 3D off, framebuffer B = A and mode 0, as libctru writes them.
    pub fn set_stereo(&mut self, on: bool) -> Result<(), SceneError> {
        let s = &mut self.screens[screen_index(Screen::Top)];
        if on && s.right.is_none() {
            let (w, h) = Screen::Top.size();
            let mut right = [0; 2];
            for fb in &mut right {
                *fb = self
                    .mem
                    .alloc(Pool::Linear, w * h * LCD_BYTES, 0x80, None)?;
            }
            s.right = Some(right);
        }
        s.stereo = on;
        Ok(())
    }

    /// As [`Scene::present`], into `eye`'s back framebuffer: the right eye's (B) when 3D is on
    /// ([`Scene::set_stereo`]) and `screen` is the top screen, else the left one (A).
    pub fn present_eye(&mut self, target: &RenderTarget, screen: Screen, eye: Eye) {
        let s = &mut self.screens[screen_index(screen)];
        let back = match (eye, s.right) {
            (Eye::Right, Some(right)) if s.stereo => right[1 - s.shown],
            _ => s.fb[1 - s.shown],
        };
        s.pending = true;
        let dim = (target.height << 16) | target.width;
        let flags = (external_format(target.color_format) << 8) | (LCD_FORMAT_RGB8 << 12);
        self.trace
            .register_write(transfer::INPUT, target.color_pa >> 3)
            .register_write(transfer::OUTPUT, back >> 3)
            .register_write(transfer::OUTPUT_DIM, dim)
            .register_write(transfer::INPUT_DIM, dim)
            .register_write(transfer::FLAGS, flags)
            .register_write(transfer::TRIGGER, 1);
    }

    /// Ends the frame: swaps every screen that received a transfer (the PDC writes of GSP
    /// `SetBufferSwap`: left and right address of the newly shown buffer's slot, stride, format,
    /// displayed-slot select), then writes the frame marker. The command buffer is reused from
    /// its start in the next frame (`C3D_FrameBegin`).
    pub fn end_frame(&mut self) {
        for s in &mut self.screens {
            if !s.pending {
                continue;
            }
            s.pending = false;
            s.shown = 1 - s.shown;
            let base = s.screen.pdc_base();
            let (left, right) = if s.shown == 0 {
                (pdc::A_FIRST, pdc::B_FIRST)
            } else {
                (pdc::A_SECOND, pdc::B_SECOND)
            };
            let fb = s.fb[s.shown];
            let (fb_b, format) = match s.right {
                Some(r) if s.stereo => (r[s.shown], LCD_FORMAT_RGB8 | LCD_FORMAT_STEREO),
                _ => (fb, LCD_FORMAT_RGB8),
            };
            self.trace
                .register_write(base + left, fb)
                .register_write(base + right, fb_b)
                .register_write(base + pdc::STRIDE, LCD_STRIDE)
                .register_write(base + pdc::FORMAT, format)
                .register_write(base + pdc::SELECT, s.shown as u32);
        }
        self.trace.frame_marker();
        self.frames += 1;
        self.cmdbuf_used = 0;
    }

    /// The finished trace file.
    pub fn finish(&self) -> Result<Vec<u8>, SceneError> {
        Ok(self.trace.build()?)
    }
}

fn screen_index(s: Screen) -> usize {
    match s {
        Screen::Top => 0,
        Screen::Bottom => 1,
    }
}
