//! boardspace.net game records (SGF `GM[22]`, variants `Zertz`, `Zertz+11`, `Zertz+24`).
//!
//! Why one file of this size: the reader of one dialect, whose corner cases
//! (`shared/games/README.md`) are best read in one place; a seventh of the lines are its tests.
//!
//! The dialect (see `shared/games/README.md`): every action is a node `; P0[...]` or `; P1[...]`,
//! an optional action number first:
//!
//! | action | meaning |
//! |---|---|
//! | `Start P0` | who starts |
//! | `RtoB R C col row` | a marble of colour `C` (0 white, 1 grey, 2 black) from rack `R` (2 = pool, 0/1 = a player's captures) onto a ring |
//! | `R- col row` | remove a ring |
//! | `BtoB col row col row` | one hop of a capture (the same ring twice: picked up and put back, ignored) |
//! | `BtoR`, `R+`, `RtoR` | take-backs inside a turn: a placed marble back to a rack, a removed ring back, a marble from rack to rack |
//! | `Reset` | takes back every action of the current turn so far |
//! | `Done` | end of the turn; old records have none, and a turn ends when the other player acts |
//! | `Resign`, `WinOnTime` | end of the game: `Resign` loses, `WinOnTime` wins for its claimant |
//!
//! [`Record::parse`] reads the file; [`Record::replay`] plays it through the rules and reports
//! the first turn that breaks the rules. A replay reads what real records do
//! (`shared/games/README.md`):
//! - the player who makes the first move starts, whoever `Start` names (old records differ);
//! - a complete move made in the same turn before `Resign` counts, an incomplete one does not;
//! - nothing after the first `Resign` or `WinOnTime` is part of the game;
//! - boardspace.net did not apply the third-repetition draw: a record that goes on after a position
//!   occurs for the third time ends there as a draw, and the rest is ignored.
//!
//! ```
//! use zertz_env::sgf::{Record, End};
//! let text = "(;GM[22]SU[Zertz]\n; P0[0 Start P0]\n; P0[1 RtoB 2 1 D 3]\n; P0[2 R- F 5]\n; P0[3 Done]\n)";
//! let replay = Record::parse(text).unwrap().replay().unwrap();
//! assert_eq!(replay.notation(), ["Gd3,f5"]);
//! assert_eq!(replay.legal_counts, [1944]);
//! assert_eq!(replay.end, End::Unfinished);
//! ```

use std::fmt;

use crate::board::{Board, Direction, Geometry, Ring};
use crate::game::Game;
use crate::moves::{Chain, Move, Placement};
use crate::types::{Marble, MarbleSet, Outcome, Player, Variant};

/// A property of an SGF node: its identifier and values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    /// Identifier, such as `SU` or `P0`.
    pub ident: String,
    /// Values between brackets, unescaped.
    pub values: Vec<String>,
}

/// Why a file is not a readable boardspace ZÈRTZ record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SgfError {
    /// The SGF syntax is broken.
    #[error("SGF syntax: {0}")]
    Syntax(String),
    /// Not a ZÈRTZ record (`GM[22]`) or an unknown variant.
    #[error("not a ZÈRTZ record: {0}")]
    Game(String),
    /// An action that cannot be read.
    #[error("action {index}: cannot read {text:?}")]
    Action {
        /// Index of the node in the file (the root is 0).
        index: usize,
        /// The action text.
        text: String,
    },
}

impl SgfError {
    /// A short reason, for counts by reason: `broken SGF syntax`, `not a ZÈRTZ record`, or
    /// `unreadable action "WORD"` (the action's first word after its number).
    pub fn reason(&self) -> String {
        match self {
            SgfError::Syntax(_) => "broken SGF syntax".into(),
            SgfError::Game(_) => "not a ZÈRTZ record".into(),
            SgfError::Action { text, .. } => {
                let word = text.split_whitespace().find(|w| !w.bytes().all(|b| b.is_ascii_digit()));
                format!("unreadable action {:?}", word.unwrap_or(""))
            }
        }
    }
}

