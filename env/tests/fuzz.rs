//! Fuzz targets that stay: seeded mutations of valid inputs, fed to the SGF import and to the
//! position text, for a bounded time in the test suite.
//!
//! Each target starts from a corpus of valid inputs (every record of the games folder,
//! `ZERTZ_GAMES` or `shared/games` beside the repository; position texts of random games on every
//! board), mutates their bytes with [`zertz_fuzzkit::fuzz`], and checks that the parser answers
//! `Ok` or `Err` without panicking, and that what it accepts holds together (round trips, replays).
//!
//! Budget per target: `ZERTZ_FUZZ_SECS` seconds (default 8), `ZERTZ_FUZZ_CASES` inputs,
//! `ZERTZ_FUZZ_SEED` (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-env --test fuzz -- --nocapture
//! ```
//!
//! A failing input is printed and written to `target/fuzz-failures/`.

use std::path::PathBuf;

use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::sgf::{End, Record, parse_nodes};
use zertz_env::symmetry::symmetries;
use zertz_env::{ActionSpace, Game, Outcome, Player, Position, Setup, SplitMix64, Variant};
use zertz_fuzzkit::fuzz;

fn games_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("ZERTZ_GAMES") {
        return PathBuf::from(dir);
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/games"))
}

/// Every .sgf record of the games folder.
fn sgf_corpus() -> Vec<Vec<u8>> {
    let dir = games_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!("cannot list {} ({e}); set ZERTZ_GAMES to the games folder", dir.display())
        })
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sgf"))
        .collect();
    files.sort();
    files.iter().map(|f| std::fs::read(f).unwrap()).collect()
}

/// Position texts of random games on every variant, from both first players, to the end.
fn position_corpus() -> Vec<Vec<u8>> {
    let mut rng = SplitMix64(0xF022);
    let mut out = Vec::new();
    for (k, v) in Variant::all().enumerate() {
        for game in 0..3 {
            let first = if (k + game) % 2 == 0 { Player::P0 } else { Player::P1 };
            let mut pos = Position::new(v, first);
            let mut n = 0;
            while !pos.is_over() && n < 400 {
                if n % 3 == 0 || pos.chain().is_some() {
                    out.push(pos.to_text().into_bytes());
                }
                let actions = pos.legal_actions();
                pos = pos.play_action(&actions[rng.below(actions.len())]).unwrap();
                n += 1;
            }
            out.push(pos.to_text().into_bytes());
        }
    }
    out
}

// ------------------------------------------------------------------------------- checks

/// Tokens of the SGF records (boardspace's dialect) and of numbers that overflow.
const SGF_TOKENS: &[&str] = &[
    "(",
    ")",
    ";",
    "[",
    "]",
    "\\",
    "\n",
    " ",
    "GM[22]",
    "SU[Zertz]",
    "SU[Zertz+11]",
    "SU[Zertz+24]",
    "VV[2]",
    "P0[",
    "P1[",
    "P-1[",
    "RtoB ",
    "BtoB ",
    "R- ",
    "Done",
    "Start",
    "Resign",
    "Pass",
    "Edit",
    "Swap",
    "Undo",
    "0 ",
    "2 ",
    "-1",
    "A 1",
    "D 4",
    "G 7",
    "H 9",
    "Z 99",
    "4294967296",
    "18446744073709551616",
    "99999999999999999999",
    "RE[",
    "W",
    "g",
    "b",
    "é",
    "\u{0}",
];

/// Tokens of the position text.
const TEXT_TOKENS: &[&str] = &[
    "37 ",
    "40 ",
    "43 ",
    "44 ",
    "48 ",
    "61 ",
    "standard ",
    "blitz ",
    "/",
    ".",
    "-",
    "w",
    "g",
    "b",
    "W",
    "x",
    "0",
    "1",
    "9",
    "10",
    "255",
    "256",
    "65536",
    "4294967296",
    "18446744073709551616",
    "P0",
    "P1",
    " ",
    "  ",
    "\t",
    "\n",
    "a1",
    "d4",
    "é",
    "\u{0}",
];

