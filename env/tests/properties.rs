//! Property tests: random games on every variant (6 boards × 2 marble sets), driven by a seed that
//! proptest chooses, with the rules' invariants checked at every step.
//!
//! Moves are picked by a small deterministic RNG (splitmix64) seeded from the proptest value, so a
//! failing case is reproduced by its seed alone. Games alternate at random between whole-turn moves
//! and single actions, so positions in the middle of a capture chain are visited too.

use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use zertz_env::{
    Action, Board, Chain, Direction, Game, Hop, Marble, MarbleSet, Move, Outcome, Placement,
    Player, Position, Ring, Variant,
};

type TestResult = Result<(), TestCaseError>;

/// A proptest configuration with `cases` cases. Failures are reported with their minimal input
/// (a seed reproduces a whole game), not written to regression files.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig { cases, failure_persistence: None, ..ProptestConfig::default() }
}

/// Whole turns after which a random game must be over (by the rules or by a third repetition).
/// Placement turns nearly always remove a ring, so random games end long before this.
const MAX_TURNS: usize = 1000;

/// `zertz_env`'s splitmix64 generator picks moves.
use zertz_env::SplitMix64 as Rng;

/// A random player.
fn random_player(rng: &mut Rng) -> Player {
    if rng.next_u64() & 1 == 0 { Player::P0 } else { Player::P1 }
}

/// How a random player picks among legal moves. Uniform play ends most games by captures while the
/// pool still holds marbles; a quiet player prefers moves after which no capture is possible, so
/// games run long enough to empty the pool, place captured marbles, pass and repeat positions.
#[derive(Clone, Copy, Debug)]
struct Policy {
    /// Random moves tried (at most) looking for one that leaves no capture; 0 for uniform play.
    quiet_tries: u32,
}

impl Policy {
    fn random(rng: &mut Rng) -> Policy {
        Policy { quiet_tries: [0, 0, 4, 30][rng.below(4)] }
    }

    fn pick<T: Copy>(&self, rng: &mut Rng, options: &[T], after: impl Fn(&T) -> Position) -> T {
        let mut choice = options[rng.below(options.len())];
        for _ in 0..self.quiet_tries {
            let next = after(&choice);
            if next.chain().is_none() && !next.has_capture() {
                break;
            }
            choice = options[rng.below(options.len())];
        }
        choice
    }
}

fn variants() -> Vec<Variant> {
    Variant::all().collect()
}

/// The single actions of a whole-turn move, in order.
fn actions_of(pos: &Position, m: &Move) -> Vec<Action> {
    match m {
        Move::Place(p) => vec![Action::Place(*p)],
        Move::Pass => vec![Action::Pass],
        Move::Capture(c) => {
            let mut at = c.from();
            c.dirs()
                .map(|dir| {
                    let h = Hop { from: at, dir };
                    at = pos.hop_landing(h).expect("a legal hop lands on the board");
                    Action::Hop(h)
                })
                .collect()
        }
    }
}

/// The first single action of a whole-turn move.
fn first_action(m: &Move) -> Action {
    match m {
        Move::Place(p) => Action::Place(*p),
        Move::Pass => Action::Pass,
        Move::Capture(c) => Action::Hop(Hop { from: c.from(), dir: c.dir(0) }),
    }
}

/// Plays a whole-turn move action by action, checking that the turn stays with the mover and the
/// chain marble follows the landing ring until the last hop.
fn play_by_actions(pos: &Position, m: &Move) -> Result<Position, TestCaseError> {
    let actions = actions_of(pos, m);
    let mut cur = *pos;
    for (i, a) in actions.iter().enumerate() {
        prop_assert!(
            cur.is_legal_action(a),
            "action {i} of {} illegal in {cur:?}",
            pos.move_to_string(m)
        );
        let next = cur.play_action(a).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let last = i + 1 == actions.len();
        if last {
            prop_assert_eq!(next.chain(), None);
            prop_assert_eq!(next.turn(), !pos.turn());
        } else {
            let Action::Hop(h) = a else { unreachable!("only chains have several actions") };
            prop_assert_eq!(next.chain(), cur.hop_landing(*h));
            prop_assert_eq!(next.turn(), pos.turn());
        }
        cur = next;
    }
    Ok(cur)
}