/// A record that breaks the rules, with the turn (from 1) where it does.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("turn {turn}: {reason}")]
pub struct ReplayError {
    /// The turn (1 = the first turn of the game).
    pub turn: usize,
    /// What kind of fault (for counts by reason).
    pub kind: Fault,
    /// What is wrong, in full.
    pub reason: String,
}

/// The kinds of [`ReplayError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Fault {
    /// A move the rules forbid.
    IllegalMove,
    /// A player acts out of turn (a second placement or removal in one turn, say).
    OutOfTurn,
    /// An action after a win by capture.
    AfterTheEnd,
    /// A ring the board does not have.
    NoSuchRing,
    /// `Start` after a move.
    LateStart,
    /// An action labelled with no player.
    NoPlayer,
    /// A capture hop and a placement in one turn, or a hop that is not a jump of the chain.
    BadCapture,
    /// A marble from the wrong rack (the empty pool, or the captures while the pool has some).
    WrongRack,
    /// A ring removed without a marble placed.
    RemovalAlone,
}

impl Fault {
    /// A short name, for counts by reason.
    pub const fn name(self) -> &'static str {
        match self {
            Fault::IllegalMove => "illegal move",
            Fault::OutOfTurn => "a player acts out of turn",
            Fault::AfterTheEnd => "an action after a win by capture",
            Fault::NoSuchRing => "a ring the board does not have",
            Fault::LateStart => "Start after the first move",
            Fault::NoPlayer => "an action without a player",
            Fault::BadCapture => "a broken capture",
            Fault::WrongRack => "a marble from the wrong rack",
            Fault::RemovalAlone => "a ring removed without a marble placed",
        }
    }
}

/// One action of a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordAction {
    /// Who starts.
    Start(Player),
    /// A marble from a rack (2 = pool, 0/1 = captures) onto a ring `(column, row)`.
    Place {
        /// The rack.
        rack: u8,
        /// The colour.
        marble: Marble,
        /// Column index (0 = A) and row (from 1).
        at: (u8, u8),
    },
    /// A ring removed.
    Remove((u8, u8)),
    /// A hop of a capture, from one ring to another.
    Hop((u8, u8), (u8, u8)),
    /// A placed marble taken back to a rack.
    TakeBackMarble,
    /// A removed ring put back.
    TakeBackRing,
    /// A marble moved from rack to rack (no effect on the game).
    RackToRack,
    /// Every action of the current turn so far taken back.
    Reset,
    /// End of the turn.
    Done,
    /// The player resigns.
    Resign,
    /// The player wins on time.
    WinOnTime,
}

/// A parsed record: the variant, the root properties and the actions by player label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Board shape and marble set.
    pub variant: Variant,
    /// Properties of the root node (`GN`, `SU`, `RE`, `P0`, `P1`, …).
    pub root: Vec<Property>,
    /// Actions with the label of the player who made them (`None` for `P-1`).
    pub actions: Vec<(Option<Player>, RecordAction)>,
}

/// How a replayed game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// The rules ended it: a win set captured or the board emptied.
    Capture,
    /// A player resigned.
    Resign,
    /// A player won on time.
    Time,
    /// A draw by the rules (two passes, third repetition).
    Draw,
    /// The record stops before the end.
    Unfinished,
}

impl End {
    /// The ends of a finished game: every end but [`End::Unfinished`] (those a dataset keeps).
    pub const FINISHED: [End; 4] = [End::Capture, End::Resign, End::Time, End::Draw];

    /// `capture`, `resign`, `time`, `draw` or `unfinished`.
    pub const fn name(self) -> &'static str {
        match self {
            End::Capture => "capture",
            End::Resign => "resign",
            End::Time => "time",
            End::Draw => "draw",
            End::Unfinished => "unfinished",
        }
    }
}

