//! One test (or a few) per rule of `shared/rules/rulebook-en.md` and `shared/rules/decisions.md`.
//!
//! Every position is written in the text format of `zertz_env::setup`, every move in the
//! notation of `zertz_env::notation`; the tests assert the exact legal moves, captures and
//! outcomes that the rules give. Ring names and the six directions are those of
//! `shared/rules/boards.md`.

use zertz_env::{
    Action, Board, ByMarble, Game, GameError, MarbleSet, Move, MoveError, Outcome, Player,
    Position, Variant,
};

// ----------------------------------------------------------------------------------------- helpers

/// Parses a position and checks that its text is canonical (round trip).
fn pos(text: &str) -> Position {
    let p = Position::from_text(text).unwrap_or_else(|e| panic!("bad position {text:?}: {e}"));
    assert_eq!(p.to_text(), text, "position text does not round-trip");
    p
}

/// The legal whole-turn moves in notation, sorted. Checks the move generator's own consistency on
/// the way (count, legality of every generated move, no duplicates).
fn moves(p: &Position) -> Vec<String> {
    let ms = p.legal_moves();
    assert_eq!(p.count_legal_moves(), ms.len() as u64, "count_legal_moves in {p:?}");
    for m in &ms {
        assert!(p.is_legal_move(m), "generated move {} is not legal", p.move_to_string(m));
    }
    let mut v: Vec<String> = ms.iter().map(|m| p.move_to_string(m)).collect();
    v.sort();
    let n = v.len();
    v.dedup();
    assert_eq!(v.len(), n, "duplicate moves in {p:?}");
    v
}

/// The legal single actions in notation, sorted.
fn actions(p: &Position) -> Vec<String> {
    let mut v: Vec<String> = p.legal_actions().iter().map(|a| p.action_to_string(a)).collect();
    v.sort();
    v
}

