//! The limits and defaults that more than one job takes: the vectorized
//! environment, self-play and matches read them from here.

/// The most worker threads of any job: a vectorized environment, self-play or a match (0 asks
/// for one per core).
pub const MAX_THREADS: usize = 1024;

/// Single actions after which a game is truncated, by default: the one limit of every RL front
/// end (the vectorized environment, and the Gymnasium and PettingZoo ones of the Python
/// package). A truncated episode has no result (Gymnasium's `truncated`); a match or self-play
/// game cut at its cap is scored a draw instead, a result that counts, hence its own name there
/// ([`DEFAULT_MAX_ACTIONS`]).
pub const DEFAULT_MAX_STEPS: u32 = 1000;

/// Single actions after which an unfinished game of a match or of self-play is scored a draw
/// (their `max_actions`), by default: a result that counts (in the score, the Elo, the value
/// targets), where an RL front end's `max_steps` truncates ([`DEFAULT_MAX_STEPS`]). Real games
/// end long before either: the board shrinks with every placement.
pub const DEFAULT_MAX_ACTIONS: u32 = 1000;