impl End {
    /// The end of a name ([`End::name`]), any case.
    pub fn from_name(name: &str) -> Option<End> {
        [End::Capture, End::Resign, End::Time, End::Draw, End::Unfinished]
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The result of replaying a record.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The game as played: start position, moves, final position.
    pub game: Game,
    /// Number of legal whole-turn moves before each turn.
    pub legal_counts: Vec<u64>,
    /// How the game ended.
    pub end: End,
    /// The winner, by the record's P0/P1 labels.
    pub winner: Option<Player>,
}

impl Replay {
    /// The moves in notation.
    pub fn notation(&self) -> Vec<String> {
        self.game.notation()
    }
}

// ------------------------------------------------------------------------------- SGF syntax

/// Parses SGF text into its nodes (the main line; variations are refused).
pub fn parse_nodes(text: &str) -> Result<Vec<Vec<Property>>, SgfError> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut nodes: Vec<Vec<Property>> = Vec::new();
    let mut depth = 0i32;
    let mut opened = false;
    while i < b.len() {
        match b[i] {
            b'(' => {
                if opened && depth == 0 {
                    break; // a second game tree in the same file: read only the first
                }
                depth += 1;
                opened = true;
                if depth > 1 {
                    return Err(SgfError::Syntax("variations are not supported".into()));
                }
                i += 1;
            }
            b')' => {
                depth -= 1;
                if depth < 0 {
                    return Err(SgfError::Syntax("unbalanced ')'".into()));
                }
                i += 1;
            }
            b';' => {
                if depth != 1 {
                    return Err(SgfError::Syntax("node outside a game tree".into()));
                }
                nodes.push(Vec::new());
                i += 1;
            }
            c if c.is_ascii_whitespace() => i += 1,
            c if c.is_ascii_alphanumeric() || c == b'-' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'-') {
                    i += 1;
                }
                let ident = &text[start..i];
                let mut values = Vec::new();
                loop {
                    while i < b.len() && b[i].is_ascii_whitespace() {
                        i += 1;
                    }
                    if i >= b.len() || b[i] != b'[' {
                        break;
                    }
                    i += 1;
                    let mut v = Vec::new();
                    loop {
                        match b.get(i) {
                            None => {
                                return Err(SgfError::Syntax(format!("unclosed value of {ident}")));
                            }
                            Some(b']') => {
                                i += 1;
                                break;
                            }
                            Some(b'\\') => {
                                if let Some(&c) = b.get(i + 1) {
                                    v.push(c);
                                }
                                i += 2;
                            }
                            Some(&c) => {
                                v.push(c);
                                i += 1;
                            }
                        }
                    }
                    values.push(String::from_utf8_lossy(&v).into_owned());
                }
                if values.is_empty() {
                    return Err(SgfError::Syntax(format!("property {ident} has no value")));
                }
                match nodes.last_mut() {
                    Some(node) if depth == 1 => {
                        node.push(Property { ident: ident.to_string(), values })
                    }
                    _ => return Err(SgfError::Syntax("property outside a node".into())),
                }
            }
            c => {
                return Err(SgfError::Syntax(format!(
                    "unexpected character {:?} at byte {i}",
                    c as char
                )));
            }
        }
    }
    if !opened {
        return Err(SgfError::Syntax("no game tree".into()));
    }
    if depth != 0 {
        return Err(SgfError::Syntax("unclosed game tree".into()));
    }
    Ok(nodes)
}

fn cell(col: &str, row: &str) -> Option<(u8, u8)> {
    let c = col.as_bytes();
    if c.len() != 1 || !c[0].is_ascii_alphabetic() {
        return None;
    }
    let row: u8 = row.parse().ok()?;
    Some((c[0].to_ascii_uppercase() - b'A', row))
}

