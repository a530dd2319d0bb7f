//! Nothing panics on bad input: arbitrary strings and bytes, and random edits of valid position
//! texts, move strings and boardspace records, fed to every parser of the crate. Whatever a parser
//! accepts must be a valid position or a move that reads back.
//!
//! The records come from the games folder: `ZERTZ_GAMES`, or `shared/games` beside the repository.
//! They are read, never copied.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use zertz_env::setup::{Cell, Setup, SetupError};
use zertz_env::sgf::{End, Record};
use zertz_env::{
    Action, ByMarble, ByPlayer, Direction, Game, Hop, Marble, Move, Outcome, Placement, Player,
    Position, Ring, Variant,
};

type TestResult = Result<(), TestCaseError>;

/// A proptest configuration with `cases` cases. Failures are reported with their minimal input
/// (a seed reproduces a whole game), not written to regression files.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

// ------------------------------------------------------------------------------- helpers

/// `zertz_env`'s splitmix64 generator picks moves.
use zertz_env::SplitMix64 as Rng;

fn variants() -> Vec<Variant> {
    Variant::all().collect()
}

fn start_positions() -> Vec<Position> {
    variants().into_iter().map(|v| Position::new(v, Player::P0)).collect()
}

/// Positions of random games on every variant, mid-chain ones and late ones (empty pool) included.
fn corpus() -> &'static [Position] {
    static CORPUS: OnceLock<Vec<Position>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut out = Vec::new();
        let mut rng = Rng(0x00C0_FFEE);
        for (k, v) in variants().into_iter().enumerate() {
            for game in 0..4 {
                let first = if (k + game) % 2 == 0 { Player::P0 } else { Player::P1 };
                let quiet = game % 2 == 1;
                let mut pos = Position::new(v, first);
                let mut turns = 0;
                while !pos.is_over() && turns < 300 {
                    out.push(pos);
                    let actions = pos.legal_actions();
                    let mut a = actions[rng.below(actions.len())];
                    // A quiet player avoids leaving a capture, so the game lasts into the endgame.
                    for _ in 0..if quiet { 20 } else { 0 } {
                        let next = pos.play_action(&a).expect("legal action");
                        if next.chain().is_none() && !next.has_capture() {
                            break;
                        }
                        a = actions[rng.below(actions.len())];
                    }
                    pos = pos.play_action(&a).expect("legal action");
                    if pos.chain().is_none() {
                        turns += 1;
                    }
                }
                out.push(pos);
            }
        }
        out
    })
}

fn games_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("ZERTZ_GAMES") {
        return PathBuf::from(dir);
    }
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/games"))
}

/// A few real records: 37, 48 and 61 rings, old ones without `Done` and newer ones.
fn real_records() -> &'static [String] {
    static RECORDS: OnceLock<Vec<String>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let dir = games_dir();
        let names = [
            "zertz-00000.sgf",
            "zertz-00001.sgf",
            "zertz-00100.sgf",
            "zertzp11-00150.sgf",
            "zertzp11-00200.sgf",
            "zertzp24-00291.sgf",
        ];
        names
            .iter()
            .map(|n| {
                let path = dir.join(n);
                std::fs::read_to_string(&path).unwrap_or_else(|e| {
                    panic!(
                        "cannot read {} ({e}); set ZERTZ_GAMES to the games folder",
                        path.display()
                    )
                })
            })
            .collect()
    })
}

