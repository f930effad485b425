//! Matrix helpers for scene building: 4×4 row-major matrices as the shaders consume them
//! (`dp4 out.x, m[0], v` uses row 0), and the projections 3DS software uses.
//!
//! Stage: host-side helper (no hardware stage). Inputs: angles, extents, clip distances.
//! Outputs: [`Mat4`] values that [`super::CommandList::uniform_mat4`] uploads row by row.
//! Registers read: none.
//!
//! # Conventions (all derived here from the PICA's rules, not copied from a library)
//!
//! * Clip space: the PICA keeps `-w <= z <= 0` (`pica-core.md` §8.2), so the projections map the
//!   near plane to `z/w = -1` and the far plane to `z/w = 0`. With the usual depth map
//!   (`DEPTHMAP_SCALE = -1`, `DEPTHMAP_OFFSET = 0`, as citro3d sets it) the near plane gets depth
//!   1.0 and the far plane 0.0, so scenes depth-test with GREATER and clear depth to 0.
//! * Screen rotation: 3DS games render the top screen into a 240 × 400 colour buffer that the
//!   display transfer copies unrotated into the LCD framebuffer, whose memory rows are screen
//!   columns (`pica-raster.md` §10.6). PICA window +x then points **up** the physical screen and
//!   window +y points **left**. The "tilt" projections therefore take an ordinary projection for
//!   the upright screen (x right, y up) and rotate its output: `pica.x = screen.y`,
//!   `pica.y = -screen.x`.
//! * Right-handed eye space (camera looks down -z), like OpenGL.

/// A 4×4 matrix, row-major: `m[row][column]`. A vector is a column: `v' = M · v`.
pub type Mat4 = [[f32; 4]; 4];

/// The identity matrix.
pub const IDENTITY: Mat4 = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// Rotation of clip space that turns an upright-screen projection into the PICA's rotated one
/// (`pica.x = screen.y`, `pica.y = -screen.x`; see the module docs).
const TILT: Mat4 = [
    [0.0, 1.0, 0.0, 0.0],
    [-1.0, 0.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// `a · b`.
pub fn mul(a: &Mat4, b: &Mat4) -> Mat4 {
    let mut out = [[0.0f32; 4]; 4];
    for (r, row) in out.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            *cell = (0..4).map(|k| a[r][k] * b[k][c]).sum();
        }
    }
    out
}

/// `m · v` for a column vector.
pub fn transform(m: &Mat4, v: [f32; 4]) -> [f32; 4] {
    std::array::from_fn(|r| (0..4).map(|k| m[r][k] * v[k]).sum())
}

/// Translation by (x, y, z).
pub fn translate(x: f32, y: f32, z: f32) -> Mat4 {
    let mut m = IDENTITY;
    m[0][3] = x;
    m[1][3] = y;
    m[2][3] = z;
    m
}

/// Non-uniform scale.
pub fn scale(x: f32, y: f32, z: f32) -> Mat4 {
    let mut m = IDENTITY;
    m[0][0] = x;
    m[1][1] = y;
    m[2][2] = z;
    m
}

/// Rotation by `angle` radians about the x axis (counter-clockwise looking down -x).
pub fn rotate_x(angle: f32) -> Mat4 {
    let (s, c) = angle.sin_cos();
    let mut m = IDENTITY;
    m[1][1] = c;
    m[1][2] = -s;
    m[2][1] = s;
    m[2][2] = c;
    m
}

/// Rotation by `angle` radians about the y axis.
pub fn rotate_y(angle: f32) -> Mat4 {
    let (s, c) = angle.sin_cos();
    let mut m = IDENTITY;
    m[0][0] = c;
    m[0][2] = s;
    m[2][0] = -s;
    m[2][2] = c;
    m
}

/// Rotation by `angle` radians about the z axis.
pub fn rotate_z(angle: f32) -> Mat4 {
    let (s, c) = angle.sin_cos();
    let mut m = IDENTITY;
    m[0][0] = c;
    m[0][1] = -s;
    m[1][0] = s;
    m[1][1] = c;
    m
}

/// Perspective projection for an upright screen in the PICA's depth convention: vertical field
/// of view `fovy` (radians), `aspect` = screen width / height, eye-space distances `near` and
/// `far` (> 0). `z/w` is -1 at the near plane and 0 at the far plane.
pub fn perspective(fovy: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
    let f = 1.0 / (fovy / 2.0).tan();
    // z_clip = a·z_eye + b, w = -z_eye; solve z/w = -1 at z_eye = -near and 0 at -far.
    let a = near / (near - far);
    let b = far * near / (near - far);
    [
        [f / aspect, 0.0, 0.0, 0.0],
        [0.0, f, 0.0, 0.0],
        [0.0, 0.0, a, b],
        [0.0, 0.0, -1.0, 0.0],
    ]
}

/// Orthographic projection for an upright screen: x in [left, right] and y in [bottom, top]
/// map to [-1, 1]; eye-space z = -near maps to `z/w = -1`, z = -far to 0.
pub fn ortho(left: f32, right: f32, bottom: f32, top: f32, near: f32, far: f32) -> Mat4 {
    let a = 1.0 / (near - far);
    let b = far / (near - far);
    [
        [
            2.0 / (right - left),
            0.0,
            0.0,
            (left + right) / (left - right),
        ],
        [
            0.0,
            2.0 / (top - bottom),
            0.0,
            (bottom + top) / (bottom - top),
        ],
        [0.0, 0.0, a, b],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

/// [`perspective`] rotated for a 3DS screen (see the module docs). `aspect` is the physical
/// screen's width / height (400/240 for the top screen).
pub fn perspective_tilt(fovy: f32, aspect: f32, near: f32, far: f32) -> Mat4 {
    mul(&TILT, &perspective(fovy, aspect, near, far))
}

/// [`ortho`] rotated for a 3DS screen: pass the upright screen's pixel extents, e.g.
/// `ortho_tilt(0.0, 320.0, 0.0, 240.0, 0.0, 1.0)` for the bottom screen with y up.
pub fn ortho_tilt(left: f32, right: f32, bottom: f32, top: f32, near: f32, far: f32) -> Mat4 {
    mul(&TILT, &ortho(left, right, bottom, top, near, far))
}

/// Normalises a 3-vector (returns it unchanged if its length is 0).
pub fn normalize3(v: [f32; 3]) -> [f32; 3] {
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    if len == 0.0 {
        v
    } else {
        [v[0] / len, v[1] / len, v[2] / len]
    }
}
