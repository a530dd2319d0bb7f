//! One game of the web board: a [`Game`], who plays each side (a person at the browser or a bot
//! built from a [`PlayerSpec`]), undo, resignation, and the [`GameView`] the page draws.
//!
//! Nothing here is asynchronous or knows HTTP: the server ([`crate::server`]) locks a session and
//! calls it, on a blocking thread when a bot thinks.
//!
//! After every bot turn both bots drop what they keep to decide faster (a search tree,
//! hundreds of megabytes after 20,000 simulations on 61 rings): a kept game holds its moves, not a
//! search.
//!
//! ```
//! use zertz_arena::PlayerSpec;
//! use zertz_env::{Player, Variant};
//! use zertz_serve::session::{BotSettings, GameSession, Seats};
//! let seats = Seats::against("random".parse().unwrap(), Player::P0);
//! let settings = BotSettings::default();
//! let mut game = GameSession::new(Variant::default(), seats, 7, &settings).unwrap();
//! game.play("Wd4,a1").unwrap();
//! assert!(game.view().bot_to_move);
//! game.bot_turn().unwrap();
//! assert_eq!(game.view().moves.len(), 2);
//! game.undo().unwrap();
//! assert!(game.view().moves.is_empty());
//! ```

use zertz_arena::players::command::ProgramLimits;
use zertz_arena::players::{BotError, SpecError};
use zertz_arena::{Models, PlayerSpec};
use zertz_env::{Action, Game, Outcome, Player, Position, Variant};
use zertz_search::mcts::DEFAULT_MAX_TREE_BYTES;

pub use crate::view::{BoardView, Cell, GameView, HopChoice, Legal, Marbles};

/// Why a request on a game cannot be done. Every variant is the player's or the page's mistake
/// (a 4xx answer), except [`SessionError::Bot`] (a bot that failed).
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Text that is not a legal move or action here.
    #[error("{0}")]
    IllegalMove(String),
    /// A move asked of the side whose turn it is not.
    #[error("it is not your turn: {0} is to move")]
    NotYourTurn(String),
    /// The game has ended.
    #[error("the game is over")]
    Over,
    /// Undo with nothing to take back.
    #[error("nothing to undo")]
    NothingToUndo,
    /// The bot was asked to move on a person's turn.
    #[error("no bot plays {0}")]
    NoBot(String),
    /// A player spec that cannot be built.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// A bot that failed to choose (a network that failed, a program that died).
    #[error(transparent)]
    Bot(#[from] BotError),
}

/// Who plays each side: `None` is the person at the browser.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seats(pub [Option<PlayerSpec>; 2]);

impl Seats {
    /// A person playing `you` against the bot `bot`.
    pub fn against(bot: PlayerSpec, you: Player) -> Seats {
        let mut seats = [Some(bot.clone()), Some(bot)];
        seats[you.index()] = None;
        Seats(seats)
    }

    /// Two bots: a game to watch (`first` moves first).
    pub fn watch(first: PlayerSpec, second: PlayerSpec) -> Seats {
        Seats([Some(first), Some(second)])
    }

    /// The side the person plays, if one: the first seat without a bot.
    pub fn person(&self) -> Option<Player> {
        [Player::P0, Player::P1].into_iter().find(|p| self.0[p.index()].is_none())
    }
}

/// What a session builds its bots with.
#[derive(Clone, Debug)]
pub struct BotSettings {
    /// The evaluators of the networks its players may name.
    pub models: Models,
    /// The memory budget of each bot's search tree, in bytes.
    pub max_tree_bytes: usize,
    /// What the answers of a program (`cmd:`) are held to: time, size, a stop flag.
    pub programs: ProgramLimits,
}

impl Default for BotSettings {
    /// No networks, [`DEFAULT_MAX_TREE_BYTES`], the default limits of programs.
    fn default() -> BotSettings {
        BotSettings {
            models: Models::new(),
            max_tree_bytes: DEFAULT_MAX_TREE_BYTES,
            programs: ProgramLimits::default(),
        }
    }
}

/// A game in progress at the web board.
pub struct GameSession {
    seats: Seats,
    bots: [Option<Box<dyn zertz_arena::Bot>>; 2],
    settings: BotSettings,
    seed: u64,
    game: Game,
    /// The game at the start of every turn played so far, for undo.
    turn_starts: Vec<Game>,
    resigned: Option<Player>,
}

impl std::fmt::Debug for GameSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GameSession")
            .field("seats", &self.seats)
            .field("position", &self.game.position().to_text())
            .finish_non_exhaustive()
    }
}