/// Everything about a single position that does not involve its moves.
fn check_position(pos: &Position) -> TestResult {
    prop_assert_eq!(pos.hash(), pos.compute_hash(), "stale hash in {:?}", pos);

    // Marbles are conserved.
    let set = pos.marble_set().counts();
    for m in Marble::ALL {
        let on_board = pos.marbles(m).count_ones();
        let total = on_board
            + pos.pool()[m] as u32
            + pos.captures(Player::P0)[m] as u32
            + pos.captures(Player::P1)[m] as u32;
        prop_assert_eq!(total, set[m] as u32, "{:?} not conserved in {:?}", m, pos);
    }

    // Marbles sit on rings, one per ring; rings belong to the board.
    let all = pos.geometry().all();
    prop_assert_eq!(pos.rings() & !all, 0);
    let (w, g, b) =
        (pos.marbles(Marble::White), pos.marbles(Marble::Grey), pos.marbles(Marble::Black));
    prop_assert_eq!(w & g, 0);
    prop_assert_eq!(w & b, 0);
    prop_assert_eq!(g & b, 0);
    prop_assert_eq!(pos.occupied() & !pos.rings(), 0);
    prop_assert_eq!(pos.vacant() | pos.occupied(), pos.rings());

    // A chain in progress can continue, and passes are reset.
    if let Some(c) = pos.chain() {
        prop_assert!(pos.hop_directions(c) != 0, "chain marble cannot jump in {:?}", pos);
        prop_assert_eq!(pos.passes(), 0);
    }
    prop_assert!(pos.passes() <= 2);

    // The position text and the setup round-trip.
    let text = pos.to_text();
    let back = Position::from_text(&text);
    prop_assert!(back.is_ok(), "{text:?} does not read back: {:?}", back.err());
    let back = back.unwrap();
    prop_assert_eq!(back, *pos);
    prop_assert_eq!(back.hash(), pos.hash());
    prop_assert_eq!(&back.to_text(), &text);
    let setup = pos.to_setup();
    let back = Position::from_setup(&setup);
    prop_assert!(back.is_ok(), "setup of {text:?} does not read back: {:?}", back.err());
    let back = back.unwrap();
    prop_assert_eq!(back, *pos);
    prop_assert_eq!(back.hash(), pos.hash());

    check_outcome(pos)
}

/// The outcome agrees with the captures, the rings and the passes.
fn check_outcome(pos: &Position) -> TestResult {
    let set = pos.marble_set();
    let wins = |p: Player| set.is_win(&pos.captures(p));
    prop_assert!(!(wins(Player::P0) && wins(Player::P1)), "both players win in {:?}", pos);
    let outcome = pos.outcome();
    prop_assert_eq!(pos.is_over(), outcome.is_some());
    if pos.chain().is_some() {
        prop_assert_eq!(outcome, None);
        return Ok(());
    }
    match outcome {
        None => {
            prop_assert!(!wins(Player::P0) && !wins(Player::P1));
            prop_assert!(pos.rings() != 0);
            prop_assert!(pos.passes() < 2);
        }
        Some(Outcome::Win(p)) => {
            prop_assert!(wins(p) || (pos.rings() == 0 && p == !pos.turn()), "bad win in {pos:?}");
            prop_assert!(!wins(!p));
        }
        Some(Outcome::Draw) => {
            prop_assert_eq!(pos.passes(), 2);
            prop_assert!(!wins(Player::P0) && !wins(Player::P1));
            prop_assert!(pos.rings() != 0);
        }
    }
    Ok(())
}

fn is_ring(pos: &Position, r: Option<Ring>) -> bool {
    r.is_some_and(|r| pos.has_ring(r))
}

/// Whether any marble can jump: a marble next to it, a vacant ring behind (rulebook, captures).
fn model_has_capture(pos: &Position) -> bool {
    let geo = pos.geometry();
    geo.rings().filter(|&r| pos.marble_at(r).is_some()).any(|r| {
        Direction::ALL.into_iter().any(|d| {
            let Some(over) = geo.neighbour(r, d) else { return false };
            let to = geo.neighbour(over, d);
            pos.marble_at(over).is_some()
                && is_ring(pos, Some(over))
                && is_ring(pos, to)
                && to.is_some_and(|t| pos.marble_at(t).is_none())
        })
    })
}

