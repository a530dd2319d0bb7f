//! Self-play: the driver that plays many games with a batched search and writes training data,
//! its settings and the shards (`.npz`); it writes its games as `zertz_env::records`.
//!
//! - [`config`]: [`config::SelfPlayConfig`], read from TOML; every key documented and checked.
//! - [`driver`]: [`driver::run`] plays the games on worker threads and writes the output.
//! - [`shard`]: the format of the shards (the training data), [`npz`] their writer.
//!
//! The search itself is `zertz-search`; players and matches are `zertz-arena`.

pub mod config;
pub mod dataset;
pub mod driver;
pub mod npz;
pub mod shard;