fn parse_action(text: &str) -> Option<RecordAction> {
    let mut words: Vec<&str> = text.split_whitespace().collect();
    if words.first().is_some_and(|w| w.bytes().all(|c| c.is_ascii_digit())) {
        words.remove(0);
    }
    let (&cmd, args) = words.split_first()?;
    let cmd = cmd.to_ascii_lowercase();
    let num = |s: &str| s.parse::<u8>().ok();
    Some(match (cmd.as_str(), args) {
        ("start", [p]) => Start(match p.to_ascii_uppercase().as_str() {
            "P0" => Player::P0,
            "P1" => Player::P1,
            _ => return None,
        }),
        ("rtob", [rack, colour, col, row]) => {
            let rack = num(rack).filter(|&r| r <= 2)?;
            let marble = Marble::from_index(num(colour)? as usize)?;
            Place { rack, marble, at: cell(col, row)? }
        }
        ("r-", [col, row]) => Remove(cell(col, row)?),
        ("btob", [c1, r1, c2, r2]) => Hop(cell(c1, r1)?, cell(c2, r2)?),
        ("btor", _) => TakeBackMarble,
        ("r+", _) => TakeBackRing,
        ("rtor", _) => RackToRack,
        ("reset", []) => Reset,
        ("done", []) => Done,
        ("resign", []) => Resign,
        ("winontime", _) => WinOnTime,
        _ => return None,
    })
}

use RecordAction::*;

impl Record {
    /// Parses a boardspace ZÈRTZ record.
    pub fn parse(text: &str) -> Result<Record, SgfError> {
        let nodes = parse_nodes(text)?;
        let mut nodes = nodes.into_iter();
        let root = nodes.next().ok_or_else(|| SgfError::Syntax("empty game tree".into()))?;
        let get = |id: &str| root.iter().find(|p| p.ident == id).map(|p| p.values[0].trim());
        match get("GM") {
            Some("22") => {}
            other => return Err(SgfError::Game(format!("GM[{}] is not 22", other.unwrap_or("")))),
        }
        let su = get("SU").unwrap_or("Zertz");
        let board = match su.to_ascii_lowercase().as_str() {
            "zertz" => Board::R37,
            "zertz+11" => Board::R48,
            "zertz+24" => Board::R61,
            _ => return Err(SgfError::Game(format!("unknown variant SU[{su}]"))),
        };
        let variant = Variant::new(board, MarbleSet::Standard);
        let mut actions = Vec::new();
        for (k, node) in nodes.enumerate() {
            for prop in node {
                let player = match prop.ident.as_str() {
                    "P0" => Some(Player::P0),
                    "P1" => Some(Player::P1),
                    "P-1" => None,
                    _ => continue, // TM[...] and other annotations
                };
                let text = &prop.values[0];
                let first = text.split_whitespace().next().unwrap_or("");
                if ["time", "id", "ranking"].iter().any(|w| first.eq_ignore_ascii_case(w)) {
                    continue; // player annotations, not actions
                }
                let action = parse_action(text)
                    .ok_or_else(|| SgfError::Action { index: k + 1, text: text.clone() })?;
                actions.push((player, action));
            }
        }
        Ok(Record { variant, root, actions })
    }

    /// Plays the record through the rules, counting the legal moves before each turn.
    pub fn replay(&self) -> Result<Replay, ReplayError> {
        Replayer::new(self, true).run()
    }

    /// [`Record::replay`] without counting the legal moves (`legal_counts` stays empty): about
    /// twice as fast, for imports that need the game alone.
    pub fn replay_moves(&self) -> Result<Replay, ReplayError> {
        Replayer::new(self, false).run()
    }
}

// ------------------------------------------------------------------------------- turn assembly

#[derive(Default)]
struct TurnBuilder {
    player: Option<Player>,
    place: Option<(u8, Marble, (u8, u8))>,
    remove: Option<(u8, u8)>,
    hops: Vec<((u8, u8), (u8, u8))>,
}

impl TurnBuilder {
    fn is_empty(&self) -> bool {
        self.place.is_none() && self.remove.is_none() && self.hops.is_empty()
    }
}

struct Replayer<'a> {
    record: &'a Record,
    game: Option<Game>,
    first: Option<Player>,
    legal_counts: Vec<u64>,
    turn: TurnBuilder,
    end: End,
    winner: Option<Player>,
    count: bool,
}

