//! The viewer's panels. Each is a view over the session and the selection: it reads data,
//! files requests for what it needs, and pushes [`super::command::AppCommand`]s instead of
//! changing the selection itself.

pub mod commands;
pub mod compare;
pub mod cost;
pub mod edits;
pub mod image;
pub mod log;
pub mod luts;
pub mod pixel_history;
pub mod resources;
pub mod screens;
pub mod shader;
pub mod state;
pub mod tev;
pub mod timeline;
pub mod vertices;
