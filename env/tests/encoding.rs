//! The observation encoding, the action space and the board symmetries.
//!
//! 1. A golden file, `tests/data/encoding-v{ENCODING_VERSION}.txt`, holds a human-readable dump of
//!    the encoding of a dozen fixed positions (every board, both marble sets, a capture chain in
//!    progress, an empty pool, a pass, captures by both players). The test re-encodes them and
//!    compares the dump with the file exactly. After an intended change of the encoding, bump
//!    `zertz_env::encode::ENCODING_VERSION` and regenerate the file with
//!
//!    ```text
//!    ZERTZ_BLESS=1 cargo test -p zertz-env --test encoding
//!    ```
//!
//!    then read the new file before committing it. A few values of the file are checked by hand
//!    against the documentation of `encode.rs` in separate tests below.
//! 2. Symmetries: on random positions of every variant, transforming then encoding equals encoding
//!    then transforming the planes, and likewise for legal masks, actions, play and inverses.
//! 3. The action space: legal masks agree with the legal actions, every index decodes to an action
//!    that is legal exactly where the mask says so, and `encode` writes every element.
//!
//! Random positions come from games played with a small deterministic RNG (splitmix64) seeded per
//! case, action by action (so positions in the middle of capture chains occur), sometimes by a
//! "quiet" player that avoids captures so that games run long enough to empty the pool. Random
//! games seldom pass, so a few hand-made positions (only a pass legal, a drawn game) are checked
//! as well.

use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::PathBuf;

use zertz_env::encode::{ENCODING_VERSION, GLOBALS, PLANES, Shape};
use zertz_env::symmetry::symmetries;
use zertz_env::{Action, ActionSpace, Board, MarbleSet, Player, Position, Variant};

// ------------------------------------------------------------------------------------ helpers

/// `zertz_env`'s splitmix64 generator picks moves.
use zertz_env::SplitMix64 as Rng;

/// The encoding of a position: `(planes, globals)`.
fn encode(pos: &Position) -> (Vec<f32>, Vec<f32>) {
    let shape = Shape::of(pos.board());
    let mut planes = vec![f32::NAN; shape.planes_len()];
    let mut globals = vec![f32::NAN; shape.globals];
    pos.encode(&mut planes, &mut globals);
    (planes, globals)
}

/// The legal-action mask of a position.
fn mask(pos: &Position) -> Vec<bool> {
    let mut m = vec![false; pos.action_space().len()];
    pos.legal_action_mask(&mut m);
    m
}

/// One plane of an encoding.
fn plane(pos: &Position, planes: &[f32], k: usize) -> Vec<f32> {
    let cells = Shape::of(pos.board()).cells();
    planes[k * cells..(k + 1) * cells].to_vec()
}

fn count_ones(v: &[f32]) -> usize {
    v.iter().filter(|&&x| x == 1.0).count()
}

/// Bitboard of a plane (the rings whose cell is 1.0).
fn plane_bits(pos: &Position, planes: &[f32], k: usize) -> u64 {
    let geo = pos.geometry();
    let p = plane(pos, planes, k);
    geo.rings().filter(|&r| p[geo.grid_index(r)] == 1.0).fold(0, |acc, r| acc | r.bit())
}

