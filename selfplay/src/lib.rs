//! Batched neural-guided Monte Carlo tree search for ZÈRTZ, its evaluators and baseline players.
//!
//! - [`evaluator`]: the batched [`Evaluator`] trait (observations `[B, C, H, W]` and legal masks
//!   in, policy logits `[B, A]` and values `[B]` out), with [`UniformEvaluator`] (search cost
//!   alone) and [`RolloutEvaluator`] (classic MCTS).
//! - [`mcts`]: PUCT over single actions, values from the perspective of the player to move at each
//!   node, many trees evaluated together with virtual loss, root noise, tree reuse.
//! - [`files`]: files named by users must be regular files (a FIFO would block).
//!
//! ```
//! use zertz_env::{Position, Variant, Player};
//! use zertz_selfplay::{mcts::{search, SearchConfig, Scratch, Tree}, UniformEvaluator};
//! let mut trees = vec![Tree::new(Position::new(Variant::default(), Player::P0))];
//! search(&mut trees, &[200], &SearchConfig::default(), &UniformEvaluator, &mut Scratch::default())
//!     .unwrap();
//! let info = trees[0].root_info();
//! assert_eq!(info.visits.iter().map(|&(_, v)| v).sum::<u32>(), 199); // the root's own visit is one
//! ```

pub mod arena;
pub mod batching;
pub mod config;
pub mod driver;
pub mod evaluator;
pub mod files;
pub mod mcts;
pub mod npz;
pub mod players;
pub mod records;

pub use evaluator::{Batch, EvalError, Evaluator, Output, RolloutEvaluator, UniformEvaluator};
pub use players::{
    GreedyPlayer, MctsPlayer, Models, Player, PlayerSpec, RandomPlayer, parse_player,
};
