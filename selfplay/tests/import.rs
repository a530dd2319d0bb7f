//! The record importer on games written by zertz: a record that goes on after a third
//! repetition (boardspace.net did not apply that draw) ends there as a draw.

use zertz_env::records::to_sgf;
use zertz_env::sgf::{End, Record};
use zertz_env::{Board, Game, MarbleSet, Player, SplitMix64, Variant};

/// The random game of seed 194409 (uniform legal whole moves from the start of 37 rings) is the
/// first of 200,000 to end by third repetition, after 43 moves. If move generation ever orders
/// moves differently, this game changes and the test says so.
fn repetition_game() -> Game {
    let mut rng = SplitMix64(194_409);
    let mut g = Game::new(Variant::new(Board::R37, MarbleSet::Standard), Player::P0);
    while g.outcome().is_none() {
        let moves = g.legal_moves();
        let m = moves[rng.below(moves.len())];
        g.play(&m).unwrap();
    }
    assert!(g.is_repetition(), "the game of seed 194409 no longer ends by repetition");
    g
}

#[test]
fn a_record_that_goes_on_after_a_third_repetition_ends_there_as_a_draw() {
    let game = repetition_game();
    let sgf = to_sgf(&game, None).unwrap();
    let replay = Record::parse(&sgf).unwrap().replay().unwrap();
    assert_eq!((replay.end, replay.winner), (End::Draw, None));
    assert_eq!(replay.game.moves(), game.moves());
    // The same record going on: a legal-looking move and a resignation after the draw.
    let mover = game.position().turn();
    let after = format!("; {mover}[RtoB 2 0 D 4]\n; {mover}[R- A 1]\n; {}[Resign]\n)", !mover);
    let extended = format!("{}{after}", sgf.trim_end().strip_suffix(')').unwrap());
    let replay = Record::parse(&extended).unwrap().replay().unwrap();
    assert_eq!((replay.end, replay.winner), (End::Draw, None));
    assert_eq!(replay.game.moves(), game.moves());
}