/// Checks what any accepted position must satisfy: hash, conservation, round trips, and that every
/// legal move and action plays and reads back.
fn check_valid(pos: &Position) -> TestResult {
    prop_assert_eq!(pos.hash(), pos.compute_hash(), "stale hash in {:?}", pos);
    let set = pos.marble_set().counts();
    for m in Marble::ALL {
        let total = pos.marbles(m).count_ones()
            + pos.pool()[m] as u32
            + pos.captures(Player::P0)[m] as u32
            + pos.captures(Player::P1)[m] as u32;
        prop_assert_eq!(total, set[m] as u32, "{:?} not conserved in {:?}", m, pos);
    }
    prop_assert_eq!(pos.occupied() & !pos.rings(), 0);
    prop_assert_eq!(pos.rings() & !pos.geometry().all(), 0);

    let text = pos.to_text();
    let back = Position::from_text(&text);
    prop_assert_eq!(back.as_ref().ok(), Some(pos), "{} does not read back: {:?}", text, back);
    prop_assert_eq!(back.unwrap().hash(), pos.hash());
    let back = Position::from_setup(&pos.to_setup());
    prop_assert_eq!(back.as_ref().ok(), Some(pos));

    let moves = pos.legal_moves();
    let actions = pos.legal_actions();
    prop_assert_eq!(moves.len(), pos.count_legal_moves() as usize);
    prop_assert_eq!(pos.is_over(), moves.is_empty(), "moves and outcome disagree in {:?}", pos);
    prop_assert_eq!(pos.is_over(), actions.is_empty(), "actions and outcome disagree in {:?}", pos);
    for m in &moves {
        let next = pos.play(m);
        prop_assert!(next.is_ok(), "generated {m:?} does not play in {pos:?}");
        let next = next.unwrap();
        prop_assert_eq!(next.hash(), next.compute_hash(), "{:?} after {:?}", pos, m);
        prop_assert_eq!(next.turn(), !pos.turn());
        let s = pos.move_to_string(m);
        prop_assert_eq!(pos.parse_legal_move(&s), Ok(*m), "{} does not read back", s);
    }
    for a in &actions {
        let next = pos.play_action(a);
        prop_assert!(next.is_ok(), "generated {a:?} does not play in {pos:?}");
        let next = next.unwrap();
        prop_assert_eq!(next.hash(), next.compute_hash());
        let s = pos.action_to_string(a);
        prop_assert_eq!(pos.parse_legal_action(&s), Ok(*a), "{} does not read back", s);
    }
    Ok(())
}

/// Every parser of a position text on `text`; whatever is accepted must be valid.
fn try_position_text(text: &str) -> TestResult {
    let direct = Position::from_text(text);
    match Setup::from_text(text) {
        Ok(setup) => {
            let via = Position::from_setup(&setup);
            prop_assert_eq!(&via, &direct);
            if let Ok(pos) = via {
                check_valid(&pos)?;
                prop_assert_eq!(pos.to_setup(), setup);
            }
        }
        Err(e) => prop_assert_eq!(direct, Err(e)),
    }
    Ok(())
}

/// Every move parser of `pos` on `text`; whatever is accepted must read back, and be legal when a
/// legal move was asked for.
fn try_move_text(pos: &Position, text: &str) -> TestResult {
    if let Ok(m) = pos.parse_move(text) {
        let s = pos.move_to_string(&m);
        prop_assert_eq!(pos.parse_move(&s), Ok(m), "{:?} -> {} does not read back", text, s);
        prop_assert_eq!(pos.is_legal_move(&m), pos.play(&m).is_ok());
    }
    if let Ok(a) = pos.parse_action(text) {
        let s = pos.action_to_string(&a);
        prop_assert_eq!(pos.parse_action(&s), Ok(a), "{:?} -> {} does not read back", text, s);
        prop_assert_eq!(pos.is_legal_action(&a), pos.play_action(&a).is_ok());
    }
    if let Ok(m) = pos.parse_legal_move(text) {
        prop_assert!(pos.is_legal_move(&m));
        let next = pos.play(&m);
        prop_assert!(next.is_ok());
        prop_assert!(pos.legal_moves().contains(&m), "{text:?} legal but not generated in {pos:?}");
    }
    if let Ok(a) = pos.parse_legal_action(text) {
        prop_assert!(pos.play_action(&a).is_ok());
        prop_assert!(pos.legal_actions().contains(&a), "{text:?} legal but not generated");
    }
    let mut game = Game::from_position(*pos);
    if let Ok(m) = game.play_str(text) {
        prop_assert_eq!(game.moves(), &[m][..]);
    } else {
        prop_assert!(game.moves().is_empty());
        prop_assert_eq!(game.position(), pos);
    }
    Ok(())
}