/// Vacant rings with two adjacent neighbouring positions that hold no ring (decisions.md, 1).
fn model_free_rings(pos: &Position) -> u64 {
    let geo = pos.geometry();
    let mut free = 0;
    for r in geo.rings() {
        if !pos.has_ring(r) || pos.marble_at(r).is_some() {
            continue;
        }
        let around: Vec<bool> =
            Direction::ALL.iter().map(|&d| is_ring(pos, geo.neighbour(r, d))).collect();
        if (0..6).any(|d| !around[d] && !around[(d + 1) % 6]) {
            free |= r.bit();
        }
    }
    free
}

/// Every placement: a colour of the supply (the pool, or the mover's captures once the pool is
/// empty) on a vacant ring, then a free ring removed, or none when no other ring is free.
fn model_placements(pos: &Position) -> BTreeSet<Move> {
    let supply = if pos.pool().total() == 0 { pos.captures(pos.turn()) } else { pos.pool() };
    let free = model_free_rings(pos);
    let mut out = BTreeSet::new();
    for marble in Marble::ALL.into_iter().filter(|&m| supply[m] > 0) {
        for at in pos.geometry().rings().filter(|&r| pos.has_ring(r) && pos.marble_at(r).is_none())
        {
            let rest: Vec<Ring> =
                pos.geometry().rings().filter(|&r| r != at && free & r.bit() != 0).collect();
            if rest.is_empty() {
                out.insert(Move::Place(Placement { marble, at, remove: None }));
            }
            for remove in rest {
                out.insert(Move::Place(Placement { marble, at, remove: Some(remove) }));
            }
        }
    }
    out
}

/// Collects every sequence of legal hops from `pos` until the turn passes, as whole-turn chains.
fn hop_sequences(
    pos: &Position,
    mover: Player,
    chain: Option<Chain>,
    out: &mut BTreeSet<Move>,
) -> TestResult {
    for a in pos.legal_actions() {
        let Action::Hop(h) = a else {
            return Err(TestCaseError::fail(format!("{a:?} among hops in {pos:?}")));
        };
        let c = chain.unwrap_or(Chain::new(h.from)).with(h.dir);
        let next = pos.play_action(&a).map_err(|e| TestCaseError::fail(e.to_string()))?;
        if next.turn() == mover {
            prop_assert_eq!(next.chain(), pos.hop_landing(h));
            hop_sequences(&next, mover, Some(c), out)?;
        } else {
            prop_assert_eq!(next.chain(), None);
            out.insert(Move::Capture(c));
        }
    }
    Ok(())
}