impl<'a> Replayer<'a> {
    fn new(record: &'a Record, count: bool) -> Replayer<'a> {
        Replayer {
            record,
            count,
            game: None,
            first: None,
            legal_counts: Vec::new(),
            turn: TurnBuilder::default(),
            end: End::Unfinished,
            winner: None,
        }
    }

    fn err(&self, kind: Fault, reason: impl Into<String>) -> ReplayError {
        let turn = self.game.as_ref().map_or(0, |g| g.moves().len()) + 1;
        ReplayError { turn, kind, reason: reason.into() }
    }

    /// The game, started (if it is not yet) by `first`.
    fn game(&mut self, first: Player) -> &mut Game {
        self.game.get_or_insert_with(|| Game::new(self.record.variant, first))
    }

    fn geo(&self) -> &'static Geometry {
        self.record.variant.board.geometry()
    }

    fn ring(&self, c: (u8, u8)) -> Result<Ring, ReplayError> {
        self.geo().ring(c.0 as usize, c.1 as usize).ok_or_else(|| {
            self.err(
                Fault::NoSuchRing,
                format!("no ring {}{} on this board", (b'a' + c.0) as char, c.1),
            )
        })
    }

    fn run(mut self) -> Result<Replay, ReplayError> {
        for &(label, action) in &self.record.actions {
            match self.end {
                End::Unfinished => {}
                // Nothing after a resignation, a win on time or a draw by the rules counts.
                End::Resign | End::Time | End::Draw => break,
                End::Capture => match action {
                    Done | Resign | WinOnTime => continue,
                    _ => {
                        return Err(
                            self.err(Fault::AfterTheEnd, "an action after the end of the game")
                        );
                    }
                },
            }
            match (label, action) {
                (_, Start(p)) => {
                    if self.game.is_some() {
                        return Err(self.err(Fault::LateStart, "Start after the first move"));
                    }
                    self.first = Some(p);
                }
                (None, _) => return Err(self.err(Fault::NoPlayer, "an action without a player")),
                (Some(p), Reset) => {
                    if self.turn.player.is_some_and(|q| q != p) {
                        // The other player's turn was over (an old record without `Done`).
                        self.finish()?;
                    } else {
                        self.turn = TurnBuilder::default();
                    }
                }
                (Some(p), Done) => {
                    if self.turn.player.is_some_and(|q| q != p) {
                        self.finish()?;
                    }
                    self.finish()?;
                }
                (Some(p), Resign | WinOnTime) => {
                    // A turn left half-done when the game ends (a marble placed, no ring removed)
                    // was never completed: it is dropped.
                    let pending = std::mem::take(&mut self.turn);
                    let saved = (self.game.clone(), self.legal_counts.len(), self.end, self.winner);
                    self.turn = pending;
                    if self.finish().is_err() {
                        (self.game, _, self.end, self.winner) = saved.clone();
                        self.legal_counts.truncate(saved.1);
                    }
                    let first = self.first.unwrap_or(p);
                    self.game(first);
                    if self.end != End::Unfinished {
                        continue;
                    }
                    let (end, winner) =
                        if action == Resign { (End::Resign, !p) } else { (End::Time, p) };
                    self.end = end;
                    self.winner = Some(winner);
                }
                (Some(p), a) => self.act(p, a)?,
            }
        }
        if self.end == End::Unfinished {
            self.finish()?;
        }
        let game = match self.game {
            Some(g) => g,
            None => Game::new(self.record.variant, self.first.unwrap_or(Player::P0)),
        };
        Ok(Replay { game, legal_counts: self.legal_counts, end: self.end, winner: self.winner })
    }

