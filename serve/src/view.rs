//! What the web board's page draws of a game, as JSON: the board ([`BoardView`]: rings, marbles,
//! pool, captures), the person's legal choices ([`Legal`]) and the whole [`GameView`] that a
//! [`crate::session::GameSession`] gives after every move.

use std::collections::BTreeMap;

use serde::Serialize;
use zertz_env::{Action, Marble, Player, Position};

/// One ring of the board in the drawing: its name, column `x` and half-step height `p`
/// (`shared/rules/boards.md`).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Cell {
    /// Lower-case name, such as `d4`.
    pub name: String,
    /// Column, 0 = a.
    pub x: u8,
    /// Height in half-steps.
    pub p: u8,
    /// Whether the ring is still on the board.
    pub ring: bool,
    /// The marble on it: `W`, `G` or `B`.
    pub marble: Option<char>,
}

/// Marbles by colour letter.
pub type Marbles = BTreeMap<char, u8>;

fn by_colour(counts: zertz_env::ByMarble<u8>) -> Marbles {
    Marble::ALL.iter().map(|&m| (m.letter(), counts.0[m.index()])).collect()
}

/// A position as the page draws it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct BoardView {
    /// Rings of the board (one of `Board::ALL`).
    pub board: usize,
    /// Whether the marble set is blitz.
    pub blitz: bool,
    /// Every ring of the board's shape, removed ones included.
    pub cells: Vec<Cell>,
    /// The pool.
    pub pool: Marbles,
    /// Captures of P0 and P1.
    pub captures: [Marbles; 2],
    /// `P0` or `P1`.
    pub turn: String,
    /// The ring of the marble in the middle of a capture chain.
    pub chain: Option<String>,
    /// The position in the text format (for analysis and `zertz engine`'s `setposition`).
    pub position: String,
}

impl BoardView {
    /// The drawing of `pos`.
    pub fn of(pos: &Position) -> BoardView {
        let geo = pos.geometry();
        let cells = geo
            .rings()
            .map(|r| {
                let (x, p) = geo.coords(r);
                Cell {
                    name: geo.name(r).to_string(),
                    x,
                    p,
                    ring: pos.has_ring(r),
                    marble: pos.marble_at(r).map(Marble::letter),
                }
            })
            .collect();
        BoardView {
            board: pos.board().rings(),
            blitz: pos.marble_set() == zertz_env::MarbleSet::Blitz,
            cells,
            pool: by_colour(pos.pool()),
            captures: [Player::P0, Player::P1].map(|p| by_colour(pos.captures(p))),
            turn: pos.turn().to_string(),
            chain: pos.chain().map(|r| geo.name(r).to_string()),
            position: pos.to_text(),
        }
    }
}

/// One hop a person may play: the marble on `from` jumps over `over` to `to`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct HopChoice {
    /// The jumping marble's ring.
    pub from: String,
    /// The captured marble's ring.
    pub over: String,
    /// The landing ring.
    pub to: String,
    /// The hop in notation, `b4xd6`.
    pub text: String,
}

/// The legal single actions of the person to move, shaped for clicking: a colour, a ring to
/// place on, a ring to remove (or none); or a hop; or a pass.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Legal {
    /// Colours that can be placed (from the pool, or from the mover's captures once it is empty).
    pub colours: Vec<char>,
    /// For every ring a marble can go on, the rings that can then be removed (empty: none can).
    pub place: BTreeMap<String, Vec<String>>,
    /// The hops, when a capture is compulsory.
    pub hops: Vec<HopChoice>,
    /// Whether the only action is a pass.
    pub pass: bool,
}

impl Legal {
    /// The legal actions of `pos`. The rings that can be removed after a placement depend on
    /// where the marble goes, not on its colour.
    pub fn of(pos: &Position) -> Legal {
        let geo = pos.geometry();
        let mut legal = Legal::default();
        for a in pos.legal_actions() {
            match a {
                Action::Place(p) => {
                    let c = p.marble.letter();
                    if !legal.colours.contains(&c) {
                        legal.colours.push(c);
                    }
                    let removes = legal.place.entry(geo.name(p.at).to_string()).or_default();
                    if let Some(r) = p.remove {
                        let name = geo.name(r).to_string();
                        if !removes.contains(&name) {
                            removes.push(name);
                        }
                    }
                }
                Action::Hop(h) => {
                    let over = geo.neighbour(h.from, h.dir);
                    let to = geo.jump(h.from, h.dir);
                    if let (Some(over), Some(to)) = (over, to) {
                        legal.hops.push(HopChoice {
                            from: geo.name(h.from).to_string(),
                            over: geo.name(over).to_string(),
                            to: geo.name(to).to_string(),
                            text: pos.action_to_string(&a),
                        });
                    }
                }
                Action::Pass => legal.pass = true,
            }
        }
        legal.colours.sort_by_key(|c| "WGB".find(*c));
        legal
    }
}

/// Everything the page shows of a game.
#[derive(Clone, Debug, Serialize)]
pub struct GameView {
    /// The position.
    #[serde(flatten)]
    pub board: BoardView,
    /// The side of the person (`P0` or `P1`), none when two bots play.
    pub you: Option<String>,
    /// Who plays P0 and P1: `you` or a player spec.
    pub players: [String; 2],
    /// Whole moves in notation.
    pub moves: Vec<String>,
    /// Whether the game has ended.
    pub over: bool,
    /// The result in words.
    pub result: Option<String>,
    /// Whose turn it is or the result, in words.
    pub status: String,
    /// Whether a bot is to move (the page then asks it to).
    pub bot_to_move: bool,
    /// Whether undo has something to take back.
    pub can_undo: bool,
    /// The person's legal choices (empty on a bot's turn).
    pub legal: Legal,
}