/// Everything about the legal moves and actions of a position.
fn check_moves(pos: &Position) -> TestResult {
    let moves = pos.legal_moves();
    let actions = pos.legal_actions();
    prop_assert_eq!(moves.len(), pos.count_legal_moves() as usize, "count differs in {:?}", pos);

    if pos.is_over() {
        prop_assert!(moves.is_empty(), "moves in finished {pos:?}");
        prop_assert!(actions.is_empty(), "actions in finished {pos:?}");
        prop_assert!(!pos.is_legal_move(&Move::Pass));
        prop_assert!(!pos.is_legal_action(&Action::Pass));
        return Ok(());
    }
    prop_assert!(!moves.is_empty() && !actions.is_empty(), "no move in {pos:?}");

    // No duplicates.
    let move_set: BTreeSet<Move> = moves.iter().copied().collect();
    prop_assert_eq!(move_set.len(), moves.len(), "duplicate moves in {:?}", pos);
    let action_set: BTreeSet<Action> = actions.iter().copied().collect();
    prop_assert_eq!(action_set.len(), actions.len(), "duplicate actions in {:?}", pos);

    // The first actions of the whole-turn moves are exactly the legal actions.
    let firsts: BTreeSet<Action> = moves.iter().map(first_action).collect();
    prop_assert_eq!(&firsts, &action_set, "first actions differ from actions in {:?}", pos);

    // Captures are compulsory; a chain binds its marble.
    let captures = moves.iter().filter(|m| matches!(m, Move::Capture(_))).count();
    prop_assert!(captures == 0 || captures == moves.len(), "captures mixed with other moves");
    prop_assert_eq!(captures > 0, pos.has_capture() || pos.chain().is_some());
    if let Some(c) = pos.chain() {
        for m in &moves {
            prop_assert!(matches!(m, Move::Capture(ch) if ch.from() == c), "{m:?} during chain");
        }
        for a in &actions {
            prop_assert!(matches!(a, Action::Hop(h) if h.from == c), "{a:?} during chain");
        }
    }
    if moves.contains(&Move::Pass) {
        prop_assert_eq!(moves.len(), 1);
        prop_assert_eq!(pos.supply().total(), 0);
    }

    // The rules, written again from the public geometry: jumps, free rings, placements.
    prop_assert_eq!(pos.has_capture(), model_has_capture(pos), "capture rule in {:?}", pos);
    prop_assert_eq!(pos.free_rings(), model_free_rings(pos), "free rings in {:?}", pos);
    if captures == 0 {
        let mut expected = model_placements(pos);
        if expected.is_empty() {
            expected.insert(Move::Pass);
        }
        prop_assert_eq!(&move_set, &expected, "placements differ from the rules in {:?}", pos);
    } else {
        // Whole capture turns are exactly the sequences of single hops that end the turn.
        let mut chains = BTreeSet::new();
        hop_sequences(pos, pos.turn(), None, &mut chains)?;
        prop_assert_eq!(&move_set, &chains, "chains differ from hop sequences in {:?}", pos);
    }

    for m in &moves {
        prop_assert!(pos.is_legal_move(m), "generated {m:?} is not legal in {pos:?}");
        let next = pos.play(m);
        prop_assert!(next.is_ok(), "generated {m:?} does not play in {pos:?}");
        let next = next.unwrap();
        prop_assert_eq!(next.turn(), !pos.turn());
        prop_assert_eq!(next.chain(), None);
        prop_assert_eq!(next.rings() & !pos.rings(), 0, "rings came back");
        prop_assert_eq!(next.hash(), next.compute_hash(), "{:?} after {:?}", pos, m);

        let s = pos.move_to_string(m);
        prop_assert_eq!(pos.parse_move(&s), Ok(*m), "{} does not parse back", s);
        prop_assert_eq!(pos.parse_legal_move(&s), Ok(*m));

        let by_actions = play_by_actions(pos, m)?;
        prop_assert_eq!(by_actions, next, "{} by actions differs", s);
        prop_assert_eq!(by_actions.hash(), next.hash());
    }

    for a in &actions {
        prop_assert!(pos.is_legal_action(a));
        let next = pos.play_action(a);
        prop_assert!(next.is_ok(), "generated {a:?} does not play in {pos:?}");
        let next = next.unwrap();
        prop_assert_eq!(next.hash(), next.compute_hash());
        match (a, next.chain()) {
            (Action::Hop(h), Some(c)) => {
                prop_assert_eq!(Some(c), pos.hop_landing(*h));
                prop_assert_eq!(next.turn(), pos.turn());
            }
            _ => {
                prop_assert_eq!(next.turn(), !pos.turn());
            }
        }
        let s = pos.action_to_string(a);
        prop_assert_eq!(pos.parse_action(&s), Ok(*a), "{} does not parse back", s);
        prop_assert_eq!(pos.parse_legal_action(&s), Ok(*a));
    }
    Ok(())
}

/// How a random game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The position is over by the rules (win or two passes).
    Rules,
    /// A turn-start position occurred for the third time.
    Repetition,
}

