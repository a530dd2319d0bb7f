//! One episode under the rules of every RL front end ([`Episode`]): the step, its rewards, the
//! draw by third repetition, the truncation after `max_steps` actions, the forfeit of an
//! illegal action, and the opponent's turn of a single-agent front end with what its failure
//! does. [`crate::VecEnv`] runs one per game of its batch; Python's `zertz.Episode`, which the
//! Gymnasium and PettingZoo environments wrap, is one.

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

impl Step {
    /// Whether the game ended at this step (terminated or truncated).
    pub fn ends(&self) -> bool {
        self.terminated || self.truncated
    }

    /// This step of the learner followed by the opponent's turn that answered it, whose last
    /// step is `last` (None: the opponent did not play): the mover and the illegal flag are this
    /// step's, the rewards and the end those of the last step played. What a single-agent front
    /// end reports for one action of the learner.
    pub fn then(self, last: Option<Step>) -> Step {
        match last {
            None => self,
            Some(last) => Step { mover: self.mover, illegal: self.illegal, ..last },
        }
    }
}

/// Why an episode takes no step.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StepError {
    /// The game has ended.
    #[error("the episode is over: reset it")]
    Over,
    /// An earlier step failed ([`Episode::fail`]), or the opponent's answer now (it failed to
    /// choose): the episode ended without a result.
    #[error("the episode needs a reset: {0}")]
    Failed(String),
    /// The opponent answered an action that is not legal (the episode fails as with
    /// [`StepError::Failed`]; the answer was wrong, not the opponent's running).
    #[error("{0}")]
    Illegal(String),
}

impl zertz_env::Classify for StepError {
    fn class(&self) -> zertz_env::ErrorClass {
        use zertz_env::{Cause, ErrorClass};
        match self {
            StepError::Over | StepError::Illegal(_) => ErrorClass::refused(Cause::Invalid),
            StepError::Failed(_) => ErrorClass::refused(Cause::Failed),
        }
    }
}

/// The opponent's turn of a single-agent front end ([`Episode::opponent_turn`]): the actions it
/// played and the step of the last one (None when the learner was to move).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn {
    /// The opponent's actions, in order.
    pub actions: Vec<Action>,
    /// The step of its last action.
    pub last: Option<Step>,
}

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
///
/// Against an opponent ([`Episode::opponent_turn`]), an opponent that fails or answers an
/// action that is not legal ends the episode without a result: nothing of its answer is played,
/// and every later step is refused, naming the failure, until [`Episode::restart`].
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
    /// Why the episode failed ([`Episode::fail`]).
    failed: Option<String>,
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
            failed: None,
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
        self.failed = None;
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

    /// Whether the episode has ended: by the rules, by third repetition, by forfeit, by the
    /// step limit, or by a failure ([`Episode::fail`]).
    pub fn is_over(&self) -> bool {
        self.failed.is_some()
            || self.forfeited
            || self.truncated
            || self.repetition
            || self.position.is_over()
    }

    /// Why the episode failed, if it did ([`Episode::fail`]).
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Ends the episode without a result: every later step is refused with `reason`
    /// ([`StepError::Failed`]) until [`Episode::restart`]. For what the rules of a game do not
    /// know: an opponent that failed, a step that was interrupted before its caller saw it.
    pub fn fail(&mut self, reason: impl Into<String>) {
        self.failed.get_or_insert_with(|| reason.into());
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
    pub fn step(&mut self, action: &Action) -> Result<Step, StepError> {
        if let Some(reason) = &self.failed {
            return Err(StepError::Failed(reason.clone()));
        }
        if self.is_over() {
            return Err(StepError::Over);
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

    /// Whether the opponent of `learner` is to move: the episode goes on and the other side has
    /// the turn.
    pub fn opponent_to_move(&self, learner: Player) -> bool {
        !self.is_over() && self.position.turn() != learner
    }

    /// Plays the opponent's `answer` (what it chose for the current position, where it is to
    /// move, or why it could not choose). An answer that is an error ([`StepError::Failed`]) or
    /// an action that is not legal here ([`StepError::Illegal`]) is not played: the episode
    /// fails ([`Episode::fail`]) and the error says why.
    /// The one judge of an opponent's answers, for [`Episode::opponent_turn`] and for the
    /// batches that ask their opponent for many games at once.
    pub fn opponent_answer(&mut self, answer: crate::Answer) -> Result<Step, StepError> {
        match answer {
            Ok(action) if self.is_over() || self.position.is_legal_action(&action) => {
                self.step(&action)
            }
            Ok(action) => {
                let index = self.position.action_space().index(&action);
                let text = self.position.action_to_string(&action);
                let reason = format!(
                    "the opponent answered action {index} ({text}), which is not legal here"
                );
                self.fail(reason.clone());
                Err(StepError::Illegal(reason))
            }
            Err(message) => {
                let reason = format!("the opponent failed: {message}");
                self.fail(reason.clone());
                Err(StepError::Failed(reason))
            }
        }
    }

    /// Plays the opponent's turn: asks `opponent` for an action while the side that is not
    /// `learner`'s is to move and the episode goes on (a capture chain is several actions),
    /// giving it the position and the actions it played so far in this turn, and plays each
    /// answer ([`Episode::opponent_answer`]: a failure or an illegal answer fails the
    /// episode).
    ///
    /// ```
    /// use zertz_env::{Player, Position, Variant};
    /// use zertz_vecenv::{Episode, StepError};
    /// let mut e = Episode::new(Position::new(Variant::default(), Player::P1), 1000);
    /// let turn = e.opponent_turn(Player::P0, &mut |pos, _| Ok(pos.nth_legal_action(0).unwrap()));
    /// assert_eq!((turn.unwrap().actions.len(), e.position().turn()), (1, Player::P0));
    /// e.restart(Position::new(Variant::default(), Player::P1));
    /// let failed = e.opponent_turn(Player::P0, &mut |_, _| Err("went away".into()));
    /// let reason = "the opponent failed: went away".to_string();
    /// assert_eq!(failed, Err(StepError::Failed(reason.clone())));
    /// assert_eq!(e.step(&e.position().nth_legal_action(0).unwrap()), Err(StepError::Failed(reason)));
    /// ```
    pub fn opponent_turn(
        &mut self,
        learner: Player,
        opponent: &mut dyn FnMut(&Position, &[Action]) -> crate::Answer,
    ) -> Result<Turn, StepError> {
        let mut turn = Turn::default();
        while self.opponent_to_move(learner) {
            let answer = opponent(&self.position, &turn.actions);
            let action = answer.as_ref().ok().copied();
            turn.last = Some(self.opponent_answer(answer)?);
            turn.actions.extend(action);
        }
        Ok(turn)
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