fn from_text(text: &str) -> Position {
    Position::from_text(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

/// Plays whole-turn moves in notation, each checked for legality.
fn play_moves(mut pos: Position, moves: &[&str]) -> Position {
    for m in moves {
        let mv = pos.parse_legal_move(m).unwrap_or_else(|e| panic!("{m} in {pos:?}: {e}"));
        pos = pos.play(&mv).unwrap_or_else(|e| panic!("{e}"));
    }
    pos
}

/// Plays single actions in notation, each checked for legality.
fn play_actions(mut pos: Position, actions: &[&str]) -> Position {
    for a in actions {
        let act = pos.parse_legal_action(a).unwrap_or_else(|e| panic!("{a} in {pos:?}: {e}"));
        pos = pos.play_action(&act).unwrap_or_else(|e| panic!("{e}"));
    }
    pos
}

/// A random game of `variant` played action by action; every position of it, the last one
/// included (usually a finished game).
fn random_game(variant: Variant, seed: u64) -> Vec<Position> {
    let mut rng = Rng(seed);
    let first = if rng.next_u64() & 1 == 0 { Player::P0 } else { Player::P1 };
    // Random actions tried (at most) looking for one that leaves no capture; 0 for uniform play.
    let quiet_tries = [0, 3, 30, 30][rng.below(4)];
    let mut pos = Position::new(variant, first);
    let mut out = vec![pos];
    // Positions can repeat forever without a `Game`; a bound ends such games.
    for _ in 0..400 {
        let actions = pos.legal_actions();
        if actions.is_empty() {
            break;
        }
        let mut a = actions[rng.below(actions.len())];
        for _ in 0..quiet_tries {
            let next = pos.play_action(&a).expect("generated actions are legal");
            if next.chain().is_none() && !next.has_capture() {
                break;
            }
            a = actions[rng.below(actions.len())];
        }
        pos.play_action_unchecked(&a);
        out.push(pos);
    }
    out
}

/// `(seed, positions)` of the random games of one variant: `games` games, every `stride`-th
/// position of each (with the last one).
fn random_positions(variant: Variant, games: u64, stride: usize) -> Vec<(u64, Position)> {
    let vi = Variant::all().position(|v| v == variant).unwrap() as u64;
    let mut out = Vec::new();
    for g in 0..games {
        let seed = 0x5EED_0000 + 1000 * vi + g;
        let game = random_game(variant, seed);
        let last = game.len() - 1;
        for (i, pos) in game.into_iter().enumerate() {
            if i % stride == 0 || i == last {
                out.push((seed, pos));
            }
        }
    }
    out
}

// -------------------------------------------------------------------------------- golden file

/// Dump of the encoding of one position: its text, each plane as `H` rows of `W` digits (`?` for
/// a value that is neither 0 nor 1), the globals with 4 decimals.
fn dump(name: &str, pos: &Position, out: &mut String) {
    let shape = Shape::of(pos.board());
    let (planes, globals) = encode(pos);
    let _ = writeln!(out, "position {name}");
    let _ = writeln!(out, "text {}", pos.to_text());
    let _ = writeln!(
        out,
        "shape C={} H={} W={} G={}",
        shape.planes, shape.height, shape.width, shape.globals
    );
    for k in 0..shape.planes {
        let _ = writeln!(out, "plane {k}");
        for row in 0..shape.height {
            let start = (k * shape.height + row) * shape.width;
            let line: String = planes[start..start + shape.width]
                .iter()
                .map(|&x| match x {
                    0.0 => '0',
                    1.0 => '1',
                    _ => '?',
                })
                .collect();
            let _ = writeln!(out, "{line}");
        }
    }
    let g: Vec<String> = globals.iter().map(|x| format!("{x:.4}")).collect();
    let _ = writeln!(out, "globals {}", g.join(" "));
    out.push('\n');
}

const DIAGRAM_3: &str =
    "37 standard ..-./-.b../-g..../..gw.../.b-.../-..../.... 5/6/8 0/0/0 0/0/0 P0 - 0";

/// 61 blitz, every marble on the board, nothing to place and no capture (from `rules.rs`).
const NOTHING_TO_DO: &str = "61 blitz bb--./b.g-b-/-bg----/------gg/.b----g.w/------ww/-bb----/g.w-b-/gw--. 0/0/0 0/0/0 0/0/0 P0 - 0";

/// 61 standard, empty pool, captures by both players (from `rules.rs`).
const CYCLE: &str = "61 standard -----/------/-------/wgbgwb--/-b....---/gwbgwb--/-------/------/----- 0/0/0 1/1/2 1/3/3 P0 - 0";

/// 37 standard, empty pool, captures by both players (from `rules.rs`).
const EMPTY_POOL: &str =
    "37 standard w.../....g/....../...w.../....../g..../...w 0/0/0 0/4/5 3/2/5 P0 - 0";

/// The positions of the golden file, by name.
fn golden_positions() -> Vec<(&'static str, Position)> {
    let v = |b, m| Variant::new(b, m);
    let start = |b, m, p| Position::new(v(b, m), p);
    use Board::*;
    use MarbleSet::*;
    vec![
        ("37-standard-start", start(R37, Standard, Player::P0)),
        (
            "37-standard-captures-both",
            play_moves(
                start(R37, Standard, Player::P0),
                &["Bb3,e1", "Wc4,c6", "b3xd5", "Gg2,d7", "Wg1,a4", "g1xg3", "Bb5,g2", "Be3,c1"],
            ),
        ),
        ("37-standard-chain", play_actions(from_text(DIAGRAM_3), &["d4xd2"])),
        ("37-standard-empty-pool-p1", play_moves(from_text(EMPTY_POOL), &["Gc2,a4"])),
        ("40-blitz-start-p1", start(R40, Blitz, Player::P1)),
        (
            "40-standard-two-moves",
            play_moves(start(R40, Standard, Player::P1), &["Wa5,c7", "Bd4,a1"]),
        ),
        (
            "43-standard-captures-both",
            play_moves(
                start(R43, Standard, Player::P0),
                &["Gf5,f1", "Wd7,e6", "Bf2,c1", "Gf3,a2", "f2xf4", "f5xf3"],
            ),
        ),
        (
            "44-blitz-captures-both",
            play_moves(
                start(R44, Blitz, Player::P0),
                &["Gf2,e7", "Wb4,b1", "We3,e1", "f2xd4", "Gg2,a4", "Wb3,c1", "b4xb2"],
            ),
        ),
        (
            "48-standard-captures-both",
            play_moves(
                start(R48, Standard, Player::P0),
                &["Gf3,d8", "Wh2,a2", "Wd7,d1", "Wf4,f6", "f4xf2", "Wc3,g1", "Gf3,b6", "f3xf1"],
            ),
        ),
        ("61-blitz-start", start(R61, Blitz, Player::P0)),
        ("61-blitz-passed", play_moves(from_text(NOTHING_TO_DO), &["pass"])),
        ("61-standard-empty-pool", from_text(CYCLE)),
    ]
}

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("encoding-v{ENCODING_VERSION}.txt"))
}

