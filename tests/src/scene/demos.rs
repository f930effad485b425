//! The bundled demo traces (`assets/demos/*.ctf`): what each shows and the code that builds it.
//!
//! Stage: producer of the demo traces (`tests/src/bin/gen_demos.rs` writes them,
//! `tests/tests/demo_traces.rs` checks that rebuilding gives identical bytes). Inputs: none — every
//! mesh, texture and animation value is computed here from constants. Outputs: `.ctf` bytes.
//! Registers written: through [`super::Scene`] and [`super::CommandList`].
//!
//! Shaders are picasso sources in `demos/*.pica` (our own; assembled at build time of the trace).

mod cube;
mod fog_blend;
mod geoshader;
mod stress;

use std::path::{Path, PathBuf};

use super::SceneError;
use super::texture::Image;

/// One demo trace.
#[derive(Clone, Copy, Debug)]
pub struct Demo {
    /// File stem: the trace is `assets/demos/{name}.ctf`.
    pub name: &'static str,
    /// One-line description.
    pub summary: &'static str,
    /// Builds the trace bytes.
    pub build: fn() -> Result<Vec<u8>, SceneError>,
}

/// The cube demo's scene for `frames` frames (its six frames repeated): a long capture of
/// ordinary frames for measuring memory and time (issue 18's 1,200-frame capture).
pub fn cube_frames(frames: u32) -> Result<Vec<u8>, SceneError> {
    cube::build_frames(frames)
}

/// Every demo, in the order the README lists them.
pub const DEMOS: [Demo; 4] = [
    Demo {
        name: "cube",
        summary: "lit, textured, rotating cube on the top screen; 2D UI on the bottom screen",
        build: cube::build,
    },
    Demo {
        name: "geoshader",
        summary: "a turning galaxy of particles: points expanded to sprites by a geometry shader",
        build: geoshader::build,
    },
    Demo {
        name: "fog_blend",
        summary: "rows of translucent panels over a textured ground receding into fog",
        build: fog_blend::build,
    },
    Demo {
        name: "stress",
        summary: "312 small draws per frame with varied state, for performance work",
        build: stress::build,
    },
];

/// `assets/demos/` of the workspace.
pub fn demos_dir() -> PathBuf {
    let tests_crate = Path::new(env!("CARGO_MANIFEST_DIR"));
    tests_crate
        .parent()
        .map_or_else(|| tests_crate.join(".."), Path::to_path_buf)
        .join("assets")
        .join("demos")
}

/// The top screen's aspect ratio (width / height as a person sees it).
pub const TOP_ASPECT: f32 = 400.0 / 240.0;

/// Little-endian vertex data built field by field.
#[derive(Clone, Debug, Default)]
pub struct VertexBytes(pub Vec<u8>);

impl VertexBytes {
    /// Appends f32 values.
    pub fn f32s(&mut self, v: &[f32]) -> &mut Self {
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self
    }

    /// Appends i16 values.
    pub fn i16s(&mut self, v: &[i16]) -> &mut Self {
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self
    }

    /// Appends bytes.
    pub fn u8s(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
}

/// A unit cube centred on the origin: 24 vertices of (position xyz, texcoord uv, normal xyz)
/// as f32 (32 bytes each), 4 per face, and 36 indices of counter-clockwise (seen from outside)
/// triangles.
pub fn cube_mesh() -> (Vec<f32>, Vec<u16>) {
    // (normal, u axis, v axis) with u × v = normal.
    const FACES: [([f32; 3], [f32; 3], [f32; 3]); 6] = [
        ([1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, -1.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
    ];
    const CORNERS: [(f32, f32); 4] = [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)];
    let mut verts = Vec::with_capacity(24 * 8);
    let mut indices = Vec::with_capacity(36);
    for (f, (n, u, v)) in FACES.iter().enumerate() {
        for &(a, b) in &CORNERS {
            let p: [f32; 3] = std::array::from_fn(|k| 0.5 * (n[k] + a * u[k] + b * v[k]));
            verts.extend_from_slice(&p);
            verts.extend_from_slice(&[(a + 1.0) / 2.0, (b + 1.0) / 2.0]);
            verts.extend_from_slice(n);
        }
        // ok: at most 24 vertices.
        let base = (f * 4) as u16;
        indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
    }
    (verts, indices)
}

/// A wooden-crate-like texture: planks with a frame and a diagonal brace, `size` × `size`.
pub fn crate_image(size: u32) -> Image {
    let s = size as f32;
    Image::from_fn(size, size, |x, y| {
        let (fx, fy) = (x as f32 / s, y as f32 / s);
        let inside = |v: f32, m: f32| (m..=1.0 - m).contains(&v);
        let frame = !inside(fx, 0.12) || !inside(fy, 0.12);
        let brace = (fx - fy).abs() < 0.08;
        let plank = ((fy * 5.0) as u32).is_multiple_of(2);
        let grain = ((x * 7 + y * 3) % 11) as u8;
        let base: [u8; 3] = if frame || brace {
            [150, 96, 44]
        } else if plank {
            [196, 140, 72]
        } else {
            [180, 126, 62]
        };
        let edge = frame && (!inside(fx, 0.03) || !inside(fy, 0.03));
        let k = if edge { 60 } else { grain * 3 };
        [
            base[0].saturating_sub(k),
            base[1].saturating_sub(k),
            base[2].saturating_sub(k),
            255,
        ]
    })
}

/// A checkerboard of `cells` × `cells` squares in two colours.
pub fn checker_image(size: u32, cells: u32, a: [u8; 4], b: [u8; 4]) -> Image {
    let cell = (size / cells.max(1)).max(1);
    Image::from_fn(size, size, |x, y| {
        if ((x / cell) + (y / cell)).is_multiple_of(2) {
            a
        } else {
            b
        }
    })
}

/// A soft round dot: white, alpha falling from 255 in the centre to 0 at the edge.
pub fn dot_image(size: u32) -> Image {
    let r = size as f32 / 2.0;
    Image::from_fn(size, size, |x, y| {
        let dx = (x as f32 + 0.5 - r) / r;
        let dy = (y as f32 + 0.5 - r) / r;
        let d = (dx * dx + dy * dy).sqrt();
        let a = (1.0 - d).clamp(0.0, 1.0);
        // ok: a in [0, 1].
        [255, 255, 255, (a * a * 255.0) as u8]
    })
}