/// Parses and replays `text` as a record; an accepted replay must hold valid positions.
fn try_record(text: &str) -> TestResult {
    let Ok(record) = Record::parse(text) else {
        return Ok(());
    };
    let Ok(replay) = record.replay() else {
        return Ok(());
    };
    let game = &replay.game;
    prop_assert_eq!(replay.legal_counts.len(), game.moves().len());
    prop_assert_eq!(replay.notation().len(), game.moves().len());
    let mut pos = *game.start();
    for (m, &count) in game.moves().iter().zip(&replay.legal_counts) {
        prop_assert_eq!(pos.count_legal_moves(), count);
        let next = pos.play(m);
        prop_assert!(next.is_ok(), "replayed {m:?} is illegal in {pos:?}");
        pos = next.unwrap();
    }
    prop_assert_eq!(&pos, game.position());
    prop_assert_eq!(pos.hash(), pos.compute_hash());
    prop_assert_eq!(Position::from_text(&pos.to_text()), Ok(pos));
    match replay.end {
        End::Capture => prop_assert!(matches!(game.outcome(), Some(Outcome::Win(_)))),
        End::Draw => prop_assert_eq!(game.outcome(), Some(Outcome::Draw)),
        End::Resign | End::Time => prop_assert!(replay.winner.is_some()),
        End::Unfinished => prop_assert!(!game.is_over()),
    }
    Ok(())
}

// ------------------------------------------------------------------------------- edits

/// Characters that the formats use, so that edits stay close to valid input.
const ALPHABET: &str = ".-wgbWGB/0123456789 PpxX,;[]()\nabcdefghiABCDEFGHIRtoBDne";

/// One random edit of a text, at a position taken modulo its length.
#[derive(Clone, Debug)]
enum Edit {
    Delete(usize),
    Insert(usize, char),
    Replace(usize, char),
    /// Exchange two characters (keeps the marble counts of a position text).
    Swap(usize, usize),
    /// Copy a slice of up to 8 characters to another place.
    Duplicate(usize, usize, usize),
}

fn edit_char() -> impl Strategy<Value = char> {
    let alphabet: Vec<char> = ALPHABET.chars().collect();
    prop_oneof![4 => proptest::sample::select(alphabet), 1 => any::<char>()]
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>()).prop_map(Edit::Delete),
        (any::<usize>(), edit_char()).prop_map(|(i, c)| Edit::Insert(i, c)),
        (any::<usize>(), edit_char()).prop_map(|(i, c)| Edit::Replace(i, c)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Edit::Swap(i, j)),
        (any::<usize>(), any::<usize>(), 1usize..8).prop_map(|(i, j, n)| Edit::Duplicate(i, j, n)),
    ]
}

fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let mut s: Vec<char> = text.chars().collect();
    for e in edits {
        let len = s.len();
        match *e {
            Edit::Delete(i) if len > 0 => {
                s.remove(i % len);
            }
            Edit::Insert(i, c) => s.insert(i % (len + 1), c),
            Edit::Replace(i, c) if len > 0 => s[i % len] = c,
            Edit::Swap(i, j) if len > 0 => s.swap(i % len, j % len),
            Edit::Duplicate(i, j, n) if len > 0 => {
                let from = i % len;
                let piece: Vec<char> = s[from..(from + n).min(len)].to_vec();
                let at = j % (len + 1);
                s.splice(at..at, piece);
            }
            _ => {}
        }
    }
    s.into_iter().collect()
}

/// Node-level edits of a record: drop, repeat or exchange whole `;` nodes.
#[derive(Clone, Debug)]
enum NodeEdit {
    Drop(usize),
    Repeat(usize),
    Exchange(usize, usize),
}

fn node_edit() -> impl Strategy<Value = NodeEdit> {
    prop_oneof![
        any::<usize>().prop_map(NodeEdit::Drop),
        any::<usize>().prop_map(NodeEdit::Repeat),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| NodeEdit::Exchange(i, j)),
    ]
}

fn apply_node_edits(text: &str, edits: &[NodeEdit]) -> String {
    let mut nodes: Vec<&str> = text.split_inclusive(';').collect();
    for e in edits {
        // The first piece holds the opening of the game tree; keep it.
        let len = nodes.len();
        if len < 3 {
            break;
        }
        let pick = |i: usize| 1 + i % (len - 1);
        match *e {
            NodeEdit::Drop(i) => {
                nodes.remove(pick(i));
            }
            NodeEdit::Repeat(i) => {
                let k = pick(i);
                nodes.insert(k, nodes[k]);
            }
            NodeEdit::Exchange(i, j) => nodes.swap(pick(i), pick(j)),
        }
    }
    nodes.concat()
}

// ------------------------------------------------------------------------------- records of games