    /// Adds an action of player `p` to the turn being built, closing the previous turn where the
    /// action cannot belong to it (old records have no `Done`).
    fn act(&mut self, p: Player, a: RecordAction) -> Result<(), ReplayError> {
        let other_player = self.turn.player.is_some_and(|q| q != p);
        // The marble just placed, picked up and put down elsewhere in the same turn.
        let moved = match a {
            Hop(from, _) => !other_player && self.turn.place.is_some_and(|(_, _, at)| at == from),
            _ => false,
        };
        // A hop back over the last one takes it back.
        let hop_back = match a {
            Hop(from, to) => !other_player && self.turn.hops.last() == Some(&(to, from)),
            _ => false,
        };
        let new_turn = other_player
            || !moved
                && !hop_back
                && match a {
                    Place { .. } => self.turn.place.is_some() || !self.turn.hops.is_empty(),
                    Remove(_) => self.turn.remove.is_some() || !self.turn.hops.is_empty(),
                    Hop(from, to) => {
                        from != to
                            && (self.turn.place.is_some()
                                || self.turn.hops.last().is_some_and(|&(_, last)| last != from))
                    }
                    _ => false,
                };
        if new_turn {
            self.finish()?;
            match self.end {
                End::Unfinished => {}
                // The record goes on after a third repetition: ignored (see `run`).
                End::Draw => return Ok(()),
                _ => {
                    return Err(self.err(Fault::AfterTheEnd, "an action after the end of the game"));
                }
            }
        }
        self.turn.player = Some(p);
        match a {
            Place { rack, marble, at } => self.turn.place = Some((rack, marble, at)),
            Remove(c) => self.turn.remove = Some(c),
            Hop(from, to) if from == to => {}
            Hop(..) if hop_back => {
                self.turn.hops.pop();
            }
            Hop(_, to) if moved => {
                if let Some(place) = &mut self.turn.place {
                    place.2 = to;
                }
            }
            Hop(from, to) => self.turn.hops.push((from, to)),
            TakeBackMarble => self.turn.place = None,
            TakeBackRing => self.turn.remove = None,
            _ => {}
        }
        Ok(())
    }

    /// Turns the actions gathered so far into a move and plays it.
    fn finish(&mut self) -> Result<(), ReplayError> {
        let Some(p) = self.turn.player else {
            return Ok(());
        };
        if self.end != End::Unfinished {
            return Err(self.err(Fault::AfterTheEnd, "a move after the end of the game"));
        }
        let turn = std::mem::take(&mut self.turn);
        if turn.is_empty() {
            return Ok(());
        }
        // The player who makes the first move starts, whoever `Start` names.
        // A player with nothing to do passes without a record of it.
        let pos = *self.game(p).position();
        if pos.turn() != p && pos.legal_moves() == [Move::Pass] {
            self.play(Move::Pass)?;
        }
        let pos = *self.game(p).position();
        if pos.is_over() {
            return Err(self.err(Fault::AfterTheEnd, "a move after the end of the game"));
        }
        if pos.turn() != p {
            return Err(
                self.err(Fault::OutOfTurn, format!("{p} moved but it is {}'s turn", pos.turn()))
            );
        }
        let m = if !turn.hops.is_empty() {
            if turn.place.is_some() || turn.remove.is_some() {
                return Err(
                    self.err(Fault::BadCapture, "a capture and a placement in the same turn")
                );
            }
            let mut chain = Chain::new(self.ring(turn.hops[0].0)?);
            let mut at = chain.from();
            for &(from, to) in &turn.hops {
                let (from, to) = (self.ring(from)?, self.ring(to)?);
                if from != at {
                    return Err(self
                        .err(Fault::BadCapture, "a hop that does not continue the capture chain"));
                }
                let d = Direction::ALL
                    .into_iter()
                    .find(|&d| {
                        self.geo().neighbour(from, d).and_then(|o| self.geo().neighbour(o, d))
                            == Some(to)
                    })
                    .ok_or_else(|| self.err(Fault::BadCapture, "a hop that is not a jump"))?;
                if chain.len() >= crate::moves::MAX_CHAIN {
                    return Err(self.err(Fault::BadCapture, "a capture chain that is too long"));
                }
                chain = chain.with(d);
                at = to;
            }
            Move::Capture(chain)
        } else if let Some((rack, marble, at)) = turn.place {
            let pool_empty = pos.pool().0 == [0, 0, 0];
            if rack == 2 && pool_empty {
                return Err(self.err(Fault::WrongRack, "a marble from the empty pool"));
            }
            if rack != 2 && !pool_empty {
                return Err(self.err(
                    Fault::WrongRack,
                    "a marble from the captures while the pool is not empty",
                ));
            }
            let at = self.ring(at)?;
            let remove = turn.remove.map(|r| self.ring(r)).transpose()?;
            Move::Place(Placement { marble, at, remove })
        } else {
            return Err(self.err(Fault::RemovalAlone, "a ring removed without a marble placed"));
        };
        self.play(m)
    }

