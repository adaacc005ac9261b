//! Golden-vector generator and checker (docs/vectors-format.md).

pub mod codec;
pub mod program;
pub mod render;
pub mod scenarios;
pub mod verify;