/// A boardspace record of a game played on a board that boardspace has (37, 48, 61, standard).
fn record_of(game: &Game) -> String {
    let start = *game.start();
    let su = match start.board().rings() {
        37 => "Zertz",
        48 => "Zertz+11",
        61 => "Zertz+24",
        n => panic!("no boardspace variant for {n} rings"),
    };
    let geo = start.geometry();
    let cell = |r: Ring| {
        let (col, row) = geo.column_row(r);
        format!("{} {row}", (b'A' + col as u8) as char)
    };
    let mut out = format!("(;GM[22]VV[2]SU[{su}]\n; P0[0 Start {}]\n", start.turn());
    let mut pos = start;
    let mut n = 1;
    for m in game.moves() {
        let p = pos.turn();
        let mut node = |action: String| {
            out.push_str(&format!("; {p}[{n} {action}]\n"));
            n += 1;
        };
        match m {
            Move::Place(pl) => {
                let rack = if pos.pool().total() == 0 { p.index() } else { 2 };
                node(format!("RtoB {rack} {} {}", pl.marble.index(), cell(pl.at)));
                if let Some(r) = pl.remove {
                    node(format!("R- {}", cell(r)));
                }
                node("Done".into());
            }
            Move::Capture(c) => {
                let mut at = c.from();
                for d in c.dirs() {
                    let to = pos.hop_landing(Hop { from: at, dir: d }).expect("legal hop");
                    node(format!("BtoB {} {}", cell(at), cell(to)));
                    at = to;
                }
                node("Done".into());
            }
            Move::Pass => {} // boardspace records no pass
        }
        pos.play_unchecked(m);
    }
    out.push_str(")\n");
    out
}

/// A random game on a boardspace board, with a quiet player now and then so that some games reach
/// the empty pool (placements from captures, passes).
fn random_boardspace_game(seed: u64) -> Game {
    let mut rng = Rng(seed);
    let boards = [zertz_env::Board::R37, zertz_env::Board::R48, zertz_env::Board::R61];
    let variant = Variant::new(boards[rng.below(3)], zertz_env::MarbleSet::Standard);
    let first = if rng.next_u64() & 1 == 0 { Player::P0 } else { Player::P1 };
    let quiet = [0, 3, 30][rng.below(3)];
    let mut game = Game::new(variant, first);
    while !game.is_over() && game.moves().len() < 500 {
        let pos = *game.position();
        let moves = game.legal_moves();
        let mut m = moves[rng.below(moves.len())];
        for _ in 0..quiet {
            if !pos.play(&m).expect("legal move").has_capture() {
                break;
            }
            m = moves[rng.below(moves.len())];
        }
        game.play(&m).expect("legal move");
    }
    game
}

