//! streamtrace-model: bit-exact reference of the stream-cache trace module.
pub mod event;
pub use event::{BranchClass, RetireEvent};