fn golden_dump() -> String {
    let mut out = String::new();
    out.push_str("# ZERTZ observation encoding: golden file of tests/encoding.rs.\n");
    out.push_str("# Regenerate with ZERTZ_BLESS=1 cargo test -p zertz-env --test encoding\n");
    out.push_str(
        "# Per position: its text, each plane as H rows (row 0 first) of W cells, 1 where\n",
    );
    out.push_str("# the property holds, then the G globals with 4 decimals (see src/encode.rs).\n");
    let _ = writeln!(out, "encoding-version {ENCODING_VERSION}");
    out.push('\n');
    for (name, pos) in golden_positions() {
        dump(name, &pos, &mut out);
    }
    out
}

#[test]
fn golden_file_matches_the_encoding() {
    let path = golden_path();
    let now = golden_dump();
    if std::env::var("ZERTZ_BLESS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &now).unwrap();
        eprintln!("wrote {}", path.display());
        return;
    }
    let stored = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read the golden file {} ({e}); after a change of ENCODING_VERSION, write it \
             with ZERTZ_BLESS=1",
            path.display()
        )
    });
    let version = stored
        .lines()
        .find_map(|l| l.strip_prefix("encoding-version "))
        .expect("the golden file states its encoding version");
    assert_eq!(
        version.trim().parse::<u32>().ok(),
        Some(ENCODING_VERSION),
        "the golden file is for another encoding version"
    );
    if stored != now {
        let (a, b): (Vec<&str>, Vec<&str>) = (stored.lines().collect(), now.lines().collect());
        let i = a.iter().zip(&b).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
        let context = |v: &[&str]| v[i.saturating_sub(3)..(i + 3).min(v.len())].join("\n");
        panic!(
            "the encoding differs from {} at line {}:\n--- stored\n{}\n--- now\n{}\n\
             (an intended change bumps ENCODING_VERSION and is written with ZERTZ_BLESS=1)",
            path.display(),
            i + 1,
            context(&a),
            context(&b)
        );
    }
}

#[test]
fn golden_positions_cover_what_they_claim() {
    let positions = golden_positions();
    let boards: BTreeSet<Board> = positions.iter().map(|(_, p)| p.board()).collect();
    assert_eq!(boards.len(), Board::ALL.len(), "every board");
    assert!(positions.iter().any(|(_, p)| p.marble_set() == MarbleSet::Blitz));
    assert!(positions.iter().any(|(_, p)| p.chain().is_some()));
    assert!(positions.iter().any(|(_, p)| p.pool().total() == 0));
    assert!(positions.iter().any(|(_, p)| p.passes() == 1));
    assert!(positions.iter().any(|(_, p)| p.turn() == Player::P1));
    let both = |p: &Position| Player::ALL.iter().all(|&q| p.captures(q).total() > 0);
    assert!(positions.iter().filter(|(_, p)| both(p)).count() >= 3);
    for (name, pos) in &positions {
        assert!(!pos.is_over(), "{name} is over");
    }
}

// ------------------------------------------------------------------- hand-checked facts

#[test]
fn grid_shapes_are_the_documented_ones() {
    let shapes: Vec<(usize, usize, usize, usize)> = Board::ALL
        .iter()
        .map(|&b| {
            let s = Shape::of(b);
            (s.planes, s.height, s.width, s.globals)
        })
        .collect();
    assert_eq!(
        shapes,
        [(8, 7, 7, 20), (8, 8, 7, 20), (8, 8, 8, 20), (8, 8, 7, 20), (8, 8, 8, 20), (8, 9, 9, 20)]
    );
    assert_eq!((PLANES, GLOBALS), (8, 20));
}