// ------------------------------------------------------------------------------- position texts

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn position_text_arbitrary_strings(text in any::<String>()) {
        try_position_text(&text)?;
    }

    #[test]
    fn position_text_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..160)) {
        try_position_text(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn position_text_near_the_format(
        text in "(37|40|43|44|48|61|[0-9]{1,3}) (standard|blitz|BLITZ|[a-z]{0,8}) \
                 [.wgb/-]{0,75} [0-9]{0,3}/[0-9]{0,3}/[0-9]{0,3} [0-9]{1,2}/[0-9]{1,2}/[0-9]{1,2} \
                 [0-9]/[0-9]/[0-9] (P0|P1|p1|P2|) ([a-j][0-9]{1,3}|-) ([0-3]|-1|00)"
    ) {
        try_position_text(&text)?;
    }

    #[test]
    fn position_text_edits(k in any::<usize>(), edits in proptest::collection::vec(edit(), 1..6)) {
        let corpus = corpus();
        let text = corpus[k % corpus.len()].to_text();
        try_position_text(&apply_edits(&text, &edits))?;
    }

    /// Exchanging cells keeps the marble counts, so many edited texts are accepted and must be valid
    /// positions (new isolated groups, a chain marble moved away, …).
    #[test]
    fn position_text_cell_swaps(
        k in any::<usize>(),
        swaps in proptest::collection::vec((any::<usize>(), any::<usize>()), 1..5),
        chain in proptest::option::of(any::<usize>()),
    ) {
        let corpus = corpus();
        let pos = corpus[k % corpus.len()];
        let fields: Vec<String> = pos.to_text().split(' ').map(str::to_string).collect();
        let mut cells: Vec<char> = fields[2].chars().collect();
        let slots: Vec<usize> = (0..cells.len()).filter(|&i| cells[i] != '/').collect();
        for (i, j) in swaps {
            cells.swap(slots[i % slots.len()], slots[j % slots.len()]);
        }
        let mut fields = fields.clone();
        fields[2] = cells.into_iter().collect();
        if let Some(c) = chain {
            let geo = pos.geometry();
            fields[7] = geo.name(Ring::new((c % geo.len()) as u8).unwrap()).to_string();
            fields[8] = "0".into();
        }
        try_position_text(&fields.join(" "))?;
    }
}

// ------------------------------------------------------------------------------- setups

/// The cell for a random byte: removed with probability `removed`/256, else a marble with
/// probability `marbles`/256 (colours in the proportions of the set), else vacant.
fn cell_of(code: u8, colour: u8, removed: u8, marbles: u8) -> Cell {
    if code < removed {
        Cell::Removed
    } else if code - removed < marbles {
        Cell::Marble(match colour % 12 {
            0..=2 => Marble::White,
            3..=6 => Marble::Grey,
            _ => Marble::Black,
        })
    } else {
        Cell::Vacant
    }
}

/// A setup with arbitrary cells (sparse or dense, few or many rings removed); counts either made to
/// add up to the marble set (split at random between pool and captures) or arbitrary; no chain, a
/// chain on a ring with a marble, or a chain on any ring of the tables.
fn arbitrary_setup() -> impl Strategy<Value = Setup> {
    (
        (0usize..12, prop_oneof![8 => Just(0i32), 1 => -1i32..=1], proptest::sample::select(vec![0u8, 20, 60, 120])),
        (proptest::sample::select(vec![5u8, 20, 50, 90]), proptest::bool::weighted(0.8), any::<bool>()),
        proptest::collection::vec((any::<u8>(), any::<u8>()), 61),
        proptest::array::uniform9(any::<u8>()),
        prop_oneof![2 => Just(None), 2 => any::<usize>().prop_map(Some), 1 => Just(Some(usize::MAX))],
        0u8..64,
        prop_oneof![6 => Just(0u8), 3 => 1u8..=2, 1 => any::<u8>()],
    )
        .prop_map(|((v, len_delta, removed), (marbles, consistent, p1), codes, counts, on_marble, ring, passes)| {
            let variant = variants()[v];
            let set = variant.marbles.counts();
            let len = (variant.board.rings() as i32 + len_delta) as usize;
            let cells: Vec<Cell> =
                codes.iter().take(len).map(|&(c, k)| cell_of(c, k, removed, marbles)).collect();
            let (pool, captures) = if consistent {
                let mut pool = [0u8; 3];
                let mut caps = [[0u8; 3]; 2];
                for m in Marble::ALL {
                    let on_board = cells.iter().filter(|&&c| c == Cell::Marble(m)).count() as u8;
                    let rest = set[m].saturating_sub(on_board);
                    // Halved half of the time, so that fewer setups are already won.
                    let (a, b) = (counts[m.index()], counts[3 + m.index()]);
                    let c0 = (a % (rest + 1)) >> (a & 1);
                    let c1 = (b % (rest - c0 + 1)) >> (b & 1);
                    caps[0][m.index()] = c0;
                    caps[1][m.index()] = c1;
                    pool[m.index()] = rest - c0 - c1;
                }
                (ByMarble(pool), ByPlayer([ByMarble(caps[0]), ByMarble(caps[1])]))
            } else {
                let c = |i: usize| ByMarble([counts[i], counts[i + 1], counts[i + 2]]);
                (c(0), ByPlayer([c(3), c(6)]))
            };
            let turn = if p1 { Player::P1 } else { Player::P0 };
            // The chain: none, the k-th marble on the board, or any ring index of the tables.
            let with_marble: Vec<usize> =
                (0..cells.len()).filter(|&i| matches!(cells[i], Cell::Marble(_))).collect();
            let chain = match on_marble {
                None => None,
                Some(usize::MAX) => Ring::new(ring),
                Some(_) if with_marble.is_empty() => None,
                Some(k) => Ring::new(with_marble[k % with_marble.len()] as u8),
            };
            Setup { variant, cells, pool, captures, turn, chain, passes }
        })
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn arbitrary_setups(setup in arbitrary_setup()) {
        if let Ok(pos) = Position::from_setup(&setup) {
            check_valid(&pos)?;
            prop_assert_eq!(pos.to_setup(), setup);
        }
    }
}

proptest! {
    #![proptest_config(config(512))]

    /// A chain ring that is not a ring of the board (an index the board does not have) is refused.
    #[test]
    fn setup_with_a_chain_ring_off_the_board(k in any::<usize>(), ring in 37u8..64) {
        let corpus = corpus();
        let pos = corpus[k % corpus.len()];
        let ring = ring.max(pos.geometry().len() as u8);
        let mut setup = pos.to_setup();
        setup.chain = Ring::new(ring);
        prop_assert!(setup.chain.is_some());
        setup.passes = 0;
        prop_assert!(matches!(Position::from_setup(&setup), Err(SetupError::ChainRing(_))));
    }

    /// Indices past the 64-ring tables cannot be made into rings at all.
    #[test]
    fn rings_past_the_tables_cannot_be_built(i in any::<u8>()) {
        prop_assert_eq!(Ring::new(i).is_some(), i < 64);
        prop_assert_eq!(Ring::new(i).map(|r| r.index()), (i < 64).then_some(i as usize));
    }

    /// Moves and actions built by hand from any ring index of the tables (on the board or not) and
    /// any direction are checked, never trusted: an illegal one is refused, a legal one is generated.
    #[test]
    fn hand_built_moves(
        k in any::<usize>(),
        marble in 0usize..3,
        at in 0u8..64,
        remove in proptest::option::of(0u8..64),
        from in 0u8..64,
        dirs in proptest::collection::vec(0u8..6, 1..4),
    ) {
        hand_built(k, marble, at, remove, from, &dirs)?;
    }

    /// The same with indices the smaller boards do not have (up to 63): the checked `play`,
    /// `play_action` and `Game::play` must hand an illegal move back rather than panic while
    /// writing it in notation.
    #[test]
    fn hand_built_moves_off_the_board(
        k in any::<usize>(),
        marble in 0usize..3,
        at in 37u8..64,
        remove in proptest::option::of(37u8..64),
        from in 37u8..64,
        dirs in proptest::collection::vec(0u8..6, 1..4),
    ) {
        hand_built(k, marble, at, remove, from, &dirs)?;
    }
}

fn hand_built(
    k: usize,
    marble: usize,
    at: u8,
    remove: Option<u8>,
    from: u8,
    dirs: &[u8],
) -> TestResult {
    let corpus = corpus();
    let pos = corpus[k % corpus.len()];
    let marble = Marble::from_index(marble).unwrap();
    let ring = |i: u8| Ring::new(i).unwrap();
    let place = Placement { marble, at: ring(at), remove: remove.map(ring) };
    let mut chain = zertz_env::Chain::new(ring(from));
    for &d in dirs {
        chain = chain.with(Direction::new(d).unwrap());
    }
    let hop = Hop { from: ring(from), dir: Direction::new(dirs[0]).unwrap() };
    let moves = pos.legal_moves();
    let actions = pos.legal_actions();
    for m in [Move::Place(place), Move::Capture(chain), Move::Pass] {
        let legal = moves.contains(&m);
        prop_assert_eq!(pos.is_legal_move(&m), legal, "{:?} in {:?}", m, pos);
        prop_assert_eq!(pos.play(&m).is_ok(), legal);
        let mut game = Game::from_position(pos);
        prop_assert_eq!(game.play(&m).is_ok(), legal);
    }
    for a in [Action::Place(place), Action::Hop(hop), Action::Pass] {
        let legal = actions.contains(&a);
        prop_assert_eq!(pos.is_legal_action(&a), legal, "{:?} in {:?}", a, pos);
        prop_assert_eq!(pos.play_action(&a).is_ok(), legal);
        let mut game = Game::from_position(pos);
        prop_assert_eq!(game.play_action(&a).is_ok(), legal);
    }
    Ok(())
}

/// Smallest cases of the properties above.
#[test]
fn setup_chain_ring_off_the_board_is_refused() {
    let mut setup = Position::new(Variant::default(), Player::P0).to_setup();
    setup.chain = Ring::new(63);
    assert_eq!(Position::from_setup(&setup), Err(SetupError::ChainRing("?63".into())));
    assert!(Ring::new(64).is_none());
    assert!(Ring::new(255).is_none());
}

#[test]
fn checked_play_refuses_a_removal_ring_off_the_board() {
    let pos = Position::new(Variant::default(), Player::P0);
    let d4 = pos.geometry().parse_ring("d4").unwrap();
    let m = Move::Place(Placement { marble: Marble::White, at: d4, remove: Ring::new(63) });
    assert!(!pos.is_legal_move(&m));
    let err = pos.play(&m).unwrap_err();
    assert_eq!(err.notation, "Wd4,?63");
    assert_eq!(*err.position, pos);
}

// ------------------------------------------------------------------------------- move strings

fn move_strategy_texts() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(any::<u8>(), 0..40)
            .prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "[WGBwgbxX,a-j0-9 ]{0,16}",
        "[WGBwgb]?[a-jA-J][0-9]{1,3}(,[a-jA-J][0-9]{0,3})?",
        "[a-iA-I][0-9]{1,2}([xX][a-iA-I][0-9]{1,2}){0,30}",
        "(pass|PASS| pass |pas|passs)",
    ]
}

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn move_text_on_start_positions(text in move_strategy_texts()) {
        for pos in start_positions() {
            try_move_text(&pos, &text)?;
        }
    }

    #[test]
    fn move_text_on_game_positions(k in any::<usize>(), text in move_strategy_texts()) {
        let corpus = corpus();
        try_move_text(&corpus[k % corpus.len()], &text)?;
    }

    #[test]
    fn move_text_edits(
        k in any::<usize>(),
        pick in any::<usize>(),
        edits in proptest::collection::vec(edit(), 1..4),
    ) {
        let corpus = corpus();
        let pos = corpus[k % corpus.len()];
        let moves = pos.legal_moves();
        let valid = if moves.is_empty() {
            "pass".to_string()
        } else {
            pos.move_to_string(&moves[pick % moves.len()])
        };
        let text = apply_edits(&valid, &edits);
        try_move_text(&pos, &text)?;
        for start in start_positions() {
            try_move_text(&start, &text)?;
        }
    }
}

