//! Game records (the `serde` feature): one typed record ([`GameRecord`]) for self-play and
//! matches, written as JSON lines in the move notation, and boardspace-style SGF.

use crate::sgf::Record;
use crate::{Board, Game, Marble, MarbleSet, Move, Player, Position, Variant};
use serde::{Deserialize, Serialize};

/// How a recorded game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum End {
    /// A player won by the rules (a win set of captures, or the last ring taken).
    Win,
    /// A player resigned (self-play's resignation).
    Resign,
    /// Both players passed in a row: a draw.
    Draw,
    /// A position occurred for the third time: a draw.
    Repetition,
    /// The game reached the action limit: a draw.
    Limit,
    /// A player chose an illegal action and lost (a broken player in a match).
    Illegal,
}

/// One finished game, as self-play and matches write it (one JSON line each, `games-WW.jsonl`
/// and `zertz match --out`), `zertz sgf` and `zertz.load_records` read it. Every record names its
/// board and marble set and who moved first, so that its moves replay on their own
/// ([`GameRecord::replay`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRecord {
    /// Game index in its run or match.
    pub game: u64,
    /// The board (rings).
    pub board: Board,
    /// Whether the blitz marble set was used.
    pub blitz: bool,
    /// Who moved first. (Records of earlier versions call it `first`; they still read.)
    #[serde(rename = "first_player", alias = "first")]
    pub first_player: Player,
    /// The players' names, P0's and P1's (matches; none in self-play, where one search plays
    /// both sides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub players: Option<[String; 2]>,
    /// Whole-turn moves in notation, from the start position.
    pub moves: Vec<String>,
    /// The winner; none for a draw.
    pub winner: Option<Player>,
    /// How the game ended.
    pub end: End,
    /// Captures of P0 and P1 as `[white, grey, black]`.
    pub captures: [[u8; 3]; 2],
}

/// A record whose moves do not replay, or that does not hold together.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// Not a record (bad JSON, an unknown or missing field, a value of the wrong type).
    #[error("not a game record: {0}")]
    Parse(String),
    /// A move that cannot be played.
    #[error("move {index} ({text}) cannot be played: {reason}")]
    Move {
        /// Its position in `moves`, from 1.
        index: usize,
        /// The move.
        text: String,
        /// Why.
        reason: String,
    },
}

impl GameRecord {
    /// The record of `game` (index `id`), which ended as `end` with `winner`, played by
    /// `players` (P0's and P1's names) if named.
    pub fn of_game(
        id: u64,
        game: &Game,
        end: End,
        winner: Option<Player>,
        players: Option<[String; 2]>,
    ) -> GameRecord {
        let start = game.start();
        let pos = game.position();
        let moves = game.notation();
        let caps = |pl: Player| Marble::ALL.map(|m| pos.captures(pl)[m]);
        GameRecord {
            game: id,
            board: start.board(),
            blitz: start.marble_set() == MarbleSet::Blitz,
            first_player: start.turn(),
            players,
            moves,
            winner,
            end,
            captures: [caps(Player::P0), caps(Player::P1)],
        }
    }

    /// Reads one JSON line.
    pub fn from_json(line: &str) -> Result<GameRecord, RecordError> {
        serde_json::from_str(line).map_err(|e| RecordError::Parse(e.to_string()))
    }

    /// The record as one JSON line (without its newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a record serializes")
    }

    /// The game its moves replay to, from the start of its board and marble set.
    pub fn replay(&self) -> Result<Game, RecordError> {
        let mut game = Game::new(Variant::of_blitz(self.board, self.blitz), self.first_player);
        for (i, text) in self.moves.iter().enumerate() {
            game.play_str(text).map_err(|e| RecordError::Move {
                index: i + 1,
                text: text.clone(),
                reason: e.to_string(),
            })?;
        }
        Ok(game)
    }

    /// The game in boardspace's SGF dialect (see [`to_sgf`]): its moves replayed, and the
    /// resignation of the loser when it ended by one.
    pub fn to_sgf(&self) -> Result<String, String> {
        let game = self.replay().map_err(|e| e.to_string())?;
        let resigned_by = match (self.end, self.winner) {
            (End::Resign, Some(w)) => Some(!w),
            _ => None,
        };
        to_sgf(&game, resigned_by)
    }
}

/// The boardspace variant name of a board, for the boards boardspace plays.
fn boardspace_variant(board: Board) -> Option<&'static str> {
    match board {
        Board::R37 => Some("Zertz"),
        Board::R48 => Some("Zertz+11"),
        Board::R61 => Some("Zertz+24"),
        _ => None,
    }
}

/// Writes a game in boardspace's SGF dialect (`GM[22]`), which [`Record::parse`] reads back.
/// Only the 37-, 48- and 61-ring boards with standard marbles have a boardspace variant.
pub fn to_sgf(game: &Game, resigned_by: Option<Player>) -> Result<String, String> {
    let start = game.start();
    let su = boardspace_variant(start.board())
        .filter(|_| start.marble_set() == MarbleSet::Standard)
        .ok_or_else(|| {
            format!("boardspace has no {}-ring {} game", start.board(), start.marble_set().name())
        })?;
    let geo = start.geometry();
    let cell = |r: crate::Ring| {
        let (c, row) = geo.column_row(r);
        format!("{} {}", (b'A' + c as u8) as char, row)
    };
    let mut out = format!("(;\nGM[22]VV[2]\nSU[{su}]\nP0[id \"P0\"]\nP1[id \"P1\"]\n");
    let mut n = 0;
    let mut node = |out: &mut String, p: Player, text: String| {
        out.push_str(&format!("; {p}[{n} {text}]\n"));
        n += 1;
    };
    node(&mut out, start.turn(), format!("Start {}", start.turn()));
    let mut pos: Position = *start;
    for m in game.moves() {
        let p = pos.turn();
        match m {
            Move::Place(pl) => {
                let rack = if pos.pool().0 == [0, 0, 0] { p.index() } else { 2 };
                node(&mut out, p, format!("RtoB {rack} {} {}", pl.marble.index(), cell(pl.at)));
                if let Some(r) = pl.remove {
                    node(&mut out, p, format!("R- {}", cell(r)));
                }
            }
            Move::Capture(c) => {
                let mut at = c.from();
                for d in c.dirs() {
                    let to = geo
                        .neighbour(at, d)
                        .and_then(|o| geo.neighbour(o, d))
                        .ok_or("a capture off the board")?;
                    node(&mut out, p, format!("BtoB {} {}", cell(at), cell(to)));
                    at = to;
                }
            }
            Move::Pass => {}
        }
        node(&mut out, p, "Done".to_string());
        pos.play_unchecked(m);
    }
    if let Some(p) = resigned_by {
        node(&mut out, p, "Resign".to_string());
    }
    out.push(')');
    // Check what was written: it must replay to the same moves.
    let record = Record::parse(&out).map_err(|e| e.to_string())?;
    let replay = record.replay().map_err(|e| format!("the written record does not replay: {e}"))?;
    if replay.game.moves() != game.moves() {
        return Err("the written record replays to other moves".to_string());
    }
    Ok(out)
}