#[test]
fn start_planes_of_every_board() {
    for v in Variant::all() {
        let pos = Position::new(v, Player::P0);
        let geo = pos.geometry();
        let (planes, _) = encode(&pos);
        let rings = v.board.rings();
        // Plane 0: the board shape; planes 1 and 2: every ring, all vacant; no marble, no chain.
        for k in [0, 1, 2] {
            assert_eq!(count_ones(&plane(&pos, &planes, k)), rings, "{v} plane {k}");
            assert_eq!(plane_bits(&pos, &planes, k), geo.all(), "{v} plane {k}");
        }
        for k in [3, 4, 5, 7] {
            assert_eq!(count_ones(&plane(&pos, &planes, k)), 0, "{v} plane {k}");
        }
        // Plane 6: the free rings of a full board are the edge rings (fewer than 6 neighbours).
        let edge = geo
            .rings()
            .filter(|&r| geo.neighbour_mask(r).count_ones() < 6)
            .fold(0, |acc, r| acc | r.bit());
        assert_eq!(plane_bits(&pos, &planes, 6), edge, "{v}");
        assert_eq!(count_ones(&plane(&pos, &planes, 6)), edge.count_ones() as usize, "{v}");
        // Every plane is 0 or 1.
        assert!(planes.iter().all(|&x| x == 0.0 || x == 1.0), "{v}");
    }
}