/// Parses and replays a record; a replay must hold together.
fn check_sgf(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let nodes = parse_nodes(&text);
    let Ok(record) = Record::parse(&text) else {
        return false;
    };
    assert!(nodes.is_ok(), "a record parses but its nodes do not");
    let Ok(replay) = record.replay() else {
        return true;
    };
    let game = &replay.game;
    assert_eq!(replay.legal_counts.len(), game.moves().len());
    // The moves replay from the start, in notation too, to the same position.
    let mut again = Game::from_position(*game.start());
    for (m, s) in game.moves().iter().zip(replay.notation()) {
        assert_eq!(again.position().count_legal_moves(), replay.legal_counts[again.moves().len()]);
        let parsed = again.play_str(&s).unwrap_or_else(|e| panic!("{s} does not replay: {e}"));
        assert_eq!(&parsed, m);
    }
    let end = *game.position();
    assert_eq!(again.position(), &end);
    assert_eq!(end.hash(), end.compute_hash());
    assert_eq!(Position::from_text(&end.to_text()), Ok(end));
    match replay.end {
        End::Capture => assert!(matches!(game.outcome(), Some(Outcome::Win(_)))),
        End::Draw => assert_eq!(game.outcome(), Some(Outcome::Draw)),
        End::Resign | End::Time => assert!(replay.winner.is_some()),
        End::Unfinished => assert!(!game.is_over()),
    }
    true
}

/// Parses a position text; what it accepts must read back, play, encode and draw.
fn check_position_text(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let direct = Position::from_text(&text);
    let setup = Setup::from_text(&text);
    match &setup {
        Ok(s) => assert_eq!(Position::from_setup(s), direct),
        Err(e) => assert_eq!(direct.as_ref().err(), Some(e)),
    }
    let Ok(pos) = direct else {
        return false;
    };
    // Round trips: text -> position -> text -> the same position, and the text is canonical.
    let canonical = pos.to_text();
    assert_eq!(Position::from_text(&canonical), Ok(pos), "{canonical} does not read back");
    assert_eq!(Position::from_text(&canonical).unwrap().to_text(), canonical);
    assert_eq!(Setup::from_text(&canonical).ok(), Some(pos.to_setup()));
    assert_eq!(pos.hash(), pos.compute_hash());
    // Everything `zertz_env` does with a position it accepted.
    let moves = pos.legal_moves();
    let actions = pos.legal_actions();
    assert_eq!(moves.len() as u64, pos.count_legal_moves());
    assert_eq!(pos.is_over(), actions.is_empty());
    let board = pos.board();
    let shape = Shape::of(board);
    let (mut planes, mut globals) = (vec![0.0; shape.planes_len()], vec![0.0; GLOBALS]);
    pos.encode(&mut planes, &mut globals);
    let mut mask = vec![false; ActionSpace::new(board).len()];
    pos.legal_action_mask(&mut mask);
    assert_eq!(mask.iter().filter(|&&m| m).count(), actions.len());
    let _ = pos.diagram();
    for s in symmetries(board) {
        let image = s.apply_position(&pos);
        assert_eq!(image.count_legal_actions(), pos.count_legal_actions());
    }
    let mut rng = SplitMix64(pos.hash());
    for _ in 0..4.min(moves.len()) {
        let m = moves[rng.below(moves.len())];
        let s = pos.move_to_string(&m);
        assert_eq!(pos.parse_legal_move(&s), Ok(m), "{s} does not read back in {canonical}");
        let next = pos.play(&m).unwrap();
        assert_eq!(next.hash(), next.compute_hash());
        assert_eq!(Position::from_text(&next.to_text()), Ok(next));
    }
    for _ in 0..4.min(actions.len()) {
        let a = actions[rng.below(actions.len())];
        let s = pos.action_to_string(&a);
        assert_eq!(pos.parse_legal_action(&s), Ok(a), "{s} does not read back in {canonical}");
        let next = pos.play_action(&a).unwrap();
        assert_eq!(Position::from_text(&next.to_text()), Ok(next));
    }
    true
}

// ------------------------------------------------------------------------------- targets

#[test]
fn fuzz_sgf_import() {
    fuzz("sgf", sgf_corpus(), SGF_TOKENS, check_sgf);
}

#[test]
fn fuzz_position_text() {
    fuzz("position-text", position_corpus(), TEXT_TOKENS, check_position_text);
}