impl GameSession {
    /// A new game of `variant` (P0 moves first); bots are seeded from `seed` and built with
    /// `settings` (a program's is started here).
    pub fn new(
        variant: Variant,
        seats: Seats,
        seed: u64,
        settings: &BotSettings,
    ) -> Result<GameSession, SessionError> {
        let mut s = GameSession {
            seats,
            bots: [None, None],
            settings: settings.clone(),
            seed,
            game: Game::new(variant, Player::P0),
            turn_starts: Vec::new(),
            resigned: None,
        };
        s.build_bots()?;
        Ok(s)
    }

    /// Fresh bots for both seats (after undo too: a search tree follows a game only forwards).
    /// The old ones go first, so that a program's process ends before its successor starts.
    fn build_bots(&mut self) -> Result<(), SessionError> {
        self.bots = [None, None];
        let settings = &self.settings;
        for side in 0..2 {
            self.bots[side] = match &self.seats.0[side] {
                Some(spec) => {
                    let seed = self.seed.wrapping_add(side as u64);
                    let mut bot = spec.build_with(seed, &settings.models, &settings.programs)?;
                    bot.set_max_tree_bytes(settings.max_tree_bytes);
                    Some(bot)
                }
                None => None,
            };
        }
        self.seed = self.seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        Ok(())
    }

    /// How many bots of this game are programs over the engine protocol (`cmd:`), a process
    /// each.
    pub fn programs(&self) -> usize {
        self.seats.0.iter().flatten().filter(|s| s.command().is_some()).count()
    }

    /// Whether the bot to move searches in this process (`mcts:`, `uniform:`, `nn:`,
    /// `alphabeta`): its turn takes memory and a core for a while. `random` and `greedy` answer
    /// at once, and a program thinks in its own process.
    pub fn search_to_move(&self) -> bool {
        self.bot_to_move()
            && self.seats.0[self.position().turn().index()]
                .as_ref()
                .is_some_and(PlayerSpec::searches)
    }

    /// Bytes the bots keep between turns (their search trees): none once a turn is over.
    pub fn kept_bytes(&self) -> usize {
        self.bots.iter().flatten().map(|e| e.kept_bytes()).sum()
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        self.game.position()
    }

    /// Whether the game has ended (by the rules or by resignation).
    pub fn is_over(&self) -> bool {
        self.resigned.is_some() || self.game.is_over()
    }

    /// Whether the side to move is a bot.
    pub fn bot_to_move(&self) -> bool {
        !self.is_over() && self.bots[self.position().turn().index()].is_some()
    }

    /// Plays the person's move: a whole move in notation, or a single action (one hop of a
    /// capture chain).
    pub fn play(&mut self, text: &str) -> Result<(), SessionError> {
        if self.is_over() {
            return Err(SessionError::Over);
        }
        let pos = *self.position();
        if self.bots[pos.turn().index()].is_some() {
            return Err(SessionError::NotYourTurn(pos.turn().to_string()));
        }
        let actions = match pos.parse_legal_move(text) {
            Ok(m) => pos.move_actions(&m),
            Err(whole) => match pos.parse_legal_action(text) {
                Ok(a) => vec![a],
                Err(_) => return Err(SessionError::IllegalMove(whole.to_string())),
            },
        };
        for a in actions {
            self.apply(&a)?;
        }
        Ok(())
    }

    /// The bot to move plays its whole turn (every hop of a capture chain); then both bots
    /// drop their search trees.
    pub fn bot_turn(&mut self) -> Result<(), SessionError> {
        let played = self.play_bot_turn();
        for bot in self.bots.iter_mut().flatten() {
            bot.release_memory();
        }
        played
    }

    fn play_bot_turn(&mut self) -> Result<(), SessionError> {
        if self.is_over() {
            return Err(SessionError::Over);
        }
        let mover = self.position().turn();
        while !self.is_over() && self.position().turn() == mover {
            let pos = *self.position();
            let Some(bot) = self.bots[mover.index()].as_mut() else {
                return Err(SessionError::NoBot(mover.to_string()));
            };
            let a = bot.choose(&pos)?;
            if !pos.is_legal_action(&a) {
                return Err(SessionError::IllegalMove(format!(
                    "the bot {} played the illegal action {}",
                    bot.name(),
                    pos.action_to_string(&a)
                )));
            }
            self.apply(&a)?;
        }
        Ok(())
    }

    /// Plays a legal action, tells both bots, and remembers where each turn started.
    fn apply(&mut self, a: &Action) -> Result<(), SessionError> {
        let before = *self.position();
        if before.chain().is_none() {
            self.turn_starts.push(self.game.clone());
        }
        self.game.play_action(a).map_err(|e| {
            SessionError::IllegalMove(format!("{}: {e}", before.action_to_string(a)))
        })?;
        for bot in self.bots.iter_mut().flatten() {
            bot.observe(&before, a);
        }
        Ok(())
    }