#[test]
fn start_of_37_rings_by_hand() {
    let pos = Position::new(Variant::default(), Player::P0);
    let geo = pos.geometry();
    let (planes, globals) = encode(&pos);
    // 37 rings in a 7x7 grid; the 18 rings of the edge are free.
    assert_eq!(count_ones(&plane(&pos, &planes, 0)), 37);
    assert_eq!(count_ones(&plane(&pos, &planes, 6)), 18);
    // Axial layout: d4 at the centre, a1 at row 3 column 0, d1 at row 0 column 3, g4 at row 3
    // column 6, a4 at row 6 column 0; the corners (0, 0) and (6, 6) are off the board.
    let at = |name: &str| geo.grid_index(geo.parse_ring(name).unwrap());
    assert_eq!(at("d4"), 3 * 7 + 3);
    assert_eq!(at("a1"), 3 * 7);
    assert_eq!(at("d1"), 3);
    assert_eq!(at("g4"), 3 * 7 + 6);
    assert_eq!(at("a4"), 6 * 7);
    let shape_plane = plane(&pos, &planes, 0);
    assert_eq!((shape_plane[0], shape_plane[48]), (0.0, 0.0));
    // Row 0 holds d1, e1, f1, g1: "0001111".
    assert_eq!(shape_plane[..7], [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
    // The free plane: the centre is not free, a1 is.
    let free = plane(&pos, &planes, 6);
    assert_eq!((free[at("d4")], free[at("a1")]), (0.0, 1.0));
    // Globals: full pool, no captures, every win set fully missing, no flags.
    let mut expected = [0.0f32; 20];
    expected[0..3].fill(1.0);
    expected[9..17].fill(1.0);
    assert_eq!(globals, expected);
}

#[test]
fn globals_of_an_empty_pool_position_by_hand() {
    // P0 to move holds 0/4/5, P1 holds 3/2/5; the pool is empty.
    let pos = from_text(EMPTY_POOL);
    let (planes, g) = encode(&pos);
    let expected = [
        0.0,
        0.0,
        0.0, // pool
        0.0,
        0.8,
        5.0 / 6.0, // own captures: 0/4, 4/5, 5/6
        0.75,
        0.4,
        5.0 / 6.0, // opponent: 3/4, 2/5, 5/6
        1.0,
        0.2,
        1.0 / 6.0,
        3.0 / 9.0, // own missing: 4/4, 1/5, 1/6, (3+0+0)/9
        0.25,
        0.6,
        1.0 / 6.0,
        1.0 / 9.0, // opponent missing: 1/4, 3/5, 1/6, (0+1+0)/9
        1.0,
        0.0,
        0.0, // empty pool, no chain, no pass
    ];
    for (i, (&a, &b)) in g.iter().zip(&expected).enumerate() {
        assert!((a - b).abs() < 1e-6, "global {i}: {a} != {b}");
    }
    // Seen from P1 (after P0's move), own and opponent swap.
    let q = play_moves(pos, &["Gc2,a4"]);
    let (_, h) = encode(&q);
    // P0 now holds 0/3/5 and P1 3/2/5: P1's own captures come first.
    assert_eq!(h[3..6], [0.75, 0.4, 5.0 / 6.0]);
    assert_eq!(h[6..9], [0.0, 0.6, 5.0 / 6.0]);
    assert_eq!(h[17], 1.0);
    // Planes: 5 marbles (w a1, g b5, w d4, g f1, w g4) on 37 rings, none removed.
    assert_eq!(count_ones(&plane(&pos, &planes, 1)), 37);
    assert_eq!(count_ones(&plane(&pos, &planes, 2)), 32);
    assert_eq!(count_ones(&plane(&pos, &planes, 3)), 3);
    assert_eq!(count_ones(&plane(&pos, &planes, 4)), 2);
    assert_eq!(count_ones(&plane(&pos, &planes, 5)), 0);
    // 14 free rings (rules.rs counts them the same way).
    assert_eq!(count_ones(&plane(&pos, &planes, 6)), 14);
}

#[test]
fn blitz_scales_by_the_blitz_set() {
    // 40 blitz: 5/7/9 marbles, wins 3/4/5 or 2 of each.
    let pos = play_moves(
        Position::new(Variant::new(Board::R40, MarbleSet::Blitz), Player::P0),
        &["Wd4,a1"],
    );
    let (_, g) = encode(&pos);
    assert_eq!(g[0..3], [4.0 / 5.0, 1.0, 1.0]);
    assert!(g[3..9].iter().all(|&x| x == 0.0));
    assert!(g[9..17].iter().all(|&x| x == 1.0));
}

#[test]
fn chain_plane_and_flag() {
    let pos = play_actions(from_text(DIAGRAM_3), &["d4xd2"]);
    let geo = pos.geometry();
    let d2 = geo.parse_ring("d2").unwrap();
    assert_eq!(pos.chain(), Some(d2));
    let (planes, g) = encode(&pos);
    let chain = plane(&pos, &planes, 7);
    assert_eq!(count_ones(&chain), 1);
    assert_eq!(chain[geo.grid_index(d2)], 1.0);
    assert_eq!((g[17], g[18], g[19]), (0.0, 1.0, 0.0));
    // P0 (to move) has captured one grey: 1/5.
    assert_eq!(g[3..9], [0.0, 0.2, 0.0, 0.0, 0.0, 0.0]);
    // The white that jumped from d4 over the grey on d3 now stands on d2.
    assert_eq!(plane(&pos, &planes, 3)[geo.grid_index(d2)], 1.0);
    assert_eq!(plane(&pos, &planes, 3)[geo.grid_index(geo.parse_ring("d4").unwrap())], 0.0);
}

#[test]
fn pass_flag_after_a_pass_only() {
    let pos = from_text(NOTHING_TO_DO);
    assert_eq!(encode(&pos).1[19], 0.0);
    let q = play_moves(pos, &["pass"]);
    assert_eq!(q.passes(), 1);
    let (_, g) = encode(&q);
    assert_eq!((g[17], g[18], g[19]), (1.0, 0.0, 1.0));
}

// ------------------------------------------------------------------------------- symmetries

#[test]
fn symmetry_action_maps_are_permutations_undone_by_the_inverse() {
    for b in Board::ALL {
        let space = ActionSpace::new(b);
        for s in symmetries(b) {
            let inv = s.inverse();
            assert_eq!(inv.inverse().index(), s.index(), "{b} symmetry {}", s.index());
            let (map, back) = (s.action_map(), inv.action_map());
            assert_eq!(map.len(), space.len());
            let mut seen = vec![false; space.len()];
            for (i, &j) in map.iter().enumerate() {
                let j = j as usize;
                assert!(!seen[j], "{b} symmetry {}: index {j} hit twice", s.index());
                seen[j] = true;
                assert_eq!(back[j] as usize, i, "{b} symmetry {} index {i}", s.index());
                let a = space.decode(i).unwrap();
                assert_eq!(space.index(&s.apply_action(&a)), j);
                assert_eq!(inv.apply_action(&s.apply_action(&a)), a);
            }
            assert_eq!(map[space.pass_index()] as usize, space.pass_index());
            if s.index() == 0 {
                assert!(map.iter().enumerate().all(|(i, &j)| i == j as usize));
            }
        }
    }
}

/// Every check of one symmetry on one position.
fn check_symmetries(seed: u64, pos: &Position, rng: &mut Rng) {
    let ctx = |s: usize| format!("seed {seed:#x}, symmetry {s}, position {}", pos.to_text());
    let (planes, globals) = encode(pos);
    let m = mask(pos);
    let legal = pos.legal_actions();
    let space = pos.action_space();
    let moves = pos.count_legal_moves();
    for s in symmetries(pos.board()) {
        let c = || ctx(s.index());
        let inv = s.inverse();
        let t = s.apply_position(pos);
        assert_eq!(t.hash(), t.compute_hash(), "{}", c());
        assert_eq!(inv.apply_position(&t), *pos, "{}", c());
        assert_eq!(t.is_over(), pos.is_over(), "{}", c());
        assert_eq!(t.outcome(), pos.outcome(), "{}", c());
        assert_eq!(t.count_legal_actions(), pos.count_legal_actions(), "{}", c());
        assert_eq!(t.count_legal_moves(), moves, "{}", c());

        // Encoding: planes move with the symmetry, globals do not change.
        let (tp, tg) = encode(&t);
        let mut moved = vec![f32::NAN; planes.len()];
        s.apply_to_planes(&planes, &mut moved);
        assert_eq!(tp, moved, "planes: {}", c());
        assert_eq!(tg, globals, "globals: {}", c());
        let mut back = vec![f32::NAN; planes.len()];
        inv.apply_to_planes(&moved, &mut back);
        assert_eq!(back, planes, "inverse on planes: {}", c());

        // Legal masks.
        let tm = mask(&t);
        let mut moved_mask = vec![false; m.len()];
        s.apply_to_actions(&m, &mut moved_mask);
        assert_eq!(tm, moved_mask, "mask: {}", c());
        let mut back_mask = vec![true; m.len()];
        inv.apply_to_actions(&moved_mask, &mut back_mask);
        assert_eq!(back_mask, m, "inverse on masks: {}", c());

        // Actions: legal to legal, the index map agrees, inverse undoes.
        let map = s.action_map();
        for a in &legal {
            let ta = s.apply_action(a);
            assert_eq!(map[space.index(a)] as usize, space.index(&ta), "{}", c());
            assert!(tm[space.index(&ta)], "{a:?} maps to illegal {ta:?}: {}", c());
            assert_eq!(inv.apply_action(&ta), *a, "{}", c());
        }
        // Playing commutes with the symmetry (every action when there are few, else a sample).
        let sample: Vec<&Action> = if legal.len() <= 16 {
            legal.iter().collect()
        } else {
            (0..16).map(|_| &legal[rng.below(legal.len())]).collect()
        };
        for a in sample {
            let ta = s.apply_action(a);
            assert!(t.is_legal_action(&ta), "{a:?} -> {ta:?}: {}", c());
            let after = pos.play_action(a).expect("legal");
            let image = s.apply_position(&after);
            let played = t.play_action(&ta).expect("the image of a legal action is legal");
            assert_eq!(played, image, "play {a:?} then transform: {}", c());
            assert_eq!(played.hash(), image.hash(), "{}", c());
            assert_eq!(played.hash(), played.compute_hash(), "{}", c());
        }
    }
}

#[test]
fn symmetries_commute_with_encoding_masks_and_play() {
    let mut checked = 0;
    let mut chains = 0;
    let mut empty_pool = 0;
    for v in Variant::all() {
        let games = if v.board == Board::R61 { 4 } else { 8 };
        for (seed, pos) in random_positions(v, games, 1) {
            let mut rng = Rng(seed ^ pos.hash());
            check_symmetries(seed, &pos, &mut rng);
            checked += 1;
            chains += pos.chain().is_some() as usize;
            empty_pool += (pos.pool().total() == 0) as usize;
        }
    }
    // The sample is not degenerate.
    assert!(checked > 500, "{checked} positions");
    assert!(chains > 5, "{chains} chain positions");
    assert!(empty_pool > 10, "{empty_pool} positions with an empty pool");
}

/// The golden positions and a few more that random play seldom reaches: only a pass is legal,
/// a game drawn by passing, several chains to choose from.
fn special_positions() -> Vec<(&'static str, Position)> {
    let mut out = golden_positions();
    out.push(("61-blitz-nothing-to-do", from_text(NOTHING_TO_DO)));
    out.push(("61-blitz-drawn", play_moves(from_text(NOTHING_TO_DO), &["pass", "pass"])));
    out.push(("37-standard-diagram-3", from_text(DIAGRAM_3)));
    out.push(("61-standard-cycle-capture", play_moves(from_text(CYCLE), &["Be5", "Be3"])));
    out
}

#[test]
fn symmetries_of_special_positions() {
    for (i, (_, pos)) in special_positions().iter().enumerate() {
        check_symmetries(i as u64, pos, &mut Rng(i as u64));
    }
}

#[test]
fn symmetric_positions_have_symmetric_masks_and_identical_encodings() {
    // On the 37-ring board a single marble on d4 (the centre) is fixed by all 12 symmetries: the
    // encoding and the mask are invariant, and the orbit of a1 is the six corners.
    let pos = play_moves(Position::new(Variant::default(), Player::P0), &["Wd4,a1"]);
    let geo = pos.geometry();
    let d4 = geo.parse_ring("d4").unwrap();
    let a1 = geo.parse_ring("a1").unwrap();
    let mut orbit = BTreeSet::new();
    for s in symmetries(Board::R37) {
        assert_eq!(s.ring(d4), d4);
        orbit.insert(geo.name(s.ring(a1)).to_string());
    }
    let corners: BTreeSet<String> =
        ["a1", "a4", "d1", "d7", "g1", "g4"].iter().map(|s| s.to_string()).collect();
    assert_eq!(orbit, corners);
    // The symmetries that fix a1 (identity and one reflection) fix the position.
    let fixing: Vec<usize> =
        symmetries(Board::R37).iter().filter(|s| s.ring(a1) == a1).map(|s| s.index()).collect();
    assert_eq!(fixing.len(), 2);
    for &i in &fixing {
        let s = &symmetries(Board::R37)[i];
        assert_eq!(s.apply_position(&pos), pos);
        let m = mask(&pos);
        let mut moved = vec![false; m.len()];
        s.apply_to_actions(&m, &mut moved);
        assert_eq!(moved, m);
    }
}

// ----------------------------------------------------------------------------- action space

/// Every check of the action space on one position.
fn check_action_space(seed: u64, pos: &Position) {
    let ctx = || format!("seed {seed:#x}, position {}", pos.to_text());
    let space = pos.action_space();
    assert_eq!(space.board(), pos.board());
    let m = mask(pos);
    assert_eq!(m.len(), space.len(), "{}", ctx());
    let legal = pos.legal_actions();
    let ones: Vec<usize> = (0..m.len()).filter(|&i| m[i]).collect();
    assert_eq!(ones.len(), pos.count_legal_actions(), "{}", ctx());
    assert_eq!(ones.len(), legal.len(), "{}", ctx());
    let from_actions: BTreeSet<usize> = legal.iter().map(|a| space.index(a)).collect();
    assert_eq!(from_actions.len(), legal.len(), "two legal actions share an index: {}", ctx());
    assert_eq!(ones.iter().copied().collect::<BTreeSet<_>>(), from_actions, "{}", ctx());
    let mut visited = Vec::new();
    pos.for_each_legal_index(|i| visited.push(i));
    assert_eq!(visited.iter().copied().collect::<BTreeSet<_>>(), from_actions, "{}", ctx());
    assert_eq!(visited.len(), legal.len(), "{}", ctx());
    // Increasing within each kind (placements, hops, pass), as documented.
    let kind = |i: usize| (i >= space.hops_start()) as u8 + (i == space.pass_index()) as u8;
    for w in visited.windows(2) {
        assert!(kind(w[0]) != kind(w[1]) || w[0] < w[1], "order {w:?}: {}", ctx());
    }
    // nth_legal_action walks legal_actions without listing them.
    for (k, a) in legal.iter().enumerate() {
        assert_eq!(pos.nth_legal_action(k), Some(*a), "k = {k}: {}", ctx());
    }
    assert_eq!(pos.nth_legal_action(legal.len()), None, "{}", ctx());
    // The mask is overwritten, not or-ed into.
    let mut dirty = vec![true; space.len()];
    pos.legal_action_mask(&mut dirty);
    assert_eq!(dirty, m, "{}", ctx());
    let pass_only = legal == [Action::Pass];
    assert_eq!(m[space.pass_index()], pass_only, "{}", ctx());
    for (i, &legal_here) in m.iter().enumerate() {
        let a = space.decode(i).expect("every index decodes");
        assert_eq!(space.index(&a), i);
        assert_eq!(pos.is_legal_action(&a), legal_here, "index {i} {a:?}: {}", ctx());
        if legal_here {
            let after = pos.play_action(&a);
            assert!(after.is_ok(), "index {i} {a:?}: {}", ctx());
        }
    }
    // Placements come first, then hops, then the pass.
    for &i in &ones {
        let kind = match space.decode(i).unwrap() {
            Action::Place(_) => i < space.hops_start(),
            Action::Hop(_) => i >= space.hops_start() && i < space.pass_index(),
            Action::Pass => i == space.pass_index(),
        };
        assert!(kind, "index {i}: {}", ctx());
    }
}

#[test]
fn action_space_sizes() {
    let sizes: Vec<usize> = Board::ALL.iter().map(|&b| ActionSpace::new(b).len()).collect();
    assert_eq!(sizes, [4441, 5161, 5935, 6205, 7345, 11713]);
    for b in Board::ALL {
        let space = ActionSpace::new(b);
        let r = b.rings();
        assert_eq!(space.len(), 3 * r * (r + 1) + 6 * r + 1);
        assert_eq!(space.pass_index(), space.len() - 1);
        assert_eq!(space.decode(space.pass_index()), Some(Action::Pass));
        assert_eq!(space.decode(space.len()), None);
        assert!(!space.is_empty());
    }
}

#[test]
fn masks_agree_with_legal_actions_on_random_positions() {
    let mut checked = 0;
    let mut over = 0;
    let mut empty_pool = 0;
    for v in Variant::all() {
        for (seed, pos) in random_positions(v, 4, 2) {
            check_action_space(seed, &pos);
            checked += 1;
            over += pos.is_over() as usize;
            empty_pool += (pos.pool().total() == 0) as usize;
        }
    }
    assert!(checked > 200, "{checked} positions");
    assert!(over > 10, "{over} finished positions");
    assert!(empty_pool > 10, "{empty_pool} positions with an empty pool");
}

#[test]
fn masks_of_special_positions() {
    let mut pass_only = 0;
    for (i, (name, pos)) in special_positions().iter().enumerate() {
        check_action_space(i as u64, pos);
        if pos.legal_actions() == [Action::Pass] {
            pass_only += 1;
            let m = mask(pos);
            assert_eq!(m.iter().filter(|&&x| x).count(), 1, "{name}");
            assert!(m[pos.action_space().pass_index()], "{name}");
        }
    }
    assert_eq!(pass_only, 2, "61-blitz-passed and 61-blitz-nothing-to-do");
}

#[test]
fn finished_games_have_empty_masks() {
    // Two passes in a row: a draw.
    let pos = play_moves(from_text(NOTHING_TO_DO), &["pass", "pass"]);
    assert!(pos.is_over());
    let m = mask(&pos);
    assert!(m.iter().all(|&x| !x));
    assert_eq!(pos.count_legal_actions(), 0);
    assert!(!pos.is_legal_action(&Action::Pass));
}

// --------------------------------------------------------------------------- encode buffers

#[test]
fn encode_writes_every_element() {
    for v in Variant::all() {
        for (seed, pos) in random_positions(v, 2, 5) {
            // `encode` fills both buffers with NaN first: none may be left.
            let (planes, globals) = encode(&pos);
            let nans = planes.iter().chain(&globals).filter(|x| x.is_nan()).count();
            assert_eq!(nans, 0, "seed {seed:#x} {}", pos.to_text());
            assert!(
                planes.iter().all(|&x| x == 0.0 || x == 1.0),
                "seed {seed:#x} {}",
                pos.to_text()
            );
            assert!(
                globals.iter().all(|&x| (0.0..=1.0).contains(&x)),
                "seed {seed:#x} {}: {globals:?}",
                pos.to_text()
            );
            // Re-encoding into buffers holding another position's values gives the same result.
            let mut p2 = vec![1.0; planes.len()];
            let mut g2 = vec![0.5; globals.len()];
            pos.encode(&mut p2, &mut g2);
            assert_eq!((p2, g2), (planes, globals));
        }
    }
}

#[test]
#[should_panic(expected = "planes buffer")]
fn encode_panics_on_a_short_planes_buffer() {
    let pos = Position::new(Variant::default(), Player::P0);
    let shape = Shape::of(pos.board());
    let mut planes = vec![0.0; shape.planes_len() - 1];
    let mut globals = vec![0.0; GLOBALS];
    pos.encode(&mut planes, &mut globals);
}

#[test]
#[should_panic(expected = "planes buffer")]
fn encode_panics_on_a_planes_buffer_of_another_board() {
    let pos = Position::new(Variant::default(), Player::P0);
    let shape = Shape::of(Board::R61);
    let mut planes = vec![0.0; shape.planes_len()];
    let mut globals = vec![0.0; GLOBALS];
    pos.encode(&mut planes, &mut globals);
}

#[test]
#[should_panic(expected = "globals buffer")]
fn encode_panics_on_a_long_globals_buffer() {
    let pos = Position::new(Variant::default(), Player::P0);
    let shape = Shape::of(pos.board());
    let mut planes = vec![0.0; shape.planes_len()];
    let mut globals = vec![0.0; GLOBALS + 1];
    pos.encode(&mut planes, &mut globals);
}

#[test]
#[should_panic(expected = "mask length")]
fn mask_panics_on_a_wrong_length() {
    let pos = Position::new(Variant::default(), Player::P0);
    let mut m = vec![false; pos.action_space().len() + 1];
    pos.legal_action_mask(&mut m);
}

#[test]
fn each_player_observes_from_its_own_side() {
    for v in Variant::all() {
        for (_, pos) in random_positions(v, 2, 5) {
            let shape = Shape::of(pos.board());
            let (mover_planes, mover_globals) = encode(&pos);
            let mut planes = vec![0.0; shape.planes_len()];
            let mut globals = vec![0.0; GLOBALS];
            pos.encode_as(pos.turn(), &mut planes, &mut globals);
            assert_eq!((&planes, &globals), (&mover_planes, &mover_globals));
            pos.encode_as(!pos.turn(), &mut planes, &mut globals);
            // The board is the same for both; own and opponent swap; the pass flag is the mover's.
            assert_eq!(planes, mover_planes);
            assert_eq!(globals[..3], mover_globals[..3]);
            assert_eq!(
                (&globals[3..6], &globals[6..9]),
                (&mover_globals[6..9], &mover_globals[3..6])
            );
            assert_eq!(
                (&globals[9..13], &globals[13..17]),
                (&mover_globals[13..17], &mover_globals[9..13])
            );
            assert_eq!(globals[17..19], mover_globals[17..19]);
            assert_eq!(globals[19], 0.0);
        }
    }
}
