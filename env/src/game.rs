//! A game: a start position, the moves played, and the history that third repetition needs.

use crate::moves::{Action, Move};
use crate::position::{PlayError, Position};
use crate::types::{Outcome, Player, Variant};

/// A game in progress or finished: position plus history.
///
/// [`Position`] knows every rule but repetition (decisions.md, 6), which needs the positions seen
/// before; `Game` adds it. A position that occurs for the third time ends the game in a draw.
///
/// ```
/// use zertz_env::{Game, Variant, Player};
/// let mut game = Game::new(Variant::default(), Player::P0);
/// game.play_str("Wd4,a1").unwrap();
/// assert_eq!(game.moves().len(), 1);
/// assert_eq!(game.position().turn(), Player::P1);
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    start: Position,
    position: Position,
    moves: Vec<Move>,
    /// Every position reached at the start of a turn, the current one included.
    seen: Repetitions,
    repetition: bool,
    /// Whether the last move is a capture chain still being played hop by hop.
    open_chain: bool,
}

/// Why a move could not be played in a game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The text is not a move, or the move is illegal.
    #[error(transparent)]
    Move(#[from] crate::notation::MoveError),
    /// The game is already over.
    #[error("the game is over")]
    Over,
}

impl Game {
    /// A new game from the start position.
    pub fn new(variant: Variant, first: Player) -> Game {
        Game::from_position(Position::new(variant, first))
    }

    /// A game that starts from any position.
    pub fn from_position(start: Position) -> Game {
        Game {
            start,
            position: start,
            moves: Vec::new(),
            seen: Repetitions::new(&start),
            repetition: false,
            open_chain: false,
        }
    }

    /// The position the game started from.
    pub fn start(&self) -> &Position {
        &self.start
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// Whole-turn moves played so far.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The whole-turn moves in notation, from the start position (a chain under way as far as
    /// it has gone).
    ///
    /// ```
    /// use zertz_env::{Game, Variant, Player};
    /// let mut game = Game::new(Variant::default(), Player::P0);
    /// game.play_str("wd4,A1").unwrap();
    /// assert_eq!(game.notation(), ["Wd4,a1"]);
    /// ```
    pub fn notation(&self) -> Vec<String> {
        let mut pos = self.start;
        self.moves
            .iter()
            .map(|m| {
                let s = pos.move_to_string(m);
                pos.play_unchecked(m);
                s
            })
            .collect()
    }

    /// The outcome: the position's own, or a draw by third repetition.
    pub fn outcome(&self) -> Option<Outcome> {
        if self.repetition { Some(Outcome::Draw) } else { self.position.outcome() }
    }

    /// Whether the game ended by third repetition.
    pub fn is_repetition(&self) -> bool {
        self.repetition
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.outcome().is_some()
    }

    /// Legal whole-turn moves (none once the game is over).
    pub fn legal_moves(&self) -> Vec<Move> {
        if self.repetition { Vec::new() } else { self.position.legal_moves() }
    }

    /// Plays a whole-turn move after checking it.
    pub fn play(&mut self, m: &Move) -> Result<(), PlayError> {
        if self.repetition {
            return Err(PlayError {
                position: Box::new(self.position),
                notation: self.position.move_to_string(m),
            });
        }
        self.position = self.position.play(m)?;
        self.record(*m);
        Ok(())
    }

    /// Parses a move in notation and plays it.
    pub fn play_str(&mut self, text: &str) -> Result<Move, GameError> {
        if self.is_over() {
            return Err(GameError::Over);
        }
        let m = self.position.parse_legal_move(text)?;
        self.position.play_unchecked(&m);
        self.record(m);
        Ok(m)
    }

    /// Plays a single action after checking it. When the action completes a turn (a placement, the
    /// last hop of a chain, a pass), the turn joins the move list.
    pub fn play_action(&mut self, a: &Action) -> Result<(), PlayError> {
        if self.repetition {
            return Err(PlayError {
                position: Box::new(self.position),
                notation: self.position.action_to_string(a),
            });
        }
        self.position = self.position.play_action(a)?;
        match a {
            Action::Place(p) => self.record(Move::Place(*p)),
            Action::Pass => self.record(Move::Pass),
            Action::Hop(h) => self.extend_chain(*h),
        }
        Ok(())
    }

    fn extend_chain(&mut self, h: crate::moves::Hop) {
        // A hop that starts a chain opens a new capture move; later hops extend it. A game that
        // starts in the middle of a chain opens its first move with the chain marble's next hop.
        match (self.open_chain, self.moves.last_mut()) {
            (true, Some(Move::Capture(c))) => *c = c.with(h.dir),
            _ => self.moves.push(Move::Capture(crate::moves::Chain::new(h.from).with(h.dir))),
        }
        self.open_chain = self.position.chain().is_some();
        if !self.open_chain {
            self.note_position();
        }
    }

    fn record(&mut self, m: Move) {
        // The rest of a chain begun hop by hop completes that move.
        match (self.open_chain, m, self.moves.last_mut()) {
            (true, Move::Capture(rest), Some(Move::Capture(c))) => {
                *c = rest.dirs().fold(*c, |c, d| c.with(d));
            }
            _ => self.moves.push(m),
        }
        self.open_chain = false;
        self.note_position();
    }

    fn note_position(&mut self) {
        if self.seen.note(&self.position) {
            self.repetition = true;
        }
    }
}

/// The positions of a game at the start of each turn, for the rule that [`Position`] cannot know
/// alone (decisions.md, 6): a position that occurs for the third time, at the start of a turn,
/// ends the game in a draw. [`Game`] and every episode of the environments keep one.
///
/// ```
/// use zertz_env::{Player, Position, Repetitions, Variant};
/// let start = Position::new(Variant::default(), Player::P0);
/// let mut seen = Repetitions::new(&start);
/// assert!(!seen.note(&start)); // the second time
/// assert!(seen.note(&start)); // the third: a draw
/// ```
#[derive(Clone, Debug, Default)]
pub struct Repetitions {
    /// The hash of every position noted, in order.
    hashes: Vec<u64>,
}

impl Repetitions {
    /// The history of a game that starts at `start`.
    pub fn new(start: &Position) -> Repetitions {
        Repetitions { hashes: vec![start.hash()] }
    }

    /// Forgets every position, then notes `start`: a new game's history, its memory kept.
    pub fn restart(&mut self, start: &Position) {
        self.hashes.clear();
        self.hashes.push(start.hash());
    }

    /// Notes `pos`, reached at the start of a turn, and says whether the game is now a draw by
    /// third repetition: it was seen twice before, and the rules did not end the game there.
    pub fn note(&mut self, pos: &Position) -> bool {
        let h = pos.hash();
        let seen = self.hashes.iter().filter(|&&x| x == h).count();
        self.hashes.push(h);
        seen >= 2 && !pos.is_over()
    }
}