    /// Takes back the person's last turn and the bot's reply to it (or the turn in progress);
    /// in a game between two bots, the last turn. A resignation is taken back first.
    pub fn undo(&mut self) -> Result<(), SessionError> {
        if self.resigned.take().is_some() {
            return Ok(());
        }
        let person = self.seats.person();
        loop {
            let Some(start) = self.turn_starts.pop() else {
                return Err(SessionError::NothingToUndo);
            };
            let mover = start.position().turn();
            self.game = start;
            if person.is_none() || person == Some(mover) {
                break;
            }
            if self.turn_starts.is_empty() {
                // Only the bot's opening turn is left: keep it.
                break;
            }
        }
        self.build_bots()?;
        Ok(())
    }

    /// The person resigns (in a game between bots, the side to move does).
    pub fn resign(&mut self) -> Result<(), SessionError> {
        if self.is_over() {
            return Err(SessionError::Over);
        }
        self.resigned = Some(self.seats.person().unwrap_or(self.position().turn()));
        Ok(())
    }

    /// The result in words, once the game is over.
    pub fn result(&self) -> Option<String> {
        if let Some(p) = self.resigned {
            return Some(format!("{} wins: {p} resigned", !p));
        }
        match self.game.outcome()? {
            Outcome::Win(p) => Some(format!("{p} wins")),
            Outcome::Draw if self.game.is_repetition() => {
                Some("draw by third repetition".to_string())
            }
            Outcome::Draw => Some("draw".to_string()),
        }
    }

