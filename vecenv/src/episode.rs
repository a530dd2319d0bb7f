//! One episode under the rules of every RL front end ([`Episode`]): the step, its rewards, the
//! draw by third repetition, the truncation after `max_steps` actions and the forfeit of an
//! illegal action. [`crate::VecEnv`] runs one per game of its batch; Python's `zertz.Episode`,
//! which the Gymnasium and PettingZoo environments wrap, is one.

use zertz_env::{Action, Player, Position, Repetitions};

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The player who acted.
    pub mover: Player,
    /// The rewards of P0 and of P1: ±1 to the winner and the loser of a game that ended (by the
    /// rules or by forfeit), 0 otherwise.
    pub rewards: [f32; 2],
    /// The game ended, by the rules (a win, a draw by passes or by third repetition) or by
    /// forfeit.
    pub terminated: bool,
    /// The game reached the step limit.
    pub truncated: bool,
    /// The action was not legal: its player lost the game by forfeit, and it was not played.
    pub illegal: bool,
}

/// A step asked of an episode that has ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the episode is over: reset it")]
pub struct EpisodeOver;

/// One game under the rules of an episode (the crate docs): a step is one single action of the
/// player to move; a game that ends by the rules is terminated (+1 to the winner, -1 to the
/// loser, 0 each for a draw, third repetition included); after `max_steps` actions (0: never) a
/// game that goes on is truncated; an action that is not legal forfeits the game (terminated,
/// -1 to its player, +1 to the other) and is not played.
///
/// ```
/// use zertz_env::{Action, Player, Position, Variant};
/// use zertz_vecenv::Episode;
/// let mut e = Episode::new(Position::new(Variant::default(), Player::P0), 1000);
/// let step = e.step(&Action::Pass).unwrap(); // a pass, while marbles can be placed
/// assert_eq!((step.rewards, step.terminated, step.illegal), ([-1.0, 1.0], true, true));
/// assert!(e.is_over() && e.step(&Action::Pass).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Episode {
    position: Position,
    steps: u32,
    max_steps: u32,
    /// The positions at the start of each turn, for the third repetition.
    seen: Repetitions,
    /// Whether a third repetition ended the game.
    repetition: bool,
    /// Whether an illegal action ended it.
    forfeited: bool,
    /// Whether the step limit ended it.
    truncated: bool,
}

impl Episode {
    /// An episode from `start`, truncated after `max_steps` actions (0: never).
    pub fn new(start: Position, max_steps: u32) -> Episode {
        Episode {
            position: start,
            steps: 0,
            max_steps,
            seen: Repetitions::new(&start),
            repetition: false,
            forfeited: false,
            truncated: false,
        }
    }

    /// Starts again from `start` (the same step limit), keeping the memory of the history.
    pub fn restart(&mut self, start: Position) {
        self.position = start;
        self.steps = 0;
        self.seen.restart(&start);
        self.repetition = false;
        self.forfeited = false;
        self.truncated = false;
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Actions played in this episode (opening plies not counted).
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// The step limit (0: none).
    pub fn max_steps(&self) -> u32 {
        self.max_steps
    }

    /// Whether the episode has ended: by the rules, by third repetition, by forfeit or by the
    /// step limit.
    pub fn is_over(&self) -> bool {
        self.forfeited || self.truncated || self.repetition || self.position.is_over()
    }

    /// Whether an illegal action ended it.
    pub fn forfeited(&self) -> bool {
        self.forfeited
    }

    /// Whether the step limit ended it.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Plays `action` for the player to move, under the rules of an episode.
    pub fn step(&mut self, action: &Action) -> Result<Step, EpisodeOver> {
        if self.is_over() {
            return Err(EpisodeOver);
        }
        let mover = self.position.turn();
        let mut step =
            Step { mover, rewards: [0.0; 2], terminated: false, truncated: false, illegal: false };
        if !self.position.is_legal_action(action) {
            self.forfeited = true;
            step.rewards[mover.index()] = -1.0;
            step.rewards[1 - mover.index()] = 1.0;
            (step.terminated, step.illegal) = (true, true);
            return Ok(step);
        }
        self.position.play_action_unchecked(action);
        self.steps += 1;
        if self.position.chain().is_none() && self.seen.note(&self.position) {
            self.repetition = true;
        }
        let outcome =
            self.position.outcome().or(self.repetition.then_some(zertz_env::Outcome::Draw));
        if let Some(o) = outcome {
            step.rewards = [o.score(Player::P0) as f32, o.score(Player::P1) as f32];
            step.terminated = true;
        } else if self.max_steps > 0 && self.steps >= self.max_steps {
            self.truncated = true;
            step.truncated = true;
        }
        Ok(step)
    }

    /// Plays a legal `action` before the episode begins (a random opening ply): it is not a step
    /// and ends nothing, but its position joins the history.
    pub fn play_opening(&mut self, action: &Action) {
        self.position.play_action_unchecked(action);
        if self.position.chain().is_none() {
            self.seen.note(&self.position);
        }
    }
}
