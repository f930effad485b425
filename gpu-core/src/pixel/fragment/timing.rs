//! Optional stage timing of the pixel pipeline, for `picaview bench replay` (issue 14).
//!
//! Stage: wraps the whole pixel pipeline of a draw. Input: clock reads around every triangle
//! and around one fragment in [`StageTimes::SAMPLE_EVERY`]; output: the pipeline's total time,
//! and estimates of the per-fragment work and of its texture/lighting part. Registers read: none.
//! Off by default: a pipeline without a timer reads no clock.

use std::time::{Duration, Instant};

use crate::debug::StageTimes;

/// Accumulated times of one pixel pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PixelTimer {
    /// Time inside the pipeline's triangle calls (setup, raster and fragments).
    pub total: Duration,
    /// Estimated time of the per-fragment work (textures, lighting, combiners, operations).
    pub fragment: Duration,
    /// Estimated time of the texture units and fragment lighting.
    pub texture: Duration,
    counter: u32,
}

impl PixelTimer {
    /// True for one call in [`StageTimes::SAMPLE_EVERY`]: that fragment is timed.
    #[inline]
    pub fn tick(&mut self) -> bool {
        self.counter += 1;
        if self.counter >= StageTimes::SAMPLE_EVERY {
            self.counter = 0;
            true
        } else {
            false
        }
    }

    /// Adds a sampled duration, scaled to stand for all fragments.
    #[inline]
    pub fn scaled(d: Duration) -> Duration {
        d * StageTimes::SAMPLE_EVERY
    }

    /// The draw's stage times, given the draw's total time (`geometry` = the rest).
    pub fn stage_times(&self, draw_total: Duration) -> StageTimes {
        let fragment = self.fragment.min(self.total);
        let texture = self.texture.min(fragment);
        StageTimes {
            geometry: draw_total.saturating_sub(self.total),
            raster: self.total - fragment,
            texture,
            fragment_ops: fragment - texture,
        }
    }

    /// Times `f` (a sampled fragment), adding it scaled to `fragment`.
    #[inline]
    pub fn sample<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let t = Instant::now();
        let r = f();
        self.fragment += Self::scaled(t.elapsed());
        r
    }
}