    fn play(&mut self, m: Move) -> Result<(), ReplayError> {
        let game = self.game.as_mut().expect("game started");
        let pos = *game.position();
        let count = if self.count { pos.count_legal_moves() } else { 0 };
        if game.play(&m).is_err() {
            let mut why = format!("illegal move {}", pos.move_to_string(&m));
            if pos.has_capture() && !matches!(m, Move::Capture(_)) {
                why.push_str(" (a capture is compulsory)");
            }
            return Err(self.err(Fault::IllegalMove, why));
        }
        if self.count {
            self.legal_counts.push(count);
        }
        if let Some(outcome) = game.outcome() {
            self.end = if outcome == Outcome::Draw { End::Draw } else { End::Capture };
            self.winner = outcome.winner();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_errors_are_reported() {
        assert!(matches!(Record::parse(""), Err(SgfError::Syntax(_))));
        assert!(matches!(Record::parse("(;GM[22]"), Err(SgfError::Syntax(_))));
        assert!(matches!(Record::parse("(;GM[1])"), Err(SgfError::Game(_))));
        assert!(matches!(Record::parse("(;GM[22]SU[Chess])"), Err(SgfError::Game(_))));
        assert!(matches!(
            Record::parse("(;GM[22];P0[1 Fly D 3])"),
            Err(SgfError::Action { index: 1, .. })
        ));
        assert!(matches!(Record::parse("(;GM[22](;P0[Done]))"), Err(SgfError::Syntax(_))));
    }

    #[test]
    fn illegal_turns_name_the_turn() {
        let text = "(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[R- A 1];P1[RtoB 2 0 D 4];P1[R- A 2])";
        let err = Record::parse(text).unwrap().replay().unwrap_err();
        assert_eq!(err.turn, 2);
        assert!(err.reason.contains("illegal move Wd4,a2"), "{err}");
    }

    #[test]
    fn take_backs_and_old_records_without_done() {
        let text = "(;GM[22]SU[Zertz];P0[RtoB 2 0 D 4];P0[BtoR 2 0 D 4];P0[RtoB 2 1 D 5];\
                    P0[R- A 1];P0[R+ A 1];P0[R- G 1];P1[RtoR 2 0 2];P1[RtoB 2 2 A 1];P1[R- G 2])";
        let replay = Record::parse(text).unwrap().replay().unwrap();
        assert_eq!(replay.notation(), ["Gd5,g1", "Ba1,g2"]);
        assert_eq!(replay.legal_counts.len(), 2);
        assert_eq!(replay.legal_counts[0], 1944);
    }

    #[test]
    fn resign_gives_the_other_player_the_win() {
        let text =
            "(;GM[22]SU[Zertz+11];P0[Start P1];P1[RtoB 2 0 D 4];P1[R- A 1];P1[Done];P0[Resign])";
        let replay = Record::parse(text).unwrap().replay().unwrap();
        assert_eq!(replay.end, End::Resign);
        assert_eq!(replay.winner, Some(Player::P1));
        assert_eq!(replay.game.start().board(), Board::R48);
    }

    fn replay(actions: &str) -> Result<Replay, ReplayError> {
        Record::parse(&format!("(;GM[22]SU[Zertz]{actions})")).unwrap().replay()
    }

    #[test]
    fn the_player_who_moves_first_starts_whoever_start_names() {
        let r = replay(";P0[Start P1];P0[RtoB 2 0 D 4];P0[R- A 1];P1[RtoB 2 1 D 5];P1[R- A 2]")
            .unwrap();
        assert_eq!(r.game.start().turn(), Player::P0);
        assert_eq!(r.notation(), ["Wd4,a1", "Gd5,a2"]);
        // Without a move, Start still says who starts.
        let r = replay(";P0[Start P1];P1[Resign]").unwrap();
        assert_eq!(r.game.start().turn(), Player::P1);
        assert_eq!(r.winner, Some(Player::P0));
    }

    #[test]
    fn a_complete_move_before_resign_counts_an_incomplete_one_does_not() {
        let r =
            replay(";P0[RtoB 2 0 D 4];P0[R- A 1];P1[RtoB 2 1 D 5];P1[R- A 2];P1[Resign]").unwrap();
        assert_eq!(r.notation(), ["Wd4,a1", "Gd5,a2"]);
        assert_eq!((r.end, r.winner), (End::Resign, Some(Player::P0)));
        // A placement whose ring removal was still due is not on the board.
        let r = replay(";P0[RtoB 2 0 D 4];P0[R- A 1];P1[RtoB 2 1 D 5];P1[Resign]").unwrap();
        assert_eq!(r.notation(), ["Wd4,a1"]);
        assert_eq!((r.end, r.winner), (End::Resign, Some(Player::P0)));
    }

    #[test]
    fn nothing_after_the_first_resign_or_win_on_time_counts() {
        // After the end: a second resignation, an illegal move, a move of the winner.
        let r = replay(
            ";P0[RtoB 2 0 D 4];P0[R- A 1];P0[Done];P1[Resign];P1[Resign];P0[RtoB 2 0 D 4];\
             P0[R- A 1];P1[BtoB A 1 A 3];P0[Done]",
        )
        .unwrap();
        assert_eq!(r.notation(), ["Wd4,a1"]);
        assert_eq!((r.end, r.winner), (End::Resign, Some(Player::P0)));
        // WinOnTime wins for the player who claims it.
        let r = replay(";P0[RtoB 2 0 D 4];P0[R- A 1];P0[Done];P1[WinOnTime];P0[Resign]").unwrap();
        assert_eq!((r.end, r.winner), (End::Time, Some(Player::P1)));
    }

    #[test]
    fn reset_takes_back_the_turn_so_far() {
        // A placement and a removal taken back, then another move.
        let r = replay(
            ";P0[RtoB 2 0 D 4];P0[R- A 1];P0[Reset];P0[RtoB 2 2 C 3];P0[R- G 1];P0[Done];\
             P1[Reset];P1[RtoB 2 1 D 5];P1[Reset];P1[RtoB 2 1 D 6];P1[R- A 2];P1[Done]",
        )
        .unwrap();
        assert_eq!(r.notation(), ["Bc3,g1", "Gd6,a2"]);
        // Alone at the start of a turn it takes back nothing, in records without Done too: the
        // other player's finished turn stands.
        let r =
            replay(";P0[RtoB 2 0 D 4];P0[R- A 1];P1[Reset];P1[RtoB 2 1 D 5];P1[R- A 2]").unwrap();
        assert_eq!(r.notation(), ["Wd4,a1", "Gd5,a2"]);
        // A capture's hops taken back.
        let r = replay(
            ";P0[RtoB 2 0 D 4];P0[R- A 1];P0[Done];P1[RtoB 2 1 D 5];P1[R- A 2];P1[Reset];\
             P1[RtoB 2 1 C 3];P1[R- A 3];P1[Done]",
        )
        .unwrap();
        assert_eq!(r.notation(), ["Wd4,a1", "Gc3,a3"]);
    }

    #[test]
    fn a_placed_marble_moved_and_a_hop_taken_back_in_the_same_turn() {
        // The marble placed on d4 picked up and put on d6 before the ring removal.
        let r = replay(";P0[RtoB 2 0 D 4];P0[BtoB D 4 D 6];P0[R- A 1];P0[Done]").unwrap();
        assert_eq!(r.notation(), ["Wd6,a1"]);
        // A capture: a hop and the hop back (taken back), then the real chain.
        let opening = ";P0[RtoB 2 0 D 4];P0[R- A 1];P0[Done];P1[RtoB 2 1 D 5];P1[R- A 2];P1[Done]";
        let r = replay(&format!("{opening};P0[BtoB D 4 D 6];P0[BtoB D 6 D 4];P0[BtoB D 5 D 3]"))
            .unwrap();
        assert_eq!(r.notation()[2], "d5xd3");
    }
}