// ------------------------------------------------------------------------------- records

proptest! {
    #![proptest_config(config(1024))]

    #[test]
    fn record_arbitrary_strings(text in any::<String>()) {
        try_record(&text)?;
    }

    #[test]
    fn record_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        try_record(&String::from_utf8_lossy(&bytes))?;
    }

    #[test]
    fn record_near_the_format(
        su in "(Zertz|Zertz\\+11|Zertz\\+24|zertz\\+24|Other|)",
        nodes in proptest::collection::vec(
            "; (P0|P1|P-1|P2|TM)\\[([0-9]{1,3} )?(Start P[0-2]|RtoB [0-3] [0-3] [A-J] [0-9]{1,2}|\
             R- [A-J] [0-9]{1,2}|BtoB [A-J] [0-9] [A-J] [0-9]|BtoR 2 0 [A-J] [0-9]|R\\+ [A-J] [0-9]|\
             RtoR 2 0 1|Done|Resign|WinOnTime|time 0:01|id \"x\")\\]\n",
            0..30,
        ),
    ) {
        let text = format!("(;GM[22]SU[{su}]\n{})", nodes.concat());
        try_record(&text)?;
    }

    #[test]
    fn record_edits_of_real_games(
        k in any::<usize>(),
        nodes in proptest::collection::vec(node_edit(), 0..4),
        edits in proptest::collection::vec(edit(), 0..6),
    ) {
        let records = real_records();
        let text = apply_node_edits(&records[k % records.len()], &nodes);
        try_record(&apply_edits(&text, &edits))?;
    }
}

proptest! {
    #![proptest_config(config(256))]

    /// The record of a random game replays to the same game; edited, it never panics.
    #[test]
    fn record_edits_of_random_games(
        seed in any::<u64>(),
        nodes in proptest::collection::vec(node_edit(), 0..4),
        edits in proptest::collection::vec(edit(), 0..4),
    ) {
        let game = random_boardspace_game(seed);
        let text = record_of(&game);
        let replay = Record::parse(&text).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let replay = replay.replay().map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        // A record holds no passes: a game drawn by two passes ends, in the record, before them.
        let mut played = game.moves().to_vec();
        while played.last() == Some(&Move::Pass) {
            played.pop();
        }
        prop_assert_eq!(replay.game.moves(), &played[..], "{}", text);
        if let Some(Outcome::Win(p)) = game.outcome() {
            prop_assert_eq!(replay.end, End::Capture);
            prop_assert_eq!(replay.winner, Some(p));
        }
        try_record(&text)?;
        try_record(&apply_edits(&apply_node_edits(&text, &nodes), &edits))?;
    }
}
