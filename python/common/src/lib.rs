//! What both native modules of the Python package share (`zertz._zertz`, the environment, and
//! `zertz_engine._engine`, the engine with exported networks): argument types, conversions,
//! the one place where an error becomes a Python exception, Ctrl-C while the GIL is released,
//! evaluators written in Python, and Rust's players one decision at a time. A library, not a
//! module: each native module links it.

pub mod args;
pub mod convert;
pub mod error;
pub mod evaluators;
pub mod opponents;
pub mod players;
pub mod signals;

pub use error::{Error, guard};
