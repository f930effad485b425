//! Lookup tables of the fixed-function pixel stages: fragment lighting, fog and procedural
//! texture (`pica-raster.md` §7, §8, §9.4).
//!
//! Input: words written to the LUT data ports (0x1C8-0x1CF lighting, 0x0E8-0x0EF fog,
//! 0x0B0-0x0B7 proctex), stored by the command processor ([`crate::command`]). Output: the raw
//! table words, read once per draw by the fixed-function stages ([`crate::pixel::stages`]).
//! Registers read: none (the index registers 0x1C5, 0x0E6 and 0x0AF are the command
//! processor's). A leaf module, so the pixel pipeline does not depend on the command processor.

/// Lookup tables filled through the LUT data ports.
#[derive(Clone, Debug)]
pub struct LookupTables {
    /// Fragment lighting LUTs: 24 tables × 256 entries (bits 0-23 of each written word).
    pub lighting: Box<[[u32; 256]; 24]>,
    /// Fog LUT: 128 entries.
    pub fog: [u32; 128],
    /// Procedural texture noise table (128 entries).
    pub proctex_noise: [u32; 128],
    /// Procedural texture RGB map (128 entries).
    pub proctex_rgb_map: [u32; 128],
    /// Procedural texture alpha map (128 entries).
    pub proctex_alpha_map: [u32; 128],
    /// Procedural texture colour table (256 entries, RGBA8).
    pub proctex_color: [u32; 256],
    /// Procedural texture colour difference table (256 entries).
    pub proctex_color_diff: [u32; 256],
}

impl Default for LookupTables {
    fn default() -> Self {
        Self {
            lighting: Box::new([[0; 256]; 24]),
            fog: [0; 128],
            proctex_noise: [0; 128],
            proctex_rgb_map: [0; 128],
            proctex_alpha_map: [0; 128],
            proctex_color: [0; 256],
            proctex_color_diff: [0; 256],
        }
    }
}