/// Sorted owned strings.
fn strs(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// Plays a legal move given in notation; checks hash and text of the result.
fn play(p: &Position, text: &str) -> Position {
    let m = p.parse_legal_move(text).unwrap_or_else(|e| panic!("{text} in {p:?}: {e}"));
    let q = p.play(&m).unwrap_or_else(|e| panic!("{text} in {p:?}: {e}"));
    assert_eq!(q.hash(), q.compute_hash(), "incremental hash after {text}");
    assert_eq!(Position::from_text(&q.to_text()).as_ref(), Ok(&q), "text of the result of {text}");
    q
}

/// Plays a single legal action given in notation.
fn act(p: &Position, text: &str) -> Position {
    let a = p.parse_legal_action(text).unwrap_or_else(|e| panic!("{text} in {p:?}: {e}"));
    let q = p.play_action(&a).unwrap_or_else(|e| panic!("{text} in {p:?}: {e}"));
    assert_eq!(q.hash(), q.compute_hash(), "incremental hash after {text}");
    q
}

/// Asserts that a syntactically valid move is illegal, and that `play` hands the position back.
fn assert_illegal(p: &Position, text: &str) {
    let m = p.parse_move(text).unwrap_or_else(|e| panic!("{text} does not parse: {e}"));
    assert!(!p.is_legal_move(&m), "{text} should be illegal in {p:?}");
    assert_eq!(p.parse_legal_move(text), Err(MoveError::Illegal(text.to_string())));
    let err = p.play(&m).expect_err(text);
    assert_eq!(*err.position, *p, "play({text}) must hand the position back unchanged");
}

/// Names of the free rings, in ring order (column by column from A1).
fn free(p: &Position) -> Vec<String> {
    let g = p.geometry();
    g.rings().filter(|r| p.free_rings() & r.bit() != 0).map(|r| g.name(r).to_string()).collect()
}

fn caps(p: &Position, player: Player) -> [u8; 3] {
    p.captures(player).0
}

fn ring_count(p: &Position) -> u32 {
    p.rings().count_ones()
}

fn marble_count(p: &Position) -> u32 {
    p.occupied().count_ones()
}

fn has_ring(p: &Position, name: &str) -> bool {
    p.has_ring(p.geometry().parse_ring(name).unwrap_or_else(|| panic!("no ring {name}")))
}

/// Every placement of the colours `colours` on each ring of `at`, each followed by `remove`
/// (`""` for no removal), in notation.
fn placements(colours: &str, at: &[&str], remove: &str) -> Vec<String> {
    let mut v = Vec::new();
    for c in colours.chars() {
        for a in at {
            if remove.is_empty() {
                v.push(format!("{c}{a}"));
            } else {
                v.push(format!("{c}{a},{remove}"));
            }
        }
    }
    v.sort();
    v
}

// ------------------------------------------------------------------------------------------ set-up

#[test]
fn start_positions_have_full_pools_and_blitz_has_5_7_9() {
    let blitz = Position::new(Variant::new(Board::R37, MarbleSet::Blitz), Player::P0);
    assert_eq!(blitz.pool(), ByMarble([5, 7, 9]));
    assert_eq!(
        blitz.to_text(),
        "37 blitz ..../...../....../......./....../...../.... 5/7/9 0/0/0 0/0/0 P0 - 0"
    );
    assert_eq!(pos(&blitz.to_text()), blitz);
    for v in Variant::all() {
        let p = Position::new(v, Player::P1);
        let want = match v.marbles {
            MarbleSet::Standard => ByMarble([6, 8, 10]),
            MarbleSet::Blitz => ByMarble([5, 7, 9]),
        };
        assert_eq!(p.pool(), want, "{v}");
        assert_eq!(p.supply(), want, "{v}");
        assert_eq!(ring_count(&p) as usize, v.board.rings());
        assert_eq!(marble_count(&p), 0);
        assert_eq!(p.turn(), Player::P1);
        assert_eq!(p.outcome(), None);
    }
}

#[test]
fn illegal_moves_hand_the_position_back_unchanged() {
    let p = Position::new(Variant::default(), Player::P0);
    // Removing the ring just placed on, a ring that is not free, a missing removal, a jump
    // without marbles, a pass with marbles in the pool.
    for text in ["Wd4,d4", "Wa1,d4", "Wd4", "d4xd6", "pass", "Wa1,a1"] {
        assert_illegal(&p, text);
    }
    let err = p.play(&p.parse_move("Wd4,d4").unwrap()).unwrap_err();
    assert_eq!(err.notation, "Wd4,d4");
    assert_eq!(*err.position, p);
    // Single actions too.
    let a = p.parse_action("Wd4").unwrap();
    let err = p.play_action(&a).unwrap_err();
    assert_eq!(*err.position, p);
    assert_eq!(err.notation, "Wd4");
    // A game keeps its position and move list.
    let mut game = Game::from_position(p);
    assert!(game.play(&p.parse_move("Wd4,d4").unwrap()).is_err());
    assert!(matches!(game.play_str("Wd4,c3"), Err(GameError::Move(MoveError::Illegal(_)))));
    assert_eq!(*game.position(), p);
    assert!(game.moves().is_empty());
    // Unknown rings are parse errors, not illegal moves.
    assert!(matches!(p.parse_legal_move("Wh1,a1"), Err(MoveError::Parse(_))));
}

// ------------------------------------------------------------------------- decisions 1: free ring

#[test]
fn every_board_starts_with_its_edge_rings_free() {
    let edges: [(Board, &[&str]); 6] = [
        (
            Board::R37,
            &[
                "a1", "a2", "a3", "a4", "b1", "b5", "c1", "c6", "d1", "d7", "e1", "e6", "f1", "f5",
                "g1", "g2", "g3", "g4",
            ],
        ),
        (
            Board::R40,
            &[
                "a1", "a2", "a3", "a4", "a5", "b1", "b6", "c1", "c7", "d1", "d7", "e1", "e6", "f1",
                "f5", "g1", "g2", "g3", "g4",
            ],
        ),
        (
            Board::R43,
            &[
                "a1", "a2", "a3", "a4", "a5", "b1", "b6", "c1", "c7", "d1", "d7", "e1", "e6", "f1",
                "f5", "g1", "g4", "h1", "h2", "h3",
            ],
        ),
        (
            Board::R44,
            &[
                "a1", "a2", "a3", "a4", "a5", "b1", "b6", "c1", "c7", "d1", "d8", "e1", "e7", "f1",
                "f6", "g1", "g2", "g3", "g4", "g5",
            ],
        ),
        (
            Board::R48,
            &[
                "a1", "a2", "a3", "a4", "a5", "b1", "b6", "c1", "c7", "d1", "d8", "e1", "e7", "f1",
                "f6", "g1", "g5", "h1", "h2", "h3", "h4",
            ],
        ),
        (
            Board::R61,
            &[
                "a1", "a2", "a3", "a4", "a5", "b1", "b6", "c1", "c7", "d1", "d8", "e1", "e9", "f1",
                "f8", "g1", "g7", "h1", "h6", "i1", "i2", "i3", "i4", "i5",
            ],
        ),
    ];
    for (board, edge) in edges {
        let p = Position::new(Variant::new(board, MarbleSet::Standard), Player::P0);
        assert_eq!(free(&p), strs(edge), "{board}-ring board");
        // 3 colours; on a free ring: the other free rings; elsewhere: every free ring.
        let (f, n) = (edge.len(), board.rings());
        assert_eq!(moves(&p).len(), 3 * (f * (f - 1) + (n - f) * f), "{board}-ring board");
    }
}

#[test]
fn a_free_ring_needs_two_adjacent_missing_neighbours() {
    // 37 rings without d5, e3 and c3 (directions 0, 2 and 4 around d4); a white marble on a1.
    let p =
        pos("37 standard w.../...../..-.../....-../..-.../...../.... 5/8/10 0/0/0 0/0/0 P0 - 0");
    // d4 misses three neighbours, no two of them next to each other; c4, e4 and d3 miss two
    // that are not next to each other: none of them can be slid out. a1 carries a marble.
    assert_eq!(
        free(&p),
        strs(&[
            "a2", "a3", "a4", "b1", "b5", "c1", "c6", "d1", "d7", "e1", "e6", "f1", "f5", "g1",
            "g2", "g3", "g4",
        ])
    );
    for text in ["Wa2,d4", "Wa2,c4", "Wa2,e4", "Wa2,d3", "Wa2,a1", "Wa1,a2"] {
        assert_illegal(&p, text);
    }
    play(&p, "Wd4,a2");

    // Without e4 as well, d4 misses d5, e4 and e3 (directions 0, 1, 2): free. e5 (missing e4 and
    // d5, directions 3 and 4) and f3 (missing e3 and e4, directions 4 and 5) become free too.
    let q =
        pos("37 standard w.../...../..-.../....-../..--../...../.... 5/8/10 0/0/0 0/0/0 P0 - 0");
    assert_eq!(
        free(&q),
        strs(&[
            "a2", "a3", "a4", "b1", "b5", "c1", "c6", "d1", "d4", "d7", "e1", "e5", "e6", "f1",
            "f3", "f5", "g1", "g2", "g3", "g4",
        ])
    );
    let r = play(&q, "Wa2,d4");
    assert!(!has_ring(&r, "d4"));
    assert_illegal(&q, "Wa2,c4");
}

#[test]
fn a_ring_on_the_edge_is_not_free_by_that_alone() {
    // 61 rings without the corner e1: e2 now touches the outside, but through one gap only.
    let p = pos(
        "61 standard ...../....../......./......../-......../......../......./....../..... 6/8/10 0/0/0 0/0/0 P0 - 0",
    );
    assert_eq!(
        free(&p),
        strs(&[
            "a1", "a2", "a3", "a4", "a5", "b1", "b6", "c1", "c7", "d1", "d8", "e9", "f1", "f8",
            "g1", "g7", "h1", "h6", "i1", "i2", "i3", "i4", "i5",
        ])
    );
    assert_illegal(&p, "Ge5,e2");
    let q = play(&p, "Ge5,d1");
    // Without d1 too, e2 misses e1 and d1 (directions 3 and 4): now it can be slid out.
    assert!(free(&q).contains(&"e2".to_string()));
    play(&q, "Be6,e2");
    // Without e1 and e3 (directions 3 and 0, opposite), e2 touches the outside on two sides that
    // are not next to each other: not free either.
    let r = pos(
        "61 standard ...../....../......./......../-.-....../......../......./....../..... 6/8/10 0/0/0 0/0/0 P0 - 0",
    );
    assert!(!free(&r).contains(&"e2".to_string()));
    assert!(free(&r).contains(&"d1".to_string()));
    assert_illegal(&r, "Ge5,e2");
}

#[test]
fn without_a_free_ring_the_placement_ends_the_turn() {
    // Every edge ring of the 37-ring board carries a marble; the 19 inner rings are vacant and
    // have six neighbours each: no ring is free, and no marble can jump.
    let p = pos("37 standard wgbw/g...b/w....g/b.....w/g....b/b...g/bbbg 2/2/2 0/0/0 0/0/0 P1 - 0");
    assert!(free(&p).is_empty());
    let inner = [
        "b2", "b3", "b4", "c2", "c3", "c4", "c5", "d2", "d3", "d4", "d5", "d6", "e2", "e3", "e4",
        "e5", "f2", "f3", "f4",
    ];
    assert_eq!(moves(&p), placements("WGB", &inner, ""));
    assert_illegal(&p, "Wd4,b2");
    assert_illegal(&p, "Wd4,a1");
    let q = play(&p, "Wd4");
    assert_eq!(q.rings(), p.rings());
    assert_eq!(q.pool(), ByMarble([1, 2, 2]));
    assert_eq!(q.turn(), Player::P0);
}

#[test]
fn placing_on_the_only_free_ring_leaves_nothing_to_remove() {
    // As above without a1 and b1: b2 misses b1 and a1 (directions 3 and 4) and is the only free
    // ring.
    let p = pos("37 standard -gbw/-...b/w....g/b.....w/g....b/b...g/bbwg 2/3/3 0/0/0 0/0/0 P0 - 0");
    assert_eq!(free(&p), ["b2"]);
    let others = [
        "b3", "b4", "c2", "c3", "c4", "c5", "d2", "d3", "d4", "d5", "d6", "e2", "e3", "e4", "e5",
        "f2", "f3", "f4",
    ];
    let mut want = placements("WGB", &["b2"], "");
    want.extend(placements("WGB", &others, "b2"));
    want.sort();
    assert_eq!(moves(&p), want);
    assert_illegal(&p, "Wd4");
    assert_illegal(&p, "Wb2,d4");
    let q = play(&p, "Wb2");
    assert_eq!(q.rings(), p.rings());
    assert!(free(&q).is_empty());
    let r = play(&p, "Wd4,b2");
    assert_eq!(ring_count(&r), ring_count(&p) - 1);
    assert!(!has_ring(&r, "b2"));
}

// ------------------------------------------------------------------------- decisions 2: isolation

#[test]
fn removing_the_last_link_of_a_full_group_claims_it() {
    // 43 rings: h1, h2, h3 (white, grey, black) hang on the rest only by g2, which is free
    // (g1 and f2 are gone: directions 3 and 4).
    let p = pos(
        "43 standard ...../....../......./......./....../.-.../-.--/wgb 5/7/9 0/0/0 0/0/0 P0 - 0",
    );
    assert!(free(&p).contains(&"g2".to_string()));
    let q = play(&p, "Bd4,g2");
    assert_eq!(caps(&q, Player::P0), [1, 1, 1]);
    assert_eq!(caps(&q, Player::P1), [0, 0, 0]);
    for r in ["g2", "h1", "h2", "h3"] {
        assert!(!has_ring(&q, r), "{r}");
    }
    assert_eq!(ring_count(&q), ring_count(&p) - 4);
    assert_eq!(marble_count(&q), 1, "only the black on d4 is left");
    assert_eq!(q.pool(), ByMarble([5, 7, 8]));
    assert_eq!(q.outcome(), None);
    // Any other removal leaves the group alone.
    let r = play(&p, "Bd4,a1");
    assert_eq!(caps(&r, Player::P0), [0, 0, 0]);
    assert_eq!(marble_count(&r), 4);
}

#[test]
fn an_isolated_group_with_a_vacant_ring_stays_until_it_is_filled() {
    // As above, but h2 is vacant.
    let p = pos(
        "43 standard ...../....../......./......./....../.-.../-.--/w.b 5/8/9 0/0/0 0/0/0 P0 - 0",
    );
    let q = play(&p, "Bd4,g2");
    assert_eq!(caps(&q, Player::P0), [0, 0, 0]);
    for r in ["h1", "h2", "h3"] {
        assert!(has_ring(&q, r), "{r}");
    }
    assert_eq!(marble_count(&q), 3);
    assert_eq!(
        q.to_text(),
        "43 standard ...../....../......./...b.../....../.-.../----/w.b 5/8/8 0/0/0 0/0/0 P1 - 0"
    );
    // The next placement on h2 (the group's last vacant ring) claims the whole group, the placed
    // marble included, for the player who places.
    let r = play(&q, "Gh2,a1");
    assert_eq!(caps(&r, Player::P1), [1, 1, 1]);
    assert_eq!(caps(&r, Player::P0), [0, 0, 0]);
    for ring in ["h1", "h2", "h3", "a1"] {
        assert!(!has_ring(&r, ring), "{ring}");
    }
    assert_eq!(ring_count(&r), ring_count(&q) - 4);
    // Removing h2 instead leaves h1 and h3 as two single occupied rings: both are claimed.
    let s = play(&q, "Gd5,h2");
    assert_eq!(caps(&s, Player::P1), [1, 0, 1]);
    assert_eq!(ring_count(&s), ring_count(&q) - 3);
    assert_eq!(marble_count(&s), 2, "the black on d4 and the grey on d5");
}

#[test]
fn rulebook_diagram_4_removing_the_indicated_ring_captures_the_isolated_marble() {
    // A white marble on a1, whose only remaining neighbour is b1 (a2 and b2 are gone).
    let p = pos("37 standard w-../.-.../....../...g.../....b./...../.... 3/5/7 1/1/1 1/1/1 P1 - 0");
    assert!(free(&p).contains(&"b1".to_string()));
    let all = p.legal_moves();
    assert!(!all.is_empty());
    let b1 = p.geometry().parse_ring("b1").unwrap();
    for m in &all {
        let q = p.play(m).unwrap();
        let removes_b1 = matches!(m, Move::Place(pl) if pl.remove == Some(b1));
        let placed = match m {
            Move::Place(pl) => pl.marble.index(),
            _ => unreachable!("no capture here"),
        };
        let mut want = [1, 1, 1];
        if removes_b1 {
            want[0] += 1;
        }
        assert_eq!(caps(&q, Player::P1), want, "{}", p.move_to_string(m));
        assert_eq!(caps(&q, Player::P0), [1, 1, 1]);
        let mut pool = [3, 5, 7];
        pool[placed] -= 1;
        assert_eq!(q.pool().0, pool);
        assert_eq!(has_ring(&q, "a1"), !removes_b1, "{}", p.move_to_string(m));
    }
    let q = play(&p, "Gd5,b1");
    assert_eq!(caps(&q, Player::P1), [2, 1, 1]);
}

// ------------------------------------------------------------------------ decisions 3: board full

#[test]
fn filling_the_last_vacant_ring_claims_the_board_and_wins_without_a_win_set() {
    // Seven rings left: d4 (vacant) and its six neighbours (1 white, 2 grey, 3 black). d4 has six
    // neighbours, so it is not free: the placement removes nothing. P0 has more captures.
    let p = pos("37 standard ----/-----/--bb--/--g.w--/--bg--/-----/---- 2/4/5 3/2/2 0/0/0 P1 - 0");
    assert_eq!(moves(&p), strs(&["Bd4", "Gd4", "Wd4"]));
    for (m, want) in [("Wd4", [2, 2, 3]), ("Gd4", [1, 3, 3]), ("Bd4", [1, 2, 4])] {
        let q = play(&p, m);
        assert_eq!(q.rings(), 0, "{m}");
        assert_eq!(caps(&q, Player::P1), want, "{m}");
        assert_eq!(caps(&q, Player::P0), [3, 2, 2], "{m}");
        assert!(!MarbleSet::Standard.is_win(&q.captures(Player::P1)), "{m}: no win set");
        assert_eq!(q.outcome(), Some(Outcome::Win(Player::P1)), "{m}");
        assert!(q.legal_moves().is_empty());
    }
}

#[test]
fn placing_and_removing_the_last_vacant_rings_claims_the_board() {
    // As above plus d6, a vacant (free) ring hanging on d5 alone. Placing on d4 and removing d6
    // leaves a full board; placing on d6 leaves no free ring, so nothing is removed.
    let p = pos("37 standard ----/-----/--bb--/--g.w.-/--bg--/-----/---- 2/4/5 3/2/2 0/0/0 P1 - 0");
    assert_eq!(free(&p), ["d6"]);
    assert_eq!(moves(&p), strs(&["Bd4,d6", "Bd6", "Gd4,d6", "Gd6", "Wd4,d6", "Wd6"]));
    let q = play(&p, "Wd4,d6");
    assert_eq!(q.rings(), 0);
    assert_eq!(caps(&q, Player::P1), [2, 2, 3]);
    assert_eq!(q.outcome(), Some(Outcome::Win(Player::P1)));
    // On d6 the game goes on: the white on d6 must now jump the white on d5 into d4.
    let r = play(&p, "Wd6");
    assert_eq!(ring_count(&r), 8);
    assert_eq!(r.outcome(), None);
    assert_eq!(moves(&r), ["d6xd4"]);
}

#[test]
fn board_full_on_61_rings() {
    // Seven rings around e5 on the 61-ring board; P1 is far ahead, P0 fills e5 and wins.
    let p = pos(
        "61 standard -----/------/-------/----bb--/---g.w---/----bg--/-------/------/----- 3/3/3 0/0/0 2/3/4 P0 - 0",
    );
    assert_eq!(moves(&p), strs(&["Be5", "Ge5", "We5"]));
    let q = play(&p, "Ge5");
    assert_eq!(q.rings(), 0);
    assert_eq!(caps(&q, Player::P0), [1, 3, 3]);
    assert_eq!(q.outcome(), Some(Outcome::Win(Player::P0)));
}

// ------------------------------------------------------------------------- decisions 4: captures

/// Rulebook diagram 3, rebuilt: marble 1 (white d4), 2 (grey d3), 3 (black e2), 4 (grey c2),
/// 5 (black b3). a3, b1, c1, e3 and f1 are gone so that no other jump exists.
const DIAGRAM_3: &str =
    "37 standard ..-./-.b../-g..../..gw.../.b-.../-..../.... 5/6/8 0/0/0 0/0/0 P0 - 0";

#[test]
fn rulebook_diagram_3_every_chain_may_be_chosen() {
    let p = pos(DIAGRAM_3);
    // 1 -> 2 and 3; 1 -> 2, 4 and 5; 2 -> 1; 3 -> 2 and 1.
    assert_eq!(moves(&p), strs(&["d4xd2xf2", "d4xd2xb2xb4", "d3xd5", "e2xc3xe4"]));
    for (m, taken) in [
        ("d4xd2xf2", [0, 1, 1]),
        ("d4xd2xb2xb4", [0, 2, 1]),
        ("d3xd5", [1, 0, 0]),
        ("e2xc3xe4", [1, 1, 0]),
    ] {
        let q = play(&p, m);
        assert_eq!(caps(&q, Player::P0), taken, "{m}");
        assert_eq!(caps(&q, Player::P1), [0, 0, 0], "{m}");
        assert_eq!(q.turn(), Player::P1, "{m}");
        assert_eq!(q.chain(), None, "{m}");
    }
}

#[test]
fn capturing_is_compulsory() {
    let p = pos(DIAGRAM_3);
    assert!(p.has_capture());
    assert!(moves(&p).iter().all(|m| m.contains('x')));
    // a1 and a2 are vacant and free, the pool has marbles: still no placement.
    for text in ["Wa1,a2", "Ba2,a1", "Gd6,g4", "pass"] {
        assert_illegal(&p, text);
    }
    assert!(p.legal_actions().iter().all(|a| matches!(a, Action::Hop(_))));
}

#[test]
fn a_chain_must_be_completed() {
    let p = pos(DIAGRAM_3);
    // Stopping early is illegal, going on after the end too.
    for text in ["d4xd2", "d4xd2xb2", "e2xc3"] {
        assert_illegal(&p, text);
    }
    assert_illegal(&p, "d4xd2xf2xf4");
}

#[test]
fn a_capture_turn_places_no_marble_and_removes_no_ring() {
    let p = pos(DIAGRAM_3);
    for m in p.legal_moves() {
        let Move::Capture(c) = m else { panic!("not a capture") };
        let q = p.play(&m).unwrap();
        let name = p.move_to_string(&m);
        assert_eq!(q.rings(), p.rings(), "{name}");
        assert_eq!(q.pool(), p.pool(), "{name}");
        assert_eq!(marble_count(&q), marble_count(&p) - c.len() as u32, "{name}");
        assert_eq!(q.captures(Player::P0).total(), c.len() as u32, "{name}");
    }
}

#[test]
fn one_hop_at_a_time_the_same_player_keeps_the_turn() {
    let p = pos(DIAGRAM_3);
    assert_eq!(actions(&p), strs(&["d3xd5", "d4xd2", "e2xc3"]));
    let q = act(&p, "d4xd2");
    let d2 = p.geometry().parse_ring("d2").unwrap();
    assert_eq!(q.chain(), Some(d2));
    assert_eq!(q.turn(), Player::P0);
    assert_eq!(q.outcome(), None);
    assert_eq!(caps(&q, Player::P0), [0, 1, 0]);
    assert_eq!(
        q.to_text(),
        "37 standard ..-./-.b../-g..../.w...../.b-.../-..../.... 5/6/8 0/1/0 0/0/0 P0 d2 0"
    );
    assert_eq!(pos(&q.to_text()), q);
    // Only the marble on d2 may hop; whole-turn moves finish its chain.
    assert_eq!(actions(&q), strs(&["d2xb2", "d2xf2"]));
    assert_eq!(moves(&q), strs(&["d2xb2xb4", "d2xf2"]));
    // Without the chain in progress, c2 could jump d2: not now. Nor may anything be placed.
    let no_chain =
        pos("37 standard ..-./-.b../-g..../.w...../.b-.../-..../.... 5/6/8 0/1/0 0/0/0 P0 - 0");
    assert!(actions(&no_chain).contains(&"c2xe1".to_string()));
    for text in ["c2xe1", "Wa1,a2", "pass"] {
        let a = q.parse_action(text).unwrap();
        assert!(!q.is_legal_action(&a), "{text}");
        assert_eq!(*q.play_action(&a).unwrap_err().position, q, "{text}");
    }
    let r = act(&q, "d2xb2");
    assert_eq!(r.chain(), Some(p.geometry().parse_ring("b2").unwrap()));
    assert_eq!(r.turn(), Player::P0);
    assert_eq!(actions(&r), ["b2xb4"]);
    let s = act(&r, "b2xb4");
    assert_eq!(s.chain(), None);
    assert_eq!(s.turn(), Player::P1);
    assert_eq!(caps(&s, Player::P0), [0, 2, 1]);
    assert_eq!(s, play(&p, "d4xd2xb2xb4"), "hop by hop and whole turn agree");
    // A game records the hops as one capture move.
    let mut game = Game::from_position(p);
    for h in ["d4xd2", "d2xb2", "b2xb4"] {
        game.play_action(&game.position().parse_legal_action(h).unwrap()).unwrap();
    }
    assert_eq!(game.moves(), [p.parse_move("d4xd2xb2xb4").unwrap()]);
    assert_eq!(*game.position(), s);
}

#[test]
fn a_later_hop_may_land_on_a_ring_the_chain_emptied() {
    // White d3, grey d4, black e4, grey e3: a rhombus. The white can go round the triangle
    // d4-e4-e3 and land back on d3, the ring it left; the black likewise on e4.
    let p = pos("37 standard ..../...../....../..wg.../..gb../...../.... 5/6/9 0/0/0 0/0/0 P1 - 0");
    assert_eq!(
        moves(&p),
        strs(&[
            "d3xd5xf3xd3",
            "d3xf3xd5xd3",
            "d4xd2",
            "d4xf2",
            "d4xf4",
            "e3xc2",
            "e3xc4",
            "e3xe5",
            "e4xc3xe2xe4",
            "e4xe2xc3xe4",
        ])
    );
    let q = play(&p, "d3xd5xf3xd3");
    assert_eq!(
        q.to_text(),
        "37 standard ..../...../....../..w..../....../...../.... 5/6/9 0/0/0 0/2/1 P0 - 0"
    );
}

// ------------------------------------------------------------------------ decisions 5: empty pool

#[test]
fn with_an_empty_pool_the_mover_places_own_captures() {
    // P0 holds 0 white, 4 grey, 5 black; P1 holds 3/2/5.
    let p = pos("37 standard w.../....g/....../...w.../....../g..../...w 0/0/0 0/4/5 3/2/5 P0 - 0");
    assert_eq!(p.supply(), ByMarble([0, 4, 5]));
    let ms = moves(&p);
    assert!(ms.iter().all(|m| m.starts_with('G') || m.starts_with('B')));
    // 14 free rings of 32 vacant: (14 * 13 + 18 * 14) placements per colour.
    assert_eq!(ms.len(), 2 * (14 * 13 + 18 * 14));
    assert_illegal(&p, "Wc3,a2");
    let q = play(&p, "Gc2,a4");
    assert_eq!(q.pool(), ByMarble([0, 0, 0]));
    assert_eq!(caps(&q, Player::P0), [0, 3, 5]);
    assert_eq!(caps(&q, Player::P1), [3, 2, 5]);
    assert_eq!(q.supply(), ByMarble([3, 2, 5]));
    let colours: std::collections::BTreeSet<char> =
        moves(&q).iter().map(|m| m.chars().next().unwrap()).collect();
    assert_eq!(colours.into_iter().collect::<String>(), "BGW");
    let r = play(&q, "Wd2,a3");
    assert_eq!(caps(&r, Player::P1), [2, 2, 5]);
}

#[test]
fn while_the_pool_has_marbles_only_the_pool_is_used() {
    // Only blacks are left in the pool: P0 must place a black, although P0 holds white and grey.
    let p = pos("37 standard w.../...../....../...b.../....../...../...b 0/0/3 3/4/0 2/4/5 P0 - 0");
    assert_eq!(p.supply(), ByMarble([0, 0, 3]));
    assert!(moves(&p).iter().all(|m| m.starts_with('B')));
    assert_illegal(&p, "Wc3,a2");
    let q = play(&p, "Bc2,a2");
    assert_eq!(q.pool(), ByMarble([0, 0, 2]));
    assert_eq!(caps(&q, Player::P0), [3, 4, 0]);
}

/// 61 rings, blitz: three rosettes (a vacant ring and its six occupied neighbours, around e8, h2
/// and b2) and three pairs (h5-i5, e2-e1, b5-a5, marble first); every other ring is gone. All 21
/// marbles are on the board and no marble can jump.
const NOTHING_TO_DO: &str = "61 blitz bb--./b.g-b-/-bg----/------gg/.b----g.w/------ww/-bb----/g.w-b-/gw--. 0/0/0 0/0/0 0/0/0 P0 - 0";

#[test]
fn nothing_to_place_and_no_capture_means_pass_and_two_passes_draw() {
    let p = pos(NOTHING_TO_DO);
    assert!(!p.has_capture());
    assert_eq!(moves(&p), ["pass"]);
    assert_eq!(p.legal_moves(), [Move::Pass]);
    assert_eq!(p.legal_actions(), [Action::Pass]);
    assert_illegal(&p, "Be1,a5");
    let q = play(&p, "pass");
    assert_eq!(q.passes(), 1);
    assert_eq!(q.turn(), Player::P1);
    assert_eq!(q.outcome(), None);
    assert_eq!(q.legal_moves(), [Move::Pass]);
    let r = play(&q, "pass");
    assert_eq!(r.passes(), 2);
    assert_eq!(r.outcome(), Some(Outcome::Draw));
    assert!(r.legal_moves().is_empty());
    assert_illegal(&r, "pass");
    let mut game = Game::from_position(p);
    game.play_str("pass").unwrap();
    game.play_str("pass").unwrap();
    assert_eq!(game.outcome(), Some(Outcome::Draw));
    assert!(!game.is_repetition());
    assert_eq!(game.play_str("pass"), Err(GameError::Over));
}

#[test]
fn a_pass_is_not_a_draw_when_the_other_player_can_place() {
    // As NOTHING_TO_DO, but P1 holds the black of the e2-e1 pair.
    let p = pos(
        "61 blitz bb--./b.g-b-/-bg----/------gg/..----g.w/------ww/-bb----/g.w-b-/gw--. 0/0/0 0/0/0 0/0/1 P0 - 0",
    );
    assert_eq!(moves(&p), ["pass"]);
    let q = play(&p, "pass");
    assert_eq!(q.passes(), 1);
    // 7 vacant rings, 4 of them free (a5, e1, e2, i5): 4 * 3 + 3 * 4 placements of the black.
    let ms = moves(&q);
    assert_eq!(ms.len(), 24);
    assert!(ms.iter().all(|m| m.starts_with('B')));
    // Every placement here claims something: on e1, removing a5 cuts off the black on b5.
    let r = play(&q, "Be1,a5");
    assert_eq!(r.passes(), 0);
    assert_eq!(caps(&r, Player::P1), [0, 0, 1]);
    assert_eq!(r.outcome(), None);
    // P0 passes again: one pass in a row, no draw.
    let s = play(&r, "pass");
    assert_eq!(s.passes(), 1);
    assert_eq!(s.outcome(), None);
    assert!(moves(&s).iter().all(|m| m.starts_with('B')));
}

#[test]
fn a_player_without_marbles_still_must_capture() {
    // As NOTHING_TO_DO, but the b5 marble stands on e3 above the e2 black: e3 jumps e2 into e1.
    let p = pos(
        "61 blitz bb--./b.g-.-/-bg----/------gg/.bb---g.w/------ww/-bb----/g.w-b-/gw--. 0/0/0 0/0/0 0/0/0 P0 - 0",
    );
    assert_eq!(moves(&p), ["e3xe1"]);
    assert_illegal(&p, "pass");
    let q = play(&p, "e3xe1");
    assert_eq!(caps(&q, Player::P0), [0, 0, 1]);
}

// ------------------------------------------------------------------------ decisions 6: repetition

/// 61 rings: e2 (black) to e6 in a column between d1-d6 and f1-f6 (all occupied); e1, e7 and every
/// other ring are gone. No ring is free; the pool is empty. Blacks placed on e5 then e3 let the
/// e2 marble jump to e6, and placed on e3 then e5 let it jump back: every six turns the position
/// repeats.
const CYCLE: &str = "61 standard -----/------/-------/wgbgwb--/-b....---/gwbgwb--/-------/------/----- 0/0/0 1/1/2 1/3/3 P0 - 0";

#[test]
fn a_position_occurring_a_third_time_is_a_draw() {
    let start = pos(CYCLE);
    assert!(free(&start).is_empty());
    assert!(!start.has_capture());
    let mut game = Game::from_position(start);
    let turns = ["Be5", "Be3", "e2xe4xe6", "Be3", "Be5", "e6xe4xe2"];
    for round in 0..2 {
        for m in turns {
            assert_eq!(game.outcome(), None, "round {round} before {m}");
            if m.contains('x') {
                // The capture is forced: it is the only legal move.
                assert_eq!(moves(game.position()), [m.to_string()]);
            }
            game.play_str(m).unwrap_or_else(|e| panic!("round {round} {m}: {e}"));
            assert_eq!(game.position().rings(), start.rings(), "no ring is ever removed");
        }
        assert_eq!(*game.position(), start, "round {round} comes back to the start");
    }
    assert!(game.is_repetition());
    assert_eq!(game.outcome(), Some(Outcome::Draw));
    assert!(game.is_over());
    assert!(game.legal_moves().is_empty());
    assert_eq!(game.position().outcome(), None, "the position alone is not over");
    assert_eq!(game.play_str("Be5"), Err(GameError::Over));
    assert!(game.play(&start.parse_move("Be5").unwrap()).is_err());
}

#[test]
fn a_second_occurrence_is_not_a_draw_and_hops_count_as_one_turn() {
    let start = pos(CYCLE);
    let mut game = Game::from_position(start);
    for m in ["Be5", "Be3"] {
        game.play_str(m).unwrap();
    }
    // The chain hop by hop: the position after the first hop is no turn of its own.
    for h in ["e2xe4", "e4xe6"] {
        let a = game.position().parse_legal_action(h).unwrap();
        game.play_action(&a).unwrap();
    }
    for m in ["Be3", "Be5"] {
        game.play_str(m).unwrap();
    }
    for h in ["e6xe4", "e4xe2"] {
        let a = game.position().parse_legal_action(h).unwrap();
        game.play_action(&a).unwrap();
    }
    assert_eq!(*game.position(), start);
    assert_eq!(game.moves().len(), 6);
    assert_eq!(game.outcome(), None, "second occurrence");
    for m in ["Be5", "Be3", "e2xe4xe6", "Be3", "Be5"] {
        game.play_str(m).unwrap();
        assert_eq!(game.outcome(), None);
    }
    game.play_str("e6xe4xe2").unwrap();
    assert_eq!(game.outcome(), Some(Outcome::Draw));
}

// -------------------------------------------------------------------------- decisions 7: win sets

#[test]
fn each_win_set_ends_the_game_for_the_capturer() {
    // The marble on d3 jumps the one on d4 into d5; the mover's captures then complete a win set
    // (or, for the last case of each set, just miss one).
    let cases = [
        // standard: 4 white, 5 grey, 6 black, 3 of each
        ("37 standard ..../...../....../..gw.../....../...../.... 2/7/10 3/0/0 0/0/0 P0 - 0", true),
        ("37 standard ..../...../....../..wg.../....../...../.... 5/3/10 0/4/0 0/0/0 P0 - 0", true),
        ("37 standard ..../...../....../..wb.../....../...../.... 5/8/4 0/0/5 0/0/0 P0 - 0", true),
        ("37 standard ..../...../....../..gb.../....../...../.... 3/4/7 3/3/2 0/0/0 P0 - 0", true),
        ("37 standard ..../...../....../..gb.../....../...../.... 3/3/8 3/4/1 0/0/0 P0 - 0", false),
        // blitz on 37 rings: 3 white, 4 grey, 5 black, 2 of each
        ("37 blitz ..../...../....../..gw.../....../...../.... 2/6/9 0/0/0 2/0/0 P1 - 0", true),
        ("37 blitz ..../...../....../..wg.../....../...../.... 4/3/9 0/0/0 0/3/0 P1 - 0", true),
        ("37 blitz ..../...../....../..wb.../....../...../.... 4/7/4 0/0/0 0/0/4 P1 - 0", true),
        ("37 blitz ..../...../....../..gb.../....../...../.... 3/4/7 0/0/0 2/2/1 P1 - 0", true),
        ("37 blitz ..../...../....../..wg.../....../...../.... 3/4/7 0/0/0 1/2/2 P1 - 0", false),
    ];
    for (text, wins) in cases {
        let p = pos(text);
        let mover = p.turn();
        assert_eq!(p.outcome(), None, "{text}");
        let q = play(&p, "d3xd5");
        assert_eq!(q.captures(!mover), p.captures(!mover));
        assert_eq!(q.captures(mover).total(), p.captures(mover).total() + 1);
        if wins {
            assert_eq!(q.outcome(), Some(Outcome::Win(mover)), "{text}");
            assert!(q.is_over());
            assert!(q.legal_moves().is_empty(), "{text}");
            assert_illegal(&q, "Wa1,a2");
        } else {
            assert_eq!(q.outcome(), None, "{text}");
            assert!(!q.legal_moves().is_empty(), "{text}");
        }
    }
}

// ------------------------------------------------------------------- rulebook diagram 5: sacrifice

#[test]
fn rulebook_diagram_5_the_sacrifice() {
    // Player A (P0) has captured 2 whites, player B (P1) 2 whites, 4 greys and a black: A is 5
    // marbles behind. A white stands on c1; b2, b3 and d1 are gone.
    let p = pos("37 standard ..../.--../w...../-....b./....../..g../.... 1/3/8 2/0/0 2/4/1 P0 - 0");
    assert_eq!(p.captures(Player::P0).total() + 5, p.captures(Player::P1).total());
    // A puts a black on b1 (ring 1) and removes a3 (ring 2).
    let q = play(&p, "Bb1,a3");
    // B must jump c1 over b1 into a1 (b1's other jumps: over c1 into the gone d1; nothing else).
    assert_eq!(moves(&q), ["c1xa1"]);
    let r = play(&q, "c1xa1");
    assert_eq!(caps(&r, Player::P1), [2, 4, 2]);
    assert_eq!(r.outcome(), None, "a black gives B no win set");
    assert!(!r.has_capture());
    // A puts a white on a2 (ring 3) and removes b1 (ring 4): a1 and a2 are cut off, both white.
    let s = play(&r, "Wa2,b1");
    assert_eq!(caps(&s, Player::P0), [4, 0, 0]);
    assert_eq!(s.outcome(), Some(Outcome::Win(Player::P0)));
    for ring in ["a1", "a2", "a3", "b1"] {
        assert!(!has_ring(&s, ring), "{ring}");
    }
    // A grey sacrifice instead would have handed B a fifth grey and the game.
    let q = play(&p, "Gb1,a3");
    assert_eq!(moves(&q), ["c1xa1"]);
    let r = play(&q, "c1xa1");
    assert_eq!(r.outcome(), Some(Outcome::Win(Player::P1)));
}
