//! Positions shared by the searchers' tests: hand-built endgames with forced wins and random
//! small endgames, written as the rings of the 37-ring board that are left (every other ring
//! removed), placed at the centre of the board they are played on.

#![allow(dead_code)] // each test file uses its own part

use zertz_env::{
    Board, ByMarble, ByPlayer, Cell, Marble, MarbleSet, Player, Position, Setup, SplitMix64,
    Variant,
};

/// A small endgame: the rings listed as `ring:cell` (`.` vacant, `w` `g` `b` a marble; names of
/// the 37-ring board) at the centre of `board` (where they are on 40 to 48 rings, around e5 on
/// 61), every other ring removed, the captures of P0 and P1 as given, the rest of the marble
/// set in the pool, P0 to move; unchecked.
pub fn endgame_setup(board: Board, set: MarbleSet, rings: &str, p0: [u8; 3], p1: [u8; 3]) -> Setup {
    let small = Board::R37.geometry();
    let geo = board.geometry();
    // The centre: d4 of 37 rings, the same ring of 40 to 48 rings, e5 of 61.
    let centre = geo.coords(geo.parse_ring(if board == Board::R61 { "e5" } else { "d4" }).unwrap());
    let (from, to) = (small.coords(small.parse_ring("d4").unwrap()), centre);
    let (from, to) = ((i32::from(from.0), i32::from(from.1)), (i32::from(to.0), i32::from(to.1)));
    let mut cells = vec![Cell::Removed; geo.len()];
    let mut on_board = [0u8; 3];
    for item in rings.split_whitespace() {
        let (name, cell) = item.split_once(':').expect("ring:cell");
        let (x, p) = small.coords(small.parse_ring(name).expect("a ring of 37"));
        let at = geo
            .at_coords(i32::from(x) - from.0 + to.0, i32::from(p) - from.1 + to.1)
            .expect("a ring of the board");
        cells[at.index()] = match cell {
            "." => Cell::Vacant,
            m => {
                let m = Marble::from_letter(m.chars().next().unwrap()).expect("w, g or b");
                on_board[m.index()] += 1;
                Cell::Marble(m)
            }
        };
    }
    let counts = set.counts().0;
    let pool: [u8; 3] = std::array::from_fn(|c| counts[c] - on_board[c] - p0[c] - p1[c]);
    Setup {
        variant: Variant::new(board, set),
        cells,
        pool: ByMarble(pool),
        captures: ByPlayer([ByMarble(p0), ByMarble(p1)]),
        turn: Player::P0,
        chain: None,
        passes: 0,
    }
}

/// [`endgame_setup`] checked by [`Position::from_text`].
pub fn endgame(board: Board, set: MarbleSet, rings: &str, p0: [u8; 3], p1: [u8; 3]) -> Position {
    let setup = endgame_setup(board, set, rings, p0, p1);
    let pos = Position::from_setup(&setup).unwrap_or_else(|e| panic!("{rings}: {e}"));
    text(&pos.to_text())
}

pub fn text(text: &str) -> Position {
    let pos = Position::from_text(text).unwrap_or_else(|e| panic!("bad position {text:?}: {e}"));
    assert_eq!(pos.to_text(), text);
    pos
}

pub const STANDARD: MarbleSet = MarbleSet::Standard;
pub const BLITZ: MarbleSet = MarbleSet::Blitz;

/// Two capture chains from d1: over the white on d2, then over the white on d4 (P0's fourth
/// white, or third in blitz: a win) or over the grey on e3 (no win). The chain b1xb3xb5, two
/// greys, is as long and comes first.
pub const CHAIN: &str = "b1:b b2:g b3:. b4:g b5:. d1:b d2:w d3:. d4:w d5:. e3:g f3:.";

/// e2 is the last vacant ring of a group of six, and not free (ringed by marbles): a marble
/// placed on it claims the group, the white on e1 with it. There is no white in the pool, so no
/// white placed on the three rings of column b can be cut off and claimed instead.
pub const FILL_THE_GROUP: &str = "b2:. b3:. b4:. d2:g d3:b e1:w e2:. f1:b f2:g";

/// The white on c2 and the black on c3 hang on to the rest by d3 alone: removing d3 (or filling
/// it and removing e3) cuts them off, and P0 claims them.
pub const CUT_OFF: &str = "c2:w c3:b d3:. e3:. e4:. f3:. f4:.";

