//! Helpers shared by picaview's end-to-end tests (fixtures, image comparison, scene building).

pub mod bench_scenes;
pub mod frames;
pub mod image_compare;
pub mod scene;
pub mod screen_scenes;
pub mod synthetic;
