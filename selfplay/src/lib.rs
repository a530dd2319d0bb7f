//! Self-play: the driver that plays many games with a batched search and writes training data,
//! its settings, the shards (`.npz`) and the game records.
//!
//! - [`config`]: [`config::SelfPlayConfig`], read from TOML; every key documented and checked.
//! - [`driver`]: [`driver::run`] plays the games on worker threads and writes the output.
//! - [`shard`]: the format of the shards (the training data), [`npz`] their writer; [`records`]:
//!   game records (JSON lines, boardspace SGF).
//!
//! The search itself is `zertz-search`; players and matches are `zertz-arena`.

pub mod config;
pub mod dataset;
pub mod driver;
pub mod npz;
pub mod records;
pub mod shard;
