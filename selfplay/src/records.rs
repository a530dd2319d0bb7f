//! Game records: JSON lines in the move notation, and boardspace-style SGF.

use serde::Serialize;
use zertz_env::sgf::Record;
use zertz_env::{Board, Game, Marble, Move, Outcome, Player, Position};

/// One finished game as a JSON line.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameLine {
    /// Game index in the run.
    pub game: u64,
    /// Board size.
    pub board: usize,
    /// Whether the blitz marble set was used.
    pub blitz: bool,
    /// Who moved first, "P0" or "P1".
    pub first: String,
    /// Whole-turn moves in notation.
    pub moves: Vec<String>,
    /// "P0", "P1" or null for a draw.
    pub winner: Option<String>,
    /// "capture", "resign", "draw" or "limit" (stopped at the action limit).
    pub end: &'static str,
    /// Captures per player as [white, grey, black].
    pub captures: [[u8; 3]; 2],
}

impl GameLine {
    /// The line of a game that ended with `outcome` (`None`: stopped at the action limit).
    pub fn new(id: u64, game: &Game, outcome: Option<Outcome>, resigned: bool) -> GameLine {
        let start = game.start();
        let pos = game.position();
        let mut p = *start;
        let moves = game
            .moves()
            .iter()
            .map(|m| {
                let s = p.move_to_string(m);
                p.play_unchecked(m);
                s
            })
            .collect();
        let caps = |pl: Player| Marble::ALL.map(|m| pos.captures(pl)[m]);
        GameLine {
            game: id,
            board: start.board().rings(),
            blitz: start.marble_set() == zertz_env::MarbleSet::Blitz,
            first: start.turn().to_string(),
            moves,
            winner: outcome.and_then(|o| o.winner()).map(|p| p.to_string()),
            end: match outcome {
                None => "limit",
                Some(_) if resigned => "resign",
                Some(Outcome::Draw) => "draw",
                Some(Outcome::Win(_)) => "capture",
            },
            captures: [caps(Player::P0), caps(Player::P1)],
        }
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
        .filter(|_| start.marble_set() == zertz_env::MarbleSet::Standard)
        .ok_or_else(|| {
            format!("boardspace has no {}-ring {} game", start.board(), start.marble_set().name())
        })?;
    let geo = start.geometry();
    let cell = |r: zertz_env::Ring| {
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