/// Plays one random game, checking every position. Returns how it ended and the whole turns played.
fn random_game(variant: Variant, seed: u64) -> Result<(End, usize), TestCaseError> {
    let mut rng = Rng(seed);
    let policy = Policy::random(&mut rng);
    let mut pos = Position::new(variant, random_player(&mut rng));
    let mut turns = 0;
    // Turn-start positions seen, by hash (repetition, decisions.md 6, is not the Position's job).
    let mut seen: HashMap<u64, u32> = HashMap::new();
    seen.insert(pos.hash(), 1);
    loop {
        check_position(&pos)?;
        check_moves(&pos)?;
        if pos.is_over() {
            if let Some(Outcome::Win(p)) = pos.outcome() {
                // Only the player who just moved can have won.
                prop_assert_eq!(p, !pos.turn(), "winner did not make the last move: {:?}", pos);
            }
            if pos.outcome() == Some(Outcome::Draw) {
                prop_assert_eq!(pos.passes(), 2);
            }
            return Ok((End::Rules, turns));
        }
        prop_assert!(turns < MAX_TURNS, "no end after {MAX_TURNS} turns ({policy:?}): {pos:?}");
        let prev = pos;
        if pos.chain().is_some() || rng.next_u64() & 1 == 0 {
            let actions = pos.legal_actions();
            let a = policy.pick(&mut rng, &actions, |a| pos.play_action(a).expect("legal action"));
            pos = pos.play_action(&a).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if pos.chain().is_none() {
                turns += 1;
            }
            if a == Action::Pass {
                prop_assert_eq!(pos.passes(), prev.passes() + 1);
            } else {
                prop_assert_eq!(pos.passes(), 0);
            }
        } else {
            let moves = pos.legal_moves();
            let m = policy.pick(&mut rng, &moves, |m| pos.play(m).expect("legal move"));
            pos = pos.play(&m).map_err(|e| TestCaseError::fail(e.to_string()))?;
            turns += 1;
            if m == Move::Pass {
                prop_assert_eq!(pos.passes(), prev.passes() + 1);
            } else {
                prop_assert_eq!(pos.passes(), 0);
            }
        }
        prop_assert!(pos.rings().count_ones() <= prev.rings().count_ones());
        prop_assert_eq!(pos.rings() & !prev.rings(), 0, "rings came back");
        // Captures only grow, except when a player places from their own captures.
        for p in Player::ALL {
            let (before, after) = (prev.captures(p), pos.captures(p));
            if !(prev.pool().total() == 0 && p == prev.turn()) {
                for m in Marble::ALL {
                    prop_assert!(after[m] >= before[m], "captures of {p} shrank");
                }
            }
        }
        if pos.chain().is_none() {
            let n = seen.entry(pos.hash()).or_insert(0);
            *n += 1;
            if *n >= 3 && !pos.is_over() {
                check_position(&pos)?;
                check_moves(&pos)?;
                return Ok((End::Repetition, turns));
            }
        }
    }
}

fn random_games(board: Board, seed: u64) -> TestResult {
    for marbles in MarbleSet::ALL {
        random_game(Variant::new(board, marbles), seed)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(24))]

    #[test]
    fn random_games_37(seed in any::<u64>()) { random_games(Board::R37, seed)?; }

    #[test]
    fn random_games_40(seed in any::<u64>()) { random_games(Board::R40, seed)?; }

    #[test]
    fn random_games_43(seed in any::<u64>()) { random_games(Board::R43, seed)?; }

    #[test]
    fn random_games_44(seed in any::<u64>()) { random_games(Board::R44, seed)?; }

    #[test]
    fn random_games_48(seed in any::<u64>()) { random_games(Board::R48, seed)?; }

    #[test]
    fn random_games_61(seed in any::<u64>()) { random_games(Board::R61, seed)?; }
}

