//! Batched neural-guided Monte Carlo tree search for ZÈRTZ.
//!
//! - [`evaluator`]: the batched [`Evaluator`] trait (observations `[B, C, H, W]` and legal masks
//!   in, policy logits `[B, A]` and values `[B]` out), with [`UniformEvaluator`] (search cost
//!   alone) and [`RolloutEvaluator`] (classic MCTS).
//! - [`mcts`]: PUCT over single actions, values from the perspective of the player to move at each
//!   node, many trees evaluated together with virtual loss, root noise, tree reuse, an
//!   MCTS-solver, and a Gumbel root (sequential halving, completed-Q improved policies).
//! - [`config`]: every search setting, named presets, and the `[search]` table of configs.
//! - [`batching`]: inference threads that merge the requests of many search threads into large
//!   batches (a network on a GPU wants them).
//! - [`priors`]: the priors a tree expands a node with, made from an evaluator's logits on the
//!   thread that evaluated them.
//! - [`mcts::search_threads`]: one tree searched on several cores, in turns fixed in advance.
//!
//! The crates above it: `zertz-model` (networks as evaluators), `zertz-selfplay` (the self-play
//! driver, shards, game records), `zertz-arena` (players, matches, Elo).
//!
//! ```
//! use zertz_env::{Position, Variant, Player};
//! use zertz_search::{mcts::{search, Scratch, Tree}, SearchConfig, UniformEvaluator};
//! let mut trees = vec![Tree::new(Position::new(Variant::default(), Player::P0))];
//! search(&mut trees, &[200], &SearchConfig::default(), &UniformEvaluator, &mut Scratch::default())
//!     .unwrap();
//! let info = trees[0].root_info();
//! assert_eq!(info.visits.iter().map(|&(_, v)| v).sum::<u32>(), 199); // the root's own visit is one
//! ```

pub mod alphabeta;
pub mod batching;
pub mod config;
pub mod evaluator;
pub mod mcts;
pub mod priors;

pub use config::{Preset, SearchConfig, SearchSettings, SettingError};
pub use evaluator::{
    Batch, EvalError, Evaluated, Evaluator, LegalAnswers, Output, Precision, RolloutEvaluator,
    UniformEvaluator, UnknownPrecision,
};