/// P0 places on d1 (or d3): P1 must jump the grey on d2 from it, which opens d2 behind the
/// white on c2, and P0's black on b2 jumps the white (b2xd2), P0's winning white. (A marble on
/// b3 works too: P1's forced b2xb4 opens b2 for d2xb2.) The quiescence search plays the two
/// compulsory captures out, so the win is seen at depth 1.
pub const FORCED_CAPTURES: &str = "b2:b b3:. b4:. c2:w d1:. d2:g d3:. f3:. f4:. g3:.";

/// P0 (3/2/0 of the standard set, 2/2/0 of blitz) needs one more white. `We5,e4` sets a white
/// among the last vacant rings, and P1 has no capture to answer with: each of its 27
/// placements lets P0 win on its next turn (after `Gd5,f4`, `d5xf5` jumps the white). The
/// replies are free, so the win is seen at depth 3 only.
pub const FREE_REPLIES: &str = "c4:b d4:b d5:. d6:. e4:. e5:. f4:. f5:.";

/// Rulebook diagram 5 (from `env/tests/rules.rs`), a full board: `Bb1,a3`, then P1's forced
/// `c1xa1`, then `Wa2,b1` cuts off two whites and wins. Seen at depth 3 among 1530 moves.
pub const DIAGRAM_5: &str =
    "37 standard ..../.--../w...../-....b./....../..g../.... 1/3/8 2/0/0 2/4/1 P0 - 0";

/// `Gd5,e3` (the white on f2 now hangs on f3 alone); P1 must jump the black on e4 with it
/// (d5xf3); P0 must jump the black on d4 with the white on c3 (c3xe4); P1 must jump that white
/// (f3xd5); and `Gc3,f3` cuts off the white on f2 for P0's fourth white (third in blitz). Every
/// capture is forced, but the last turn is a placement, so the win is seen at depth 5.
pub const THREE_TURNS: &str = "c3:w d4:b d5:. e3:. e4:b f2:w f3:.";

/// The variants the random positions come from.
pub const VARIANTS: [(Board, MarbleSet); 6] = [
    (Board::R37, STANDARD),
    (Board::R37, BLITZ),
    (Board::R61, STANDARD),
    (Board::R61, BLITZ),
    (Board::R40, STANDARD),
    (Board::R48, BLITZ),
];

/// A random small endgame: a few connected rings around the centre of `board`, each vacant or
/// with a marble, captures short of a win for both, either player to move (`None` when that is
/// not a legal position).
pub fn random_endgame(rng: &mut SplitMix64, board: Board, set: MarbleSet) -> Option<Position> {
    let small = Board::R37.geometry();
    let mut rings = vec![small.parse_ring("d4").unwrap()];
    let size = 4 + rng.below(8);
    while rings.len() < size {
        let r = rings[rng.below(rings.len())];
        if let Some(n) = small.neighbour(r, zertz_env::Direction::ALL[rng.below(6)]) {
            if !rings.contains(&n) {
                rings.push(n);
            }
        }
    }
    let cells: Vec<String> = rings
        .iter()
        .map(|&r| {
            format!("{}:{}", small.name(r), [".", ".", ".", "w", "g", "b", "b"][rng.below(7)])
        })
        .collect();
    let single = set.single_colour_win().0;
    let mut caps = [[0u8; 3]; 2];
    for c in &mut caps {
        loop {
            *c = std::array::from_fn(|i| rng.below(usize::from(single[i])) as u8);
            if !set.is_win(&ByMarble(*c)) {
                break;
            }
        }
    }
    let counts = set.counts().0;
    let on_board = |m: &str| cells.iter().filter(|c| c.ends_with(m)).count() as u8;
    let used = [on_board(":w"), on_board(":g"), on_board(":b")];
    if (0..3).any(|c| used[c] + caps[0][c] + caps[1][c] > counts[c]) {
        return None;
    }
    let mut setup = endgame_setup(board, set, &cells.join(" "), caps[0], caps[1]);
    setup.turn = Player::ALL[rng.below(2)];
    Position::from_setup(&setup).ok()
}

/// Small endgames of every variant of [`VARIANTS`] with at most `max_moves` legal moves.
pub fn endgames(seed: u64, count: usize, max_moves: u64) -> Vec<Position> {
    let mut rng = SplitMix64(seed);
    let mut out = Vec::new();
    while out.len() < count {
        let (board, set) = VARIANTS[rng.below(VARIANTS.len())];
        if let Some(p) = random_endgame(&mut rng, board, set) {
            if !p.is_over() && p.count_legal_moves() <= max_moves {
                out.push(p);
            }
        }
    }
    out
}