/// Plays the same random game three ways in [`Game`]: whole-turn moves, single actions and notation.
fn game_three_ways(variant: Variant, seed: u64) -> TestResult {
    let mut rng = Rng(seed);
    let policy = Policy::random(&mut rng);
    let first = random_player(&mut rng);
    let mut by_moves = Game::new(variant, first);
    let mut by_actions = Game::new(variant, first);
    let mut by_text = Game::new(variant, first);
    // Turn-start positions seen, by hash: the model of third repetition.
    let mut seen: HashMap<u64, u32> = HashMap::new();
    seen.insert(by_moves.position().hash(), 1);
    let mut repeated = false;
    for _ in 0..MAX_TURNS {
        if by_moves.is_over() {
            break;
        }
        let moves = by_moves.legal_moves();
        prop_assert_eq!(&moves, &by_actions.legal_moves());
        let pos = *by_moves.position();
        let m = policy.pick(&mut rng, &moves, |m| pos.play(m).expect("legal move"));

        // An illegal move leaves the game as it was.
        if !moves.contains(&Move::Pass) {
            let before = by_moves.moves().len();
            prop_assert!(by_moves.play(&Move::Pass).is_err());
            prop_assert_eq!(by_moves.moves().len(), before);
            prop_assert_eq!(by_moves.position(), &pos);
        }

        by_moves.play(&m).map_err(|e| TestCaseError::fail(e.to_string()))?;
        for a in actions_of(&pos, &m) {
            by_actions.play_action(&a).map_err(|e| TestCaseError::fail(e.to_string()))?;
        }
        let parsed = by_text.play_str(&pos.move_to_string(&m));
        prop_assert_eq!(parsed, Ok(m));

        prop_assert_eq!(by_moves.moves(), by_actions.moves());
        prop_assert_eq!(by_moves.moves(), by_text.moves());
        prop_assert_eq!(by_moves.moves().last(), Some(&m));
        prop_assert_eq!(by_moves.position(), by_actions.position());
        prop_assert_eq!(by_moves.position(), by_text.position());
        prop_assert_eq!(by_moves.outcome(), by_actions.outcome());
        prop_assert_eq!(by_moves.outcome(), by_text.outcome());
        let n = seen.entry(by_moves.position().hash()).or_insert(0);
        *n += 1;
        repeated |= *n >= 3 && !by_moves.position().is_over();
        prop_assert_eq!(by_moves.is_repetition(), repeated);
        prop_assert_eq!(by_actions.is_repetition(), repeated);
        prop_assert_eq!(by_text.is_repetition(), repeated);
        if repeated {
            prop_assert_eq!(by_moves.outcome(), Some(Outcome::Draw));
        } else {
            prop_assert_eq!(by_moves.outcome(), by_moves.position().outcome());
        }
    }
    prop_assert!(by_moves.is_over(), "game not over after {MAX_TURNS} turns");
    prop_assert!(by_moves.legal_moves().is_empty());
    prop_assert!(by_actions.legal_moves().is_empty());
    prop_assert!(by_text.play_str("pass").is_err());

    // Replaying the move list from the start reaches the same position.
    let mut pos = *by_moves.start();
    for m in by_moves.moves() {
        pos = pos.play(m).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    prop_assert_eq!(&pos, by_moves.position());
    Ok(())
}

/// A position in the middle of a capture chain, reached by a random game played action by action.
fn mid_chain_position(seed: u64) -> Option<Position> {
    let mut rng = Rng(seed);
    for _ in 0..20 {
        let variant = variants()[rng.below(12)];
        let mut pos = Position::new(variant, random_player(&mut rng));
        while !pos.is_over() {
            if pos.chain().is_some() {
                return Some(pos);
            }
            let actions = pos.legal_actions();
            pos = pos.play_action(&actions[rng.below(actions.len())]).expect("legal action");
        }
    }
    None
}

/// A game that starts in the middle of a capture chain gets the rest of the chain as its first move
/// whether the chain is played whole or hop by hop ("when the action completes a turn (…the last hop
/// of a chain…), the turn joins the move list").
fn game_from_mid_chain(seed: u64) -> TestResult {
    let Some(start) = mid_chain_position(seed) else {
        return Err(TestCaseError::reject("no chain in these games"));
    };
    let mut rng = Rng(seed ^ 0x5555);
    let mut by_moves = Game::from_position(start);
    let mut by_actions = Game::from_position(start);
    let moves = by_moves.legal_moves();
    prop_assert!(!moves.is_empty());
    let m = moves[rng.below(moves.len())];
    by_moves.play(&m).map_err(|e| TestCaseError::fail(e.to_string()))?;
    for a in actions_of(&start, &m) {
        by_actions.play_action(&a).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    prop_assert_eq!(by_moves.position(), by_actions.position());
    prop_assert_eq!(by_moves.moves(), &[m][..], "from {:?}", start);
    prop_assert_eq!(by_actions.moves(), &[m][..], "from {:?}", start);
    Ok(())
}

/// The smallest case of the property above: one hop left in the chain.
#[test]
fn game_from_a_mid_chain_position_records_the_chain_played_hop_by_hop() {
    // The white marble on d4 is in the middle of a chain and must jump d5 to land on d6.
    let text = "37 standard ..../...../....../...wb../....../...../.... 5/8/9 0/0/0 0/0/0 P0 d4 0";
    let start = Position::from_text(text).unwrap();
    let moves = start.legal_moves();
    assert_eq!(moves.len(), 1);
    assert_eq!(start.move_to_string(&moves[0]), "d4xd6");
    let hop = start.parse_legal_action("d4xd6").unwrap();

    let mut by_moves = Game::from_position(start);
    by_moves.play(&moves[0]).unwrap();
    assert_eq!(by_moves.moves(), &moves[..]);

    let mut by_actions = Game::from_position(start);
    by_actions.play_action(&hop).unwrap();
    assert_eq!(by_actions.position(), by_moves.position());
    assert_eq!(by_actions.moves(), &moves[..], "the completed chain is missing from the move list");
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn game_from_a_mid_chain_position_records_the_chain(seed in any::<u64>()) {
        game_from_mid_chain(seed)?;
    }

    #[test]
    fn game_play_and_play_action_keep_the_same_moves(seed in any::<u64>(), v in 0usize..12) {
        game_three_ways(variants()[v], seed)?;
    }
}

/// The random players reach the rare parts of the rules (empty pool, passes, draws, long chains,
/// an emptied board, repetition), so the properties above are checked there too. Each such position
/// met here gets the full checks.
#[test]
fn random_games_reach_every_rule() {
    let mut pool_empty = 0;
    let mut from_captures = 0;
    let mut passes = 0;
    let mut pass_draws = 0;
    let mut repetitions = 0;
    let mut long_chains = 0;
    let mut board_emptied = 0;
    let mut checked = 0;
    for (k, variant) in variants().into_iter().enumerate() {
        for seed in 0..40u64 {
            let mut rng = Rng(seed * 12 + k as u64);
            let policy = Policy { quiet_tries: 30 };
            let mut game = Game::new(variant, random_player(&mut rng));
            while !game.is_over() {
                assert!(game.moves().len() < MAX_TURNS);
                let pos = *game.position();
                let moves = game.legal_moves();
                let m = policy.pick(&mut rng, &moves, |m| pos.play(m).expect("legal move"));
                let interesting = match m {
                    Move::Pass => {
                        passes += 1;
                        true
                    }
                    Move::Capture(c) if c.len() >= 3 => {
                        long_chains += 1;
                        true
                    }
                    Move::Place(_) if pos.pool().total() == 0 => {
                        from_captures += 1;
                        true
                    }
                    _ => false,
                };
                game.play(&m).expect("legal move");
                let next = *game.position();
                if next.pool().total() == 0 && pos.pool().total() > 0 {
                    pool_empty += 1;
                }
                if interesting || next.is_over() {
                    for p in [pos, next] {
                        check_position(&p).unwrap();
                        check_moves(&p).unwrap();
                        checked += 1;
                    }
                }
                if let Move::Capture(c) = m {
                    // The intermediate positions of the chain, hop by hop.
                    let mut cur = pos;
                    for a in actions_of(&pos, &m).into_iter().take(c.len() - 1) {
                        cur = cur.play_action(&a).expect("legal hop");
                        assert!(cur.chain().is_some());
                        check_position(&cur).unwrap();
                        check_moves(&cur).unwrap();
                    }
                }
            }
            let end = *game.position();
            if game.is_repetition() {
                repetitions += 1;
            } else if end.outcome() == Some(Outcome::Draw) {
                pass_draws += 1;
            } else if end.rings() == 0 {
                board_emptied += 1;
            }
        }
    }
    let counts = [
        ("pool emptied", pool_empty),
        ("placements from captures", from_captures),
        ("passes", passes),
        ("draws by two passes", pass_draws),
        ("draws by repetition", repetitions),
        ("chains of 3+ hops", long_chains),
        ("boards emptied", board_emptied),
    ];
    eprintln!("{counts:?}, {checked} positions checked");
    for (what, n) in counts {
        assert!(n > 0, "random games never reach {what}: {counts:?}");
    }
}