    /// What the page shows: the board, whose turn, the moves, the legal choices of a person to
    /// move.
    pub fn view(&self) -> GameView {
        let pos = self.position();
        let person = self.seats.person();
        let names = [Player::P0, Player::P1].map(|p| match &self.seats.0[p.index()] {
            Some(spec) => spec.to_string(),
            None => "you".to_string(),
        });
        let over = self.is_over();
        let status = match self.result() {
            Some(r) => r,
            None if self.bot_to_move() => {
                format!("{} to move ({} is thinking)", pos.turn(), names[pos.turn().index()])
            }
            None => format!("{} to move: your turn", pos.turn()),
        };
        let legal = if over || self.bot_to_move() { Legal::default() } else { Legal::of(pos) };
        GameView {
            board: BoardView::of(pos),
            you: person.map(|p| p.to_string()),
            players: names,
            moves: self.game.notation(),
            over,
            result: self.result(),
            status,
            bot_to_move: self.bot_to_move(),
            can_undo: !self.turn_starts.is_empty() || self.resigned.is_some(),
            legal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zertz_env::{Board, MarbleSet};

    fn session(seats: Seats) -> GameSession {
        GameSession::new(Variant::default(), seats, 1, &BotSettings::default()).unwrap()
    }

    #[test]
    fn a_game_keeps_no_search_tree_between_turns() {
        let r61 = Variant::new(Board::R61, MarbleSet::Standard);
        let seats = Seats::watch(PlayerSpec::Mcts(300), PlayerSpec::Uniform(300));
        let mut s = GameSession::new(r61, seats, 1, &BotSettings::default()).unwrap();
        for _ in 0..3 {
            assert!(s.search_to_move());
            s.bot_turn().unwrap();
            assert_eq!(s.kept_bytes(), 0);
        }
        assert_eq!(s.view().moves.len(), 3);
    }

    #[test]
    fn bots_search_within_the_tree_budget() {
        // 4 MiB hold about 150 simulations from the 61-ring start: the turn ends, not 20,000 of
        // them (400 MB).
        let r61 = Variant::new(Board::R61, MarbleSet::Standard);
        let settings = BotSettings { max_tree_bytes: 4 << 20, ..BotSettings::default() };
        let seats = Seats::against(PlayerSpec::Uniform(1 << 20), Player::P1);
        let mut s = GameSession::new(r61, seats, 1, &settings).unwrap();
        s.bot_turn().unwrap();
        assert_eq!(s.view().moves.len(), 1);
    }

    #[test]
    fn a_person_and_a_bot_take_turns_to_the_end() {
        let mut s = session(Seats::against(PlayerSpec::Random, Player::P1));
        let mut rng = zertz_env::SplitMix64(3);
        let mut turns = 0;
        while !s.is_over() {
            if s.bot_to_move() {
                s.bot_turn().unwrap();
            } else {
                let legal = s.position().legal_actions();
                let a = legal[rng.below(legal.len())];
                let text = s.position().action_to_string(&a);
                s.play(&text).unwrap();
            }
            turns += 1;
            assert!(turns < 1000);
        }
        let view = s.view();
        assert!(view.over && view.result.is_some());
        assert_eq!(view.status, view.result.clone().unwrap());
        assert!(view.legal.place.is_empty() && view.legal.hops.is_empty());
        assert!(matches!(s.play("Wd4,a1"), Err(SessionError::Over)));
    }

    #[test]
    fn moves_out_of_turn_and_illegal_moves_are_refused() {
        let mut s = session(Seats::against(PlayerSpec::Greedy, Player::P1));
        assert!(matches!(s.play("Wd4,a1"), Err(SessionError::NotYourTurn(_))));
        s.bot_turn().unwrap();
        let err = s.play("Wz9,a1").unwrap_err();
        assert!(matches!(err, SessionError::IllegalMove(_)), "{err}");
        assert!(err.to_string().contains("z9"), "{err}");
        assert!(matches!(s.bot_turn(), Err(SessionError::NoBot(_))));
    }

    #[test]
    fn undo_takes_back_the_persons_turn_and_the_reply() {
        let mut s = session(Seats::against(PlayerSpec::Random, Player::P0));
        assert!(matches!(s.undo(), Err(SessionError::NothingToUndo)));
        s.play("Wd4,a1").unwrap();
        s.bot_turn().unwrap();
        let after_two = s.position().to_text();
        s.play(&s.view().legal.hops.first().map_or_else(
            || {
                let (at, rem) = s.view().legal.place.into_iter().next().unwrap();
                let colour = s.view().legal.colours[0];
                match rem.first() {
                    Some(r) => format!("{colour}{at},{r}"),
                    None => format!("{colour}{at}"),
                }
            },
            |h| h.text.clone(),
        ))
        .unwrap();
        s.bot_turn().unwrap();
        assert_eq!(s.view().moves.len(), 4);
        s.undo().unwrap();
        assert_eq!(s.position().to_text(), after_two);
        s.undo().unwrap();
        assert!(s.view().moves.is_empty());
        assert!(!s.view().can_undo);
    }

    #[test]
    fn a_bot_that_moves_first_keeps_its_opening_turn_on_undo() {
        let mut s = session(Seats::against(PlayerSpec::Random, Player::P1));
        s.bot_turn().unwrap();
        let opening = s.position().to_text();
        s.play(&s.position().action_to_string(&s.position().legal_actions()[0])).unwrap();
        s.undo().unwrap();
        assert_eq!(s.position().to_text(), opening);
        assert_eq!(s.view().moves.len(), 1);
    }

    #[test]
    fn resigning_ends_the_game_and_undo_takes_it_back() {
        let mut s = session(Seats::against(PlayerSpec::Random, Player::P0));
        s.resign().unwrap();
        assert_eq!(s.result().unwrap(), "P1 wins: P0 resigned");
        assert!(s.view().over && s.view().can_undo);
        assert!(matches!(s.resign(), Err(SessionError::Over)));
        s.undo().unwrap();
        assert!(!s.is_over());
    }

    #[test]
    fn two_bots_play_a_game_to_watch() {
        let mut s = session(Seats::watch(PlayerSpec::Greedy, PlayerSpec::Random));
        assert_eq!(s.view().you, None);
        let mut turns = 0;
        while s.bot_to_move() {
            s.bot_turn().unwrap();
            turns += 1;
        }
        assert!(s.is_over() && turns > 3);
        assert_eq!(s.view().moves.len(), turns);
        assert!(matches!(s.play("pass"), Err(SessionError::Over)));
    }

    #[test]
    fn legal_choices_are_grouped_for_clicking() {
        let pos = Position::new(Variant::new(Board::R61, MarbleSet::Blitz), Player::P0);
        let legal = Legal::of(&pos);
        assert_eq!(legal.colours, vec!['W', 'G', 'B']);
        assert_eq!(legal.place.len(), 61);
        let total: usize = legal.place.values().map(Vec::len).sum();
        assert_eq!(total * 3, pos.legal_actions().len());
        assert!(legal.hops.is_empty() && !legal.pass);
        let view = BoardView::of(&pos);
        assert_eq!((view.board, view.blitz, view.cells.len()), (61, true, 61));
        assert_eq!(view.pool[&'W'], 5);
    }

    #[test]
    fn capture_hops_name_the_captured_marble() {
        // White on d4 and grey on d5, d6 vacant: P1 must capture d4 over d5 or d5 over d4.
        let mut g = Game::new(Variant::default(), Player::P0);
        g.play_str("Wd4,a1").unwrap();
        g.play_str("Gd5,a2").unwrap();
        let legal = Legal::of(g.position());
        assert!(!legal.hops.is_empty());
        assert!(legal.place.is_empty() && legal.colours.is_empty());
        for h in &legal.hops {
            assert!(
                ["d4", "d5"].contains(&h.from.as_str()) && ["d4", "d5"].contains(&h.over.as_str())
            );
            assert_eq!(h.text, format!("{}x{}", h.from, h.to));
        }
    }
}
