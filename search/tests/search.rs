//! The batched PUCT search (`zertz_search::mcts`) on small positions with known answers.
//!
//! Positions are written in the text format of `zertz_env::setup`, actions in the notation of
//! `zertz_env::notation`. Every position states the facts its test relies on (which moves win,
//! which lose) and checks them with the rules before searching, so that a change of the
//! rules cannot make a search test pass for the wrong reason.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use zertz_env::encode::{GLOBALS, Shape};
use zertz_env::{
    Action, ActionSpace, Board, MarbleSet, Outcome, Player, Position, SplitMix64, Variant,
};
use zertz_search::evaluator::batch_lengths;
use zertz_search::mcts::{Finished, Noise, RootInfo, Scratch, Tree, search, search_interruptible};
use zertz_search::{
    Batch, EvalError, Evaluator, Output, RolloutEvaluator, SearchConfig, UniformEvaluator,
};

// -------------------------------------------------------------------------------------- positions

/// P0 holds 0/4/0 and needs one more grey. a1 is a vacant ring cut off from the rest: a marble
/// placed there is claimed at once (decisions 2), so `Ga1` wins and nothing else does. The other
/// vacant rings (d3, d4) have all six neighbours and are never free, so a1 is the only removal.
const ISOLATION_WIN: &str =
    "37 standard .---/-----/-wbw--/-b..b--/-wbb--/-----/---- 1/1/1 0/4/0 2/3/4 P0 - 0";

/// P0 holds 2/0/0. The black on d2 jumps the white on d3 into d4 and must go on: over the white
/// on d5 into d6 (a fourth white: P0 wins) or over the grey on c4 into b4 (no win). P0's other
/// captures, d2xf2 and d3xd1, win nothing.
const CHAIN_WIN: &str =
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 - 0";

/// As [`CHAIN_WIN`], but P0 is in the middle of a capture chain with the marble on d2: d2xd4
/// then d4xd6 wins (two decisions of P0 below the root), d2xf2 ends the chain without a win.
const CHAIN_ROOT: &str =
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 d2 0";

/// P1 holds 3/2/2 and needs a fourth white (or a third grey and a third black). Of P0's nine
/// placements of a grey, eight let P1 win at once, by jumping the white on e4 or by a placement
/// that claims it; only `Ge5,e3` does not, and it wins for P0 four actions later whatever P1
/// does.
const FORCED_LOSS: &str =
    "37 standard ----/-----/------/---bbb-/--.w../---b./---- 0/2/0 2/4/4 3/2/2 P0 - 0";

/// P1 holds 3/3/2 and needs a fourth white or a third black. Of P0's 25 placements of a black,
/// 24 let P1 win at once (by a capture or by a placement that claims a group); only `Ba4,b5`
/// does not, and after it P0 wins with the next placement whatever P1 does.
const ONE_SAFE_OF_25: &str =
    "37 standard ---./----./----.-/----b.g/----w./---.-/---- 0/0/3 2/4/4 3/3/2 P0 - 0";

/// Rulebook diagram 5 (from `env/tests/rules.rs`): `Bb1,a3`, then P1's forced `c1xa1`, then
/// `Wa2,b1` cuts off two whites and wins.
const DIAGRAM_5: &str =
    "37 standard ..../.--../w...../-....b./....../..g../.... 1/3/8 2/0/0 2/4/1 P0 - 0";

/// Rulebook diagram 3 (from `env/tests/rules.rs`): four capture chains to choose from.
const DIAGRAM_3: &str =
    "37 standard ..-./-.b../-g..../..gw.../.b-.../-..../.... 5/6/8 0/0/0 0/0/0 P0 - 0";

/// From `env/tests/rules.rs`: both players can only pass; two passes draw.
const NOTHING_TO_DO: &str = "61 blitz bb--./b.g-b-/-bg----/------gg/.b----g.w/------ww/-bb----/g.w-b-/gw--. 0/0/0 0/0/0 0/0/0 P0 - 0";

// ---------------------------------------------------------------------------------------- helpers

fn pos(text: &str) -> Position {
    Position::from_text(text).unwrap_or_else(|e| panic!("bad position {text:?}: {e}"))
}

fn action(p: &Position, text: &str) -> Action {
    p.parse_legal_action(text).unwrap_or_else(|e| panic!("{text} in {}: {e}", p.to_text()))
}

fn start() -> Position {
    Position::new(Variant::default(), Player::P0)
}

fn config(leaves_per_round: u32) -> SearchConfig {
    SearchConfig { leaves_per_round, ..SearchConfig::default() }
}

fn run(trees: &mut [Tree], sims: &[u32], config: &SearchConfig, eval: &dyn Evaluator) -> Scratch {
    let mut scratch = Scratch::default();
    search(trees, sims, config, eval, &mut scratch).expect("search");
    scratch
}

/// A fresh tree on `p` after `sims` simulations.
fn searched(p: Position, sims: u32, config: &SearchConfig, eval: &dyn Evaluator) -> Tree {
    let mut trees = vec![Tree::new(p)];
    run(&mut trees, &[sims], config, eval);
    trees.pop().unwrap()
}

/// The action a player takes: the most visited of the root's candidates (the first in prior
/// order on ties; a proven win when there is one, never an avoidable proven loss), and its
/// visits.
fn most_visited(tree: &Tree) -> (Action, u32) {
    let candidates = tree.root_candidates();
    let mut best = *candidates.first().expect("the root has visited children");
    for &(a, v) in &candidates {
        if v > best.1 {
            best = (a, v);
        }
    }
    best
}

fn best_name(tree: &Tree) -> String {
    tree.position().action_to_string(&most_visited(tree).0)
}

fn visits_of(info: &RootInfo, a: &Action) -> u32 {
    info.visits.iter().find(|(b, _)| b == a).map_or(0, |&(_, v)| v)
}

/// The single actions of `p` after which the mover has won.
fn winning_actions(p: &Position) -> Vec<String> {
    let mover = p.turn();
    let mut v: Vec<String> = p
        .legal_actions()
        .iter()
        .filter(|a| p.play_action(a).unwrap().outcome() == Some(Outcome::Win(mover)))
        .map(|a| p.action_to_string(a))
        .collect();
    v.sort();
    v
}

/// The game value for P0 (+1 win, -1 loss, 0 draw or not decided) with `depth` more actions.
fn minimax(p: &Position, depth: u32) -> i8 {
    if let Some(o) = p.outcome() {
        return o.score(Player::P0);
    }
    if depth == 0 {
        return 0;
    }
    let values =
        p.legal_actions().into_iter().map(|a| minimax(&p.play_action(&a).unwrap(), depth - 1));
    if p.turn() == Player::P0 { values.max().unwrap() } else { values.min().unwrap() }
}

/// Checks what must hold of any searched tree: the root's own visit plus its children's visits
/// make its total, the visit policy is a distribution over legal actions that matches the visits,
/// and the value is in range.
fn check_tree(tree: &Tree) {
    let p = tree.position();
    let info = tree.root_info();
    assert_eq!(info.total, tree.root_visits());
    assert!((-1.0..=1.0).contains(&info.value), "root value {}", info.value);
    let children: u32 = info.visits.iter().map(|&(_, v)| v).sum();
    if p.is_over() {
        assert!(info.visits.is_empty(), "a finished game has no children");
    } else if info.total > 0 && p.count_legal_actions() == 1 && children == info.total {
        // A forced root reached by tree reuse: a simulation passed through it, unevaluated.
    } else if info.total > 0 {
        assert_eq!(children, info.total - 1, "children's visits + 1 == root visits");
    } else {
        assert!(info.visits.is_empty());
    }
    let space = ActionSpace::new(p.board());
    let mut mask = vec![false; space.len()];
    p.legal_action_mask(&mut mask);
    let mut policy = vec![f32::NAN; space.len()];
    tree.visit_policy(&mut policy);
    for (i, (&x, &legal)) in policy.iter().zip(&mask).enumerate() {
        assert!(x.is_finite() && x >= 0.0, "policy[{i}] = {x}");
        assert!(legal || x == 0.0, "policy[{i}] = {x} on an illegal action");
    }
    let sum: f32 = policy.iter().sum();
    if children > 0 {
        assert!((sum - 1.0).abs() < 1e-4, "visit policy sums to {sum}");
        // Over the candidates: proven wins take it all, avoidable proven losses none.
        let candidates = tree.root_candidates();
        let total: u32 = candidates.iter().map(|&(_, v)| v).sum();
        for &(a, v) in &info.visits {
            assert!(p.is_legal_action(&a), "child {} is illegal", p.action_to_string(&a));
            let want = candidates
                .iter()
                .find(|&&(c, _)| c == a)
                .map_or(0.0, |&(_, v)| v as f32 / total as f32);
            assert!((policy[space.index(&a)] - want).abs() < 1e-6, "{v} visits");
        }
    } else {
        assert_eq!(sum, 0.0);
    }
    check_root_children(tree);
}

/// What must hold of [`Tree::root_children`]: one child per legal action once the root is
/// expanded, the visited ones first and as [`Tree::root_info`] lists them, priors that sum to 1,
/// values in range whose visit-weighted sum is the root's value sum less its own first
/// evaluation (a value in `-1..=1`).
fn check_root_children(tree: &Tree) {
    let p = tree.position();
    let info = tree.root_info();
    let children = tree.root_children();
    if p.is_over() || info.total == 0 {
        assert!(children.is_empty());
        return;
    }
    assert_eq!(children.len(), p.count_legal_actions(), "one child per legal action");
    let visited: Vec<(Action, u32)> =
        children.iter().filter(|c| c.visits > 0).map(|c| (c.action, c.visits)).collect();
    assert_eq!(visited, info.visits, "the visited children, in root_info's order");
    assert!(children[..visited.len()].iter().all(|c| c.visits > 0), "visited ones first");
    let priors: f32 = children.iter().map(|c| c.prior).sum();
    assert!((priors - 1.0).abs() < 0.01, "priors sum to {priors}");
    let mut weighted = 0.0f64;
    for c in &children {
        assert!(p.is_legal_action(&c.action));
        assert!((-1.0..=1.0).contains(&c.value), "value {}", c.value);
        assert!(c.visits > 0 || c.value == 0.0);
        weighted += f64::from(c.value) * f64::from(c.visits);
    }
    if info.proven.is_some() {
        return; // the root's value is exact, not the mean of its visits
    }
    let own = f64::from(info.value) * f64::from(info.total) - weighted;
    let slack = 1.0 + 1e-4 * f64::from(info.total);
    assert!(own.abs() <= slack, "the root's own evaluation would be {own}");
}

// ------------------------------------------------------------------------------------- evaluators

/// Fails on every call.
#[derive(Debug)]
struct Failing;

impl Evaluator for Failing {
    fn evaluate(&self, _batch: &Batch<'_>, _out: &mut Output<'_>) -> Result<(), EvalError> {
        Err(EvalError("no model".to_string()))
    }
}

/// Answers like [`UniformEvaluator`] for `ok` calls, then fails.
#[derive(Debug)]
struct FailsLater {
    ok: usize,
    calls: AtomicUsize,
}

impl Evaluator for FailsLater {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.ok {
            return Err(EvalError("out of memory".to_string()));
        }
        UniformEvaluator.evaluate(batch, out)
    }
}

/// In every position, prefers the legal action with the highest index (read from the legal mask
/// of the batch) with a logit of 3; every other logit is 0. Value 0.
#[derive(Debug)]
struct PreferLast;

impl Evaluator for PreferLast {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        let a = ActionSpace::new(batch.board).len();
        out.logits.fill(0.0);
        out.values.fill(0.0);
        for i in 0..batch.len() {
            let mask = &batch.masks[i * a..(i + 1) * a];
            let last = mask.iter().rposition(|&m| m).expect("a legal action");
            out.logits[i * a + last] = 3.0;
        }
        Ok(())
    }
}

/// Says that P0 wins everywhere: `+scale` when P0 is to move, `-scale` when P1 is (values are
/// from the perspective of the player to move). Search clamps the values to `-1..=1`.
#[derive(Debug)]
struct P0Wins {
    scale: f32,
}

impl Evaluator for P0Wins {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        out.logits.fill(0.0);
        for (p, v) in batch.positions.iter().zip(out.values.iter_mut()) {
            *v = if p.turn() == Player::P0 { self.scale } else { -self.scale };
        }
        Ok(())
    }
}

/// Checks every batch against the positions it carries, counts calls and positions, and answers
/// like [`UniformEvaluator`].
#[derive(Debug)]
struct Checking {
    encode: bool,
    calls: AtomicUsize,
    positions: AtomicUsize,
    largest: AtomicUsize,
}

impl Checking {
    fn new(encode: bool) -> Checking {
        Checking {
            encode,
            calls: AtomicUsize::new(0),
            positions: AtomicUsize::new(0),
            largest: AtomicUsize::new(0),
        }
    }
}

impl Evaluator for Checking {
    fn wants_encoding(&self) -> bool {
        self.encode
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        let b = batch.len();
        assert!(b > 0, "empty batch");
        let space = ActionSpace::new(batch.board);
        assert_eq!(out.logits.len(), b * space.len());
        assert_eq!(out.values.len(), b);
        let (planes, globals, masks) = batch_lengths(batch.board, b);
        if self.encode {
            assert_eq!(
                (batch.planes.len(), batch.globals.len(), batch.masks.len()),
                (planes, globals, masks)
            );
        } else {
            assert!(batch.planes.is_empty() && batch.globals.is_empty() && batch.masks.is_empty());
        }
        let shape = Shape::of(batch.board);
        let mut want_planes = vec![0.0; shape.planes_len()];
        let mut want_globals = vec![0.0; GLOBALS];
        let mut want_mask = vec![false; space.len()];
        for (i, p) in batch.positions.iter().enumerate() {
            assert_eq!(p.board(), batch.board);
            assert!(!p.is_over(), "a finished game was sent to the evaluator: {}", p.to_text());
            if self.encode {
                p.encode(&mut want_planes, &mut want_globals);
                p.legal_action_mask(&mut want_mask);
                let n = shape.planes_len();
                assert_eq!(&batch.planes[i * n..(i + 1) * n], &want_planes[..], "planes {i}");
                assert_eq!(&batch.globals[i * GLOBALS..(i + 1) * GLOBALS], &want_globals[..]);
                assert_eq!(&batch.masks[i * space.len()..(i + 1) * space.len()], &want_mask[..]);
            }
        }
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.positions.fetch_add(b, Ordering::SeqCst);
        self.largest.fetch_max(b, Ordering::SeqCst);
        // Garbage in the logits of illegal actions must not matter.
        out.logits.fill(0.0);
        if self.encode {
            for (l, &m) in out.logits.iter_mut().zip(batch.masks) {
                if !m {
                    *l = 1e6;
                }
            }
        }
        out.values.fill(0.0);
        Ok(())
    }
}

/// Priors in a random order: logits drawn in `0..spread` from the position and the seed. Value 0.
#[derive(Debug)]
struct Scrambled {
    seed: u64,
    spread: f32,
}

impl Evaluator for Scrambled {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        let a = ActionSpace::new(batch.board).len();
        for (i, p) in batch.positions.iter().enumerate() {
            let mut rng = SplitMix64(self.seed ^ p.hash());
            for l in &mut out.logits[i * a..(i + 1) * a] {
                *l = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32 * self.spread;
            }
        }
        out.values.fill(0.0);
        Ok(())
    }
}

fn rollouts() -> RolloutEvaluator {
    RolloutEvaluator { rollouts: 4, seed: 7 }
}

/// The evaluators that the known-answer tests run with: uniform priors (children tried in the
/// order the actions are generated), random playouts, and priors in several random orders, so
/// that no answer can come from the order of generation alone.
fn evaluators() -> Vec<Box<dyn Evaluator>> {
    let mut v: Vec<Box<dyn Evaluator>> = vec![Box::new(UniformEvaluator), Box::new(rollouts())];
    v.extend((0..6).map(|seed| Box::new(Scrambled { seed, spread: 2.0 }) as Box<dyn Evaluator>));
    v
}

// ---------------------------------------------------------------------------- 1. forced wins

#[test]
fn a_placement_that_wins_by_isolation_is_found() {
    let p = pos(ISOLATION_WIN);
    assert_eq!(winning_actions(&p), ["Ga1"]);
    assert_eq!(p.legal_actions().len(), 9);
    let win = action(&p, "Ga1");
    for (k, eval) in evaluators().iter().enumerate() {
        for leaves in [1, 8] {
            let tree = searched(p, 600, &config(leaves), eval.as_ref());
            check_tree(&tree);
            let info = tree.root_info();
            assert_eq!(most_visited(&tree).0, win, "evaluator {k}, leaves {leaves}: {info:?}");
            // Proven at once: the search stops there.
            assert_eq!(info.proven, Some(1), "evaluator {k}, leaves {leaves}: {info:?}");
            assert_eq!(info.value, 1.0, "a win in one: root value ({info:?})");
        }
    }
}

#[test]
fn root_children_value_a_win_for_the_root_mover() {
    // Ga1 wins for P0 at once: its value is exactly 1 from the root's view, whatever the
    // evaluator says elsewhere.
    let p = pos(ISOLATION_WIN);
    let win = action(&p, "Ga1");
    let tree = searched(p, 300, &config(1), &rollouts());
    let children = tree.root_children();
    let ga1 = children.iter().find(|c| c.action == win).expect("Ga1 is a child");
    // Proven at its first visit, and the root with it: the search stops there.
    assert!(ga1.visits >= 1 && ga1.proven == Some(1), "{children:?}");
    assert_eq!(ga1.value, 1.0);
    assert_eq!(tree.root_info().proven, Some(1));
    // One level down, after advancing to a P1 position: values are P1's.
    let p = pos(DIAGRAM_3);
    let mut tree = searched(p, 400, &config(8), &rollouts());
    let (best, _) = most_visited(&tree);
    tree.advance(&best, usize::MAX);
    check_root_children(&tree);
    let value_p1 = tree.root_info().value;
    run(std::slice::from_mut(&mut tree), &[100], &config(8), &rollouts());
    check_root_children(&tree);
    assert!((-1.0..=1.0).contains(&value_p1));
}

#[test]
fn root_children_before_a_search_and_in_a_finished_game_are_none() {
    assert!(Tree::new(start()).root_children().is_empty());
    let tree = searched(pos(NOTHING_TO_DO), 3, &config(1), &UniformEvaluator);
    assert_eq!(tree.root_children().len(), 1, "a pass, the only action");
    let over = pos(NOTHING_TO_DO).play_action(&Action::Pass).unwrap();
    let over = over.play_action(&Action::Pass).unwrap();
    assert!(over.is_over());
    assert!(searched(over, 10, &config(1), &UniformEvaluator).root_children().is_empty());
}

#[test]
fn a_capture_chain_that_wins_is_found() {
    let p = pos(CHAIN_WIN);
    let first = action(&p, "d2xd4");
    let q = p.play_action(&first).unwrap();
    assert_eq!((q.turn(), q.chain().is_some()), (Player::P0, true), "the chain goes on");
    assert_eq!(winning_actions(&p), Vec::<String>::new(), "no win in one action");
    assert_eq!(winning_actions(&q), ["d4xd6"]);
    for (k, eval) in evaluators().iter().enumerate() {
        for leaves in [1, 8] {
            let tree = searched(p, 400, &config(leaves), eval.as_ref());
            check_tree(&tree);
            let info = tree.root_info();
            assert_eq!(most_visited(&tree).0, first, "evaluator {k}, leaves {leaves}: {info:?}");
            assert!(info.value > 0.8, "a win in two hops: root value {} ({info:?})", info.value);
        }
    }
}

#[test]
fn the_sacrifice_of_rulebook_diagram_5_is_found() {
    // 1530 actions. Bb1,a3 forces c1xa1, after which Wa2,b1 cuts off two whites and wins: a win
    // three actions deep. With value 0 everywhere and no first-play reduction, a node tries all
    // its actions before any twice, so the search finds the line by breadth alone.
    let p = pos(DIAGRAM_5);
    let sacrifice = action(&p, "Bb1,a3");
    let q = p.play_action(&sacrifice).unwrap();
    assert_eq!(q.legal_actions(), [action(&q, "c1xa1")], "the reply is forced");
    let r = q.play_action(&action(&q, "c1xa1")).unwrap();
    assert_eq!(winning_actions(&r), ["Wa2,b1"]);
    assert!(winning_actions(&p).is_empty());
    let cfg = SearchConfig { fpu_reduction: 0.0, ..SearchConfig::default() };
    let mut tree = searched(p, 12_000, &cfg, &UniformEvaluator);
    check_tree(&tree);
    let info = tree.root_info();
    let (best, visits) = most_visited(&tree);
    assert_eq!(p.action_to_string(&best), "Bb1,a3", "{visits} visits");
    let proven = info.proven == Some(1);
    assert!(proven || (visits > 4000 && info.value > 0.3), "{visits} visits, value {}", info.value);
    // Down the line by tree reuse: P1's forced reply (a loss for P1), then P0's win.
    tree.advance(&sacrifice, usize::MAX);
    assert!(tree.root_info().value < -0.9, "{}", tree.root_info().value);
    assert_eq!(best_name(&tree), "c1xa1");
    tree.advance(&action(tree.position(), "c1xa1"), usize::MAX);
    assert!(tree.root_info().value > 0.9, "{}", tree.root_info().value);
    assert_eq!(best_name(&tree), "Wa2,b1");
}

#[test]
fn the_winning_placement_at_the_end_of_rulebook_diagram_5_is_found() {
    // Diagram 5 after Bb1,a3 and c1xa1: 1479 actions, one of which wins at once.
    let d5 = pos(DIAGRAM_5);
    let q = d5.play(&d5.parse_legal_move("Bb1,a3").unwrap()).unwrap();
    let p = q.play(&q.parse_legal_move("c1xa1").unwrap()).unwrap();
    assert_eq!(winning_actions(&p), ["Wa2,b1"]);
    let fpu0 = SearchConfig { fpu_reduction: 0.0, ..SearchConfig::default() };
    let cases: [(&dyn Evaluator, &SearchConfig); 2] =
        [(&UniformEvaluator, &fpu0), (&rollouts(), &SearchConfig::default())];
    for (eval, cfg) in cases {
        let tree = searched(p, 2000, cfg, eval);
        check_tree(&tree);
        let info = tree.root_info();
        let (best, visits) = most_visited(&tree);
        assert_eq!(p.action_to_string(&best), "Wa2,b1");
        assert_eq!((info.proven, info.value), (Some(1), 1.0), "{visits} visits");
    }
}

// ------------------------------------------------------------------------- 2. forced losses

#[test]
fn moves_that_lose_at_once_are_avoided() {
    for (text, safe, sims, value) in
        [(FORCED_LOSS, "Ge5,e3", 600, 0.4), (ONE_SAFE_OF_25, "Ba4,b5", 1200, 0.3)]
    {
        let p = pos(text);
        let safe = action(&p, safe);
        // Every other move hands P1 a win in one action; the safe one does not, and wins.
        for a in p.legal_actions() {
            let q = p.play_action(&a).unwrap();
            assert_eq!((q.outcome(), q.turn()), (None, Player::P1));
            let loses = !winning_actions(&q).is_empty();
            assert_eq!(loses, a != safe, "{}", p.action_to_string(&a));
        }
        let after = p.play_action(&safe).unwrap();
        assert_eq!(minimax(&after, 4), 1, "P0 wins by force after the safe move");
        for (k, eval) in evaluators().iter().enumerate() {
            for leaves in [1, 8] {
                let tree = searched(p, sims, &config(leaves), eval.as_ref());
                check_tree(&tree);
                let info = tree.root_info();
                let why = format!("{text}, evaluator {k}, leaves {leaves}: {info:?}");
                assert_eq!(most_visited(&tree).0, safe, "{why}");
                let proven = info.proven == Some(1);
                assert!(proven || visits_of(&info, &safe) > sims / 2, "{why}");
                assert!(info.value > value, "{why}");
            }
        }
    }
}

// ------------------------------------------------------------------------ 3. visit accounting

#[test]
fn visits_add_up_across_trees_counts_and_rounds() {
    let win = pos(ISOLATION_WIN);
    let over = win.play_action(&action(&win, "Ga1")).unwrap();
    assert!(over.is_over());
    let positions = [
        start(),
        pos(ISOLATION_WIN),
        pos(CHAIN_WIN),
        pos(CHAIN_ROOT),
        over,
        pos(DIAGRAM_3),
        pos(FORCED_LOSS),
        Position::new(Variant::new(Board::R37, MarbleSet::Blitz), Player::P1),
    ];
    let rounds: [[u32; 8]; 3] =
        [[40, 7, 1, 0, 25, 60, 13, 2], [0, 30, 17, 5, 5, 1, 64, 9], [23, 1, 0, 40, 3, 11, 2, 50]];
    for leaves in [1, 3, 8, 64] {
        for encode in [false, true] {
            let eval = Checking::new(encode);
            let mut trees: Vec<Tree> = positions.iter().map(|&p| Tree::new(p)).collect();
            let mut scratch = Scratch::default();
            let mut simulations = 0;
            for sims in &rounds {
                let before: Vec<u32> = trees.iter().map(Tree::root_visits).collect();
                search(&mut trees, sims, &config(leaves), &eval, &mut scratch).unwrap();
                for (i, tree) in trees.iter().enumerate() {
                    let want = if tree.position().is_over() { 0 } else { before[i] + sims[i] };
                    // A root proven meanwhile takes no more simulations.
                    if tree.root_proven() {
                        assert!(tree.root_visits() <= want, "tree {i}, leaves {leaves}");
                    } else {
                        assert_eq!(tree.root_visits(), want, "tree {i}, leaves {leaves}");
                    }
                    check_tree(tree);
                }
                simulations += sims.iter().sum::<u32>();
                // No round asks for more than `leaves` leaves of any tree.
                assert!(eval.largest.load(Ordering::SeqCst) <= leaves as usize * trees.len());
            }
            // An evaluation per simulation at most (none where it ends in a finished game).
            assert!(scratch.evaluated <= u64::from(simulations));
            assert_eq!(scratch.evaluated, eval.positions.load(Ordering::SeqCst) as u64);
            assert_eq!(scratch.batches, eval.calls.load(Ordering::SeqCst) as u64);
        }
    }
}

#[test]
fn one_evaluation_per_simulation_far_from_the_end() {
    // With value 0 everywhere and no first-play reduction, a node tries all its children before
    // any grandchild: these searches stay a few actions deep, where no game can be over, so
    // every simulation ends in exactly one evaluation.
    for leaves in [1, 4, 16] {
        let cfg = SearchConfig { fpu_reduction: 0.0, ..config(leaves) };
        let eval = Checking::new(true);
        let mut trees = vec![Tree::new(start()), Tree::new(pos(DIAGRAM_3))];
        let scratch = run(&mut trees, &[100, 37], &cfg, &eval);
        assert_eq!(scratch.evaluated, 137);
        // At most `leaves` per tree and round: at least 100 / leaves rounds.
        assert!(scratch.batches >= u64::from(100_u32.div_ceil(leaves)), "{}", scratch.batches);
        // The leaves of a round go to the evaluator together. At the start, breadth first, one
        // round for the root (whose evaluation every simulation waits for), then `leaves` new
        // children a round.
        let alone = run(&mut [Tree::new(start())], &[100], &cfg, &UniformEvaluator);
        assert_eq!(alone.batches, u64::from(1 + 99_u32.div_ceil(leaves)));
        for t in &trees {
            check_tree(t);
        }
    }
}

#[test]
fn searching_trees_together_gives_what_searching_each_alone_gives() {
    let positions = [start(), pos(DIAGRAM_3), pos(FORCED_LOSS), pos(CHAIN_WIN)];
    let sims = [120, 80, 50, 30];
    let cfg = config(4);
    let eval = rollouts();
    let mut together: Vec<Tree> = positions.iter().map(|&p| Tree::new(p)).collect();
    run(&mut together, &sims, &cfg, &eval);
    for (i, &p) in positions.iter().enumerate() {
        let alone = searched(p, sims[i], &cfg, &eval);
        assert_eq!(together[i].root_info(), alone.root_info(), "tree {i}");
    }
}

#[test]
fn zero_simulations_and_no_trees_do_nothing() {
    let mut trees = vec![Tree::new(start())];
    let scratch = run(&mut trees, &[0], &config(8), &Failing);
    assert_eq!(trees[0].root_visits(), 0);
    assert_eq!(scratch.batches, 0);
    let mut none: Vec<Tree> = Vec::new();
    run(&mut none, &[], &config(8), &Failing);
}

#[test]
#[should_panic]
fn one_simulation_count_per_tree() {
    let mut trees = vec![Tree::new(start()), Tree::new(start())];
    let _ = search(&mut trees, &[10], &config(1), &UniformEvaluator, &mut Scratch::default());
}

#[test]
#[should_panic]
fn trees_of_different_boards_are_refused() {
    let mut trees = vec![
        Tree::new(start()),
        Tree::new(Position::new(Variant::new(Board::R61, MarbleSet::Standard), Player::P0)),
    ];
    let _ = search(&mut trees, &[10, 10], &config(1), &UniformEvaluator, &mut Scratch::default());
}

// -------------------------------------------------------------------------------- 4. determinism

#[test]
fn search_without_noise_is_deterministic() {
    for text in [DIAGRAM_3, FORCED_LOSS, CHAIN_WIN] {
        let evals: [&dyn Evaluator; 2] = [&UniformEvaluator, &rollouts()];
        for eval in evals {
            let a = searched(pos(text), 150, &config(8), eval);
            let b = searched(pos(text), 150, &config(8), eval);
            assert_eq!(a.root_info(), b.root_info(), "{text}");
        }
    }
}

fn noisy(p: Position, seed: u64, fraction: f32, sims: u32) -> RootInfo {
    let mut tree = Tree::new(p);
    tree.add_noise(Noise { alpha_total: 10.83, fraction, seed });
    run(std::slice::from_mut(&mut tree), &[sims], &config(8), &UniformEvaluator);
    check_tree(&tree);
    tree.root_info()
}

#[test]
fn root_noise_follows_its_seed() {
    for p in [start(), pos(DIAGRAM_3), pos(FORCED_LOSS)] {
        let plain = searched(p, 300, &config(8), &UniformEvaluator).root_info();
        let a = noisy(p, 1, 0.25, 300);
        assert_eq!(a, noisy(p, 1, 0.25, 300), "same seed, same search");
        // Without weight the noise changes nothing.
        assert_eq!(noisy(p, 1, 0.0, 300), plain);
        // Different seeds give different visit distributions (checked for these seeds; a search
        // that ignored the seed would give equal ones).
        let others: Vec<RootInfo> = (2..6).map(|s| noisy(p, s, 0.25, 300)).collect();
        let differ = others.iter().filter(|o| o.visits != a.visits).count();
        assert!(differ >= 3, "{differ} of 4 seeds differ from seed 1 in {}", p.to_text());
        assert!(others.iter().chain([&a]).any(|o| o.visits != plain.visits), "noise has no effect");
    }
}

#[test]
fn noise_added_after_the_root_is_expanded_applies_too() {
    let p = start();
    let mut a = Tree::new(p);
    run(std::slice::from_mut(&mut a), &[1], &config(1), &UniformEvaluator);
    a.add_noise(Noise { alpha_total: 10.83, fraction: 0.5, seed: 3 });
    run(std::slice::from_mut(&mut a), &[199], &config(1), &UniformEvaluator);
    let mut b = Tree::new(p);
    b.add_noise(Noise { alpha_total: 10.83, fraction: 0.5, seed: 3 });
    run(std::slice::from_mut(&mut b), &[200], &config(1), &UniformEvaluator);
    check_tree(&a);
    // Before or after the first expansion, the same noise on the same priors.
    assert_eq!(a.root_info(), b.root_info());
    let plain = searched(p, 200, &config(1), &UniformEvaluator);
    assert_ne!(a.root_info().visits, plain.root_info().visits);
}

// --------------------------------------------------------------------------------- 5. tree reuse

#[test]
fn advancing_keeps_the_subtree_of_the_chosen_child() {
    for text in [DIAGRAM_3, FORCED_LOSS] {
        let p = pos(text);
        let mut tree = searched(p, 500, &config(8), &rollouts());
        let (best, visits) = most_visited(&tree);
        assert!(visits > 1);
        let arena = tree.arena_len();
        tree.advance(&best, usize::MAX);
        assert_eq!(*tree.position(), p.play_action(&best).unwrap());
        assert_eq!(tree.root_visits(), visits, "{text}");
        assert_eq!(tree.arena_len(), arena, "reuse copies nothing");
        check_tree(&tree);
        run(std::slice::from_mut(&mut tree), &[77], &config(8), &rollouts());
        // (A root proven already takes no more.)
        let more = if tree.root_proven() { 0 } else { 77 };
        assert_eq!(tree.root_visits(), visits + more);
        check_tree(&tree);
    }
}

#[test]
fn advancing_to_an_unvisited_action_gives_a_fresh_tree() {
    let p = start();
    let mut tree = searched(p, 50, &config(8), &UniformEvaluator);
    let info = tree.root_info();
    let unvisited = p
        .legal_actions()
        .into_iter()
        .find(|a| visits_of(&info, a) == 0)
        .expect("50 simulations leave most of 1944 actions unvisited");
    tree.advance(&unvisited, usize::MAX);
    assert_eq!(*tree.position(), p.play_action(&unvisited).unwrap());
    assert_eq!(tree.root_visits(), 0);
    assert_eq!(tree.arena_len(), 1);
    assert!(tree.root_info().visits.is_empty());
    run(std::slice::from_mut(&mut tree), &[20], &config(8), &UniformEvaluator);
    assert_eq!(tree.root_visits(), 20);
    check_tree(&tree);
}

#[test]
fn the_arena_cap_forces_a_fresh_tree() {
    let p = pos(DIAGRAM_3);
    let base = searched(p, 200, &config(8), &UniformEvaluator);
    let (best, visits) = most_visited(&base);
    let len = base.arena_len();
    assert!(len > 100);
    // At the cap the subtree is kept; past it the tree starts afresh.
    let mut kept = base.clone();
    kept.advance(&best, len);
    assert_eq!(kept.root_visits(), visits);
    let mut fresh = base.clone();
    fresh.advance(&best, len - 1);
    assert_eq!(fresh.root_visits(), 0);
    assert_eq!(fresh.arena_len(), 1);
    assert_eq!(*fresh.position(), p.play_action(&best).unwrap());
    let mut zero = base;
    zero.advance(&best, 0);
    assert_eq!(zero.root_visits(), 0);
}

#[test]
fn a_reused_root_explores_like_a_fresh_one() {
    // With P0Wins every child of a P1 node is a loss for P1, so first-play urgency (which starts
    // from the node's own value) keeps a fresh P1 root on few children. A reused root must read
    // its value from its own perspective too; a sign slip there makes it try a new child on
    // almost every simulation.
    let eval = P0Wins { scale: 1.0 };
    for p in [pos(DIAGRAM_3), start()] {
        let text = p.to_text();
        let mut tree = searched(p, 300, &config(8), &eval);
        let (best, visits) = most_visited(&tree);
        tree.advance(&best, usize::MAX);
        assert_eq!(tree.position().turn(), Player::P1);
        run(std::slice::from_mut(&mut tree), &[300], &config(8), &eval);
        check_tree(&tree);
        let reused = tree.root_info().visits.len();
        let fresh = searched(*tree.position(), 300 + visits, &config(8), &eval);
        let fresh = fresh.root_info().visits.len();
        assert!(
            reused < 2 * fresh + 20,
            "{text}: {reused} children tried, a fresh root tries {fresh}"
        );
    }
}

#[test]
fn advancing_flips_the_value_only_where_the_player_changes() {
    // The winning child of ISOLATION_WIN is a finished game lost by P1, the player to move there.
    let p = pos(ISOLATION_WIN);
    let win = action(&p, "Ga1");
    let mut tree = searched(p, 200, &config(8), &UniformEvaluator);
    let visits = visits_of(&tree.root_info(), &win);
    tree.advance(&win, usize::MAX);
    assert!(tree.position().is_over());
    let info = tree.root_info();
    assert_eq!(info.total, visits);
    assert_eq!(info.value, -1.0, "every visit of a won terminal counts exactly 1");
    assert!(info.visits.is_empty());

    // Below d2xd4 P0 is still to move: the value keeps its sign.
    let p = pos(CHAIN_WIN);
    let mut tree = searched(p, 300, &config(8), &UniformEvaluator);
    let before = tree.root_info().value;
    tree.advance(&action(&p, "d2xd4"), usize::MAX);
    assert_eq!(tree.position().turn(), Player::P0);
    let info = tree.root_info();
    assert!(info.value > 0.8 && before > 0.8, "{before} then {}", info.value);
    assert_eq!(best_name(&tree), "d4xd6");
    tree.advance(&action(tree.position(), "d4xd6"), usize::MAX);
    assert_eq!(tree.root_info().value, -1.0);
}

// ------------------------------------------------------------------------------- 6. chain signs

#[test]
fn a_root_inside_a_chain_sees_the_win_two_hops_down() {
    let p = pos(CHAIN_ROOT);
    assert!(p.chain().is_some());
    assert_eq!(p.legal_actions().len(), 2);
    let first = action(&p, "d2xd4");
    let q = p.play_action(&first).unwrap();
    assert_eq!(q.turn(), Player::P0);
    assert_eq!(winning_actions(&q), ["d4xd6"]);
    for (k, eval) in evaluators().iter().enumerate() {
        for leaves in [1, 8] {
            let tree = searched(p, 300, &config(leaves), eval.as_ref());
            check_tree(&tree);
            let info = tree.root_info();
            assert_eq!(most_visited(&tree).0, first, "evaluator {k}, leaves {leaves}: {info:?}");
            // A sign flip below d2xd4 would make this close to -1.
            assert!(info.value > 0.85, "root value {} ({info:?})", info.value);
        }
    }
}

#[test]
fn values_follow_the_player_to_move_through_chains() {
    // The evaluator says P0 wins wherever it looks (and exaggerates: values are clamped). Values
    // are kept from the perspective of the player to move, so every value backed up to a node
    // where P0 moves is exactly +1, and -1 where P1 moves; chain hops keep the player.
    for (text, sims) in [(DIAGRAM_3, 400), (CHAIN_WIN, 50)] {
        for leaves in [1, 8] {
            let p = pos(text);
            let mut tree = searched(p, sims, &config(leaves), &P0Wins { scale: 3.0 });
            let sign = |t: &Tree| if t.position().turn() == Player::P0 { 1.0 } else { -1.0 };
            let mut hops_within_chain = 0;
            let mut steps = 0;
            while tree.root_visits() > 0 && !tree.position().is_over() {
                let info = tree.root_info();
                assert_eq!(info.value, sign(&tree), "{}", tree.position().to_text());
                let Some(&(a, _)) = info.visits.iter().max_by_key(|&&(_, v)| v) else { break };
                let before = tree.position().turn();
                tree.advance(&a, usize::MAX);
                hops_within_chain += usize::from(tree.position().turn() == before);
                steps += 1;
            }
            assert!(steps >= 2, "{text}: {steps}");
            assert!(hops_within_chain >= 1, "{text}: the path should go through a chain");
        }
    }
}

// ------------------------------------------------------------------------------ 7. finished games

#[test]
fn a_finished_game_is_not_searched() {
    let p = pos(ISOLATION_WIN);
    let over = p.play_action(&action(&p, "Ga1")).unwrap();
    assert!(over.is_over());
    let mut trees = vec![Tree::new(over), Tree::new(over)];
    let scratch = run(&mut trees, &[100, 0], &config(8), &Failing);
    assert_eq!(scratch.batches, 0);
    for t in &trees {
        assert_eq!(t.root_visits(), 0);
        let info = t.root_info();
        assert!(info.visits.is_empty());
        // Exact: P1 to move has lost.
        assert_eq!((info.total, info.value, info.proven), (0, -1.0, Some(-1)));
        check_tree(t);
    }
    // Next to a live tree.
    let mut trees = vec![Tree::new(over), Tree::new(pos(FORCED_LOSS))];
    run(&mut trees, &[30, 30], &config(8), &UniformEvaluator);
    assert_eq!(trees[0].root_visits(), 0);
    assert_eq!(trees[1].root_visits(), 30);
}

#[test]
fn finished_games_below_the_root_are_scored_exactly() {
    // Pass, pass: a draw two actions down. The evaluator calls the root; the second simulation
    // passes through P1's forced pass (not evaluated) to the draw, which proves the pass and the
    // root drawn (each has one action): the value is exactly 0, and the search stops there
    // however many simulations were asked.
    let p = pos(NOTHING_TO_DO);
    for n in [3_u32, 10, 100] {
        for leaves in [1, 8] {
            let tree = searched(p, n, &config(leaves), &P0Wins { scale: 1.0 });
            let info = tree.root_info();
            assert_eq!(info.visits, [(Action::Pass, 1)]);
            assert_eq!((info.total, info.proven, info.value), (2, Some(0), 0.0), "n {n}");
        }
    }
    // A win in one is worth exactly 1: even with an evaluator that calls every other position a
    // loss for P0, the win gets the visits and the root value goes to +1.
    let p = pos(ISOLATION_WIN);
    let tree = searched(p, 500, &config(8), &P0Wins { scale: -1.0 });
    let info = tree.root_info();
    assert_eq!(best_name(&tree), "Ga1");
    assert!(info.value > 0.9, "{}", info.value);
}

// ---------------------------------------------------------------------------------- 8. evaluators

#[test]
fn evaluator_errors_are_returned() {
    let want = Err(EvalError("no model".to_string()));
    let mut trees = vec![Tree::new(start()), Tree::new(pos(DIAGRAM_3))];
    let got = search(&mut trees, &[10, 10], &config(8), &Failing, &mut Scratch::default());
    assert_eq!(got, want);
    // A failure in a later round too.
    let eval = FailsLater { ok: 3, calls: AtomicUsize::new(0) };
    let mut trees = vec![Tree::new(start()), Tree::new(pos(DIAGRAM_3))];
    let got = search(&mut trees, &[100, 100], &config(4), &eval, &mut Scratch::default());
    assert_eq!(got, Err(EvalError("out of memory".to_string())));
    assert_eq!(eval.calls.load(Ordering::SeqCst), 4);
}

#[test]
fn a_tree_can_be_searched_again_after_an_evaluator_error() {
    // After a failed search the trees are as they were before it, and usable. (A failed round
    // once left its leaves pending with their virtual visits and losses: root_visits counted
    // phantom simulations, and when the pending leaf was the root the next search spun forever,
    // hence the thread and the timeout.)
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let cfg = config(8);
        let mut scratch = Scratch::default();
        let mut warm = vec![Tree::new(start())];
        search(&mut warm, &[50], &cfg, &UniformEvaluator, &mut scratch).unwrap();
        let failed = search(&mut warm, &[10], &cfg, &Failing, &mut scratch).is_err();
        let after_error = warm[0].root_visits();
        search(&mut warm, &[10], &cfg, &UniformEvaluator, &mut scratch).unwrap();
        let _ = tx.send((failed, after_error, warm[0].root_visits()));
        let mut fresh = vec![Tree::new(start())];
        let failed = search(&mut fresh, &[10], &cfg, &Failing, &mut scratch).is_err();
        let after_error = fresh[0].root_visits();
        search(&mut fresh, &[10], &cfg, &UniformEvaluator, &mut scratch).unwrap();
        let _ = tx.send((failed, after_error, fresh[0].root_visits()));
    });
    // Milliseconds of work: only a search that spins forever takes a minute.
    let wait = Duration::from_secs(60);
    let warm = rx.recv_timeout(wait).expect("search after an error on a searched tree hangs");
    assert_eq!(warm, (true, 50, 60), "(error, visits after it, visits after 10 more)");
    let fresh = rx.recv_timeout(wait).expect("search after an error on a fresh tree hangs");
    assert_eq!(fresh, (true, 0, 10), "(error, visits after it, visits after 10 more)");
}

#[test]
fn priors_steer_the_search() {
    // PreferLast puts most of the prior on the legal action with the highest index. In these
    // positions no game ends within a few actions, so values cannot pull the search elsewhere.
    let blitz = Position::new(Variant::new(Board::R37, MarbleSet::Blitz), Player::P1);
    for p in [pos(DIAGRAM_3), start(), blitz] {
        let space = ActionSpace::new(p.board());
        let last = p.legal_actions().into_iter().max_by_key(|a| space.index(a)).unwrap();
        for sims in [2, 10, 40] {
            for leaves in [1, 4] {
                let tree = searched(p, sims, &config(leaves), &PreferLast);
                check_tree(&tree);
                let info = tree.root_info();
                let (best, visits) = most_visited(&tree);
                let name = p.action_to_string(&last);
                assert_eq!(best, last, "{name}, {sims} simulations: {info:?}");
                // Virtual loss spreads the leaves of one round; one leaf a round, no spreading.
                assert!(leaves > 1 || visits * 2 > sims - 1, "{info:?}");
                // Children come in prior order: the preferred one first.
                assert_eq!(info.visits[0].0, last);
            }
        }
    }
}

#[test]
fn logits_of_illegal_actions_are_ignored() {
    // Checking puts huge logits on every illegal action: the priors must come out uniform.
    let eval = Checking::new(true);
    let a = searched(pos(DIAGRAM_3), 100, &config(8), &eval);
    let b = searched(pos(DIAGRAM_3), 100, &config(8), &UniformEvaluator);
    assert_eq!(a.root_info(), b.root_info());
}

#[test]
fn policy_temperature_flattens_the_priors() {
    // PreferLast's logit 3 on one action: at temperature 1 it draws most of the visits, at 3
    // fewer, and at a huge temperature (uniform priors) about its share of the legal actions.
    let p = pos(DIAGRAM_3);
    let space = ActionSpace::new(p.board());
    let last = p.legal_actions().into_iter().max_by_key(|a| space.index(a)).unwrap();
    let n = p.count_legal_actions() as u32;
    let visits_of_last = |temperature: f32| {
        let cfg = SearchConfig { policy_temperature: temperature, ..config(1) };
        let tree = searched(p, 200, &cfg, &PreferLast);
        check_tree(&tree);
        let info = tree.root_info();
        info.visits.iter().find(|(a, _)| *a == last).map_or(0, |&(_, v)| v)
    };
    let (sharp, flat, uniform) = (visits_of_last(1.0), visits_of_last(3.0), visits_of_last(1e6));
    assert!(sharp > flat && flat > uniform, "visits {sharp}, {flat}, {uniform}");
    assert!(uniform <= 199 / n + 2, "{uniform} visits of 199 over {n} actions");
}

// ------------------------------------------------------------------------------ hostile input

/// Answers like [`UniformEvaluator`], then spoils one number: the value of the last position
/// (`spoil_value`) or the logit of the first legal action of the first position.
#[derive(Debug)]
struct Spoiled {
    bad: f32,
    spoil_value: bool,
}

impl Evaluator for Spoiled {
    fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
        UniformEvaluator.evaluate(batch, out)?;
        if self.spoil_value {
            *out.values.last_mut().unwrap() = self.bad;
        } else {
            let first_legal = batch.masks.iter().position(|&m| m).unwrap();
            out.logits[first_legal] = self.bad;
        }
        Ok(())
    }
}

#[test]
fn non_finite_evaluator_outputs_are_errors_and_leave_the_trees_usable() {
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        for spoil_value in [true, false] {
            let mut trees = vec![Tree::new(start()), Tree::new(pos(DIAGRAM_3))];
            let mut scratch = Scratch::default();
            let got = search(
                &mut trees,
                &[10, 10],
                &config(4),
                &Spoiled { bad, spoil_value },
                &mut scratch,
            );
            let err = got.unwrap_err().to_string();
            let what =
                if spoil_value { "the value of position" } else { "the logit of legal action" };
            assert!(err.contains(what) && err.contains("not a finite number"), "{bad}: {err}");
            search(&mut trees, &[10, 10], &config(4), &UniformEvaluator, &mut scratch).unwrap();
            trees.iter().for_each(check_tree);
            assert_eq!(trees[0].root_visits(), 10);
        }
    }
    // Illegal actions' logits are never read: -inf there (a masked network) is fine.
    #[derive(Debug)]
    struct Masked;
    impl Evaluator for Masked {
        fn evaluate(&self, batch: &Batch<'_>, out: &mut Output<'_>) -> Result<(), EvalError> {
            UniformEvaluator.evaluate(batch, out)?;
            for (l, &legal) in out.logits.iter_mut().zip(batch.masks) {
                if !legal {
                    *l = f32::NEG_INFINITY;
                }
            }
            Ok(())
        }
    }
    let tree = searched(start(), 50, &config(8), &Masked);
    check_tree(&tree);
}

#[test]
fn search_settings_out_of_range_are_refused_by_name() {
    assert_eq!(SearchConfig::default().validate(), Ok(()));
    type Spoil = fn(&mut SearchConfig);
    let cases: [(Spoil, &str); 11] = [
        (|c| c.c_puct = f32::NAN, "c_puct"),
        (|c| c.c_puct = 0.0, "c_puct"),
        (|c| c.c_base = f32::INFINITY, "c_base"),
        (|c| c.c_base = -1.0, "c_base"),
        (|c| c.fpu_reduction = f32::NAN, "fpu_reduction"),
        (|c| c.fpu_reduction = f32::NEG_INFINITY, "fpu_reduction"),
        (|c| c.virtual_loss = f32::NAN, "virtual_loss"),
        (|c| c.virtual_loss = -0.5, "virtual_loss"),
        (|c| c.leaves_per_round = 0, "leaves_per_round"),
        (|c| c.policy_temperature = f32::INFINITY, "policy_temperature"),
        (|c| c.policy_temperature = f32::NAN, "policy_temperature"),
    ];
    for (spoil, key) in cases {
        let mut c = SearchConfig::default();
        spoil(&mut c);
        assert_eq!(c.validate().unwrap_err().key, key, "{c:?}");
    }
    let noise = |alpha_total, fraction| Noise { alpha_total, fraction, seed: 1 };
    assert_eq!(noise(10.83, 0.25).validate(), Ok(()));
    for (n, key) in [
        (noise(f32::INFINITY, 0.25), "dirichlet_alpha_total"),
        (noise(f32::NAN, 0.25), "dirichlet_alpha_total"),
        (noise(0.0, 0.25), "dirichlet_alpha_total"),
        (noise(-1.0, 0.25), "dirichlet_alpha_total"),
        (noise(10.0, 2.0), "dirichlet_fraction"),
        (noise(10.0, f32::NAN), "dirichlet_fraction"),
    ] {
        assert_eq!(n.validate().unwrap_err().key, key, "{n:?}");
    }
}

#[test]
fn unchecked_non_finite_settings_do_not_panic() {
    // The doors refuse these (`SearchConfig::validate`); search itself still walks on with them
    // instead of indexing out of bounds (it once panicked with index 18446744073709551615).
    for spoil in [
        |c: &mut SearchConfig| c.c_puct = f32::NAN,
        |c: &mut SearchConfig| c.c_base = f32::INFINITY,
        |c: &mut SearchConfig| c.fpu_reduction = f32::NAN,
        |c: &mut SearchConfig| c.virtual_loss = f32::NAN,
    ] {
        let mut c = config(8);
        spoil(&mut c);
        let tree = searched(start(), 100, &c, &UniformEvaluator);
        assert_eq!(tree.root_visits(), 100);
    }
    // A huge but finite concentration draws finite noise.
    let mut trees = vec![Tree::new(start())];
    trees[0].add_noise(Noise { alpha_total: f32::MAX, fraction: 0.25, seed: 3 });
    run(&mut trees, &[50], &config(8), &UniformEvaluator);
    check_tree(&trees[0]);
}

#[test]
fn an_interrupted_search_stops_between_rounds_and_goes_on_later() {
    let mut trees = vec![Tree::new(start()), Tree::new(pos(DIAGRAM_3))];
    let mut scratch = Scratch::default();
    let mut rounds = 0;
    let mut stop_after_three = || {
        rounds += 1;
        rounds >= 3
    };
    let finished = search_interruptible(
        &mut trees,
        &[400, 400],
        &config(4),
        &UniformEvaluator,
        &mut scratch,
        &mut stop_after_three,
    )
    .unwrap();
    assert_eq!(finished, Finished::Interrupted);
    assert_eq!(scratch.batches, 3, "one round of evaluations per question");
    let visits: Vec<u32> = trees.iter().map(Tree::root_visits).collect();
    assert!(visits.iter().all(|&v| (1..400).contains(&v)), "{visits:?}");
    trees.iter().for_each(check_tree);
    // The trees are consistent: a later search adds exactly its simulations.
    let finished = search_interruptible(
        &mut trees,
        &[10, 10],
        &config(4),
        &UniformEvaluator,
        &mut scratch,
        &mut || false,
    )
    .unwrap();
    assert_eq!(finished, Finished::Done);
    let after: Vec<u32> = trees.iter().map(Tree::root_visits).collect();
    assert_eq!(after, vec![visits[0] + 10, visits[1] + 10]);
    trees.iter().for_each(check_tree);
}

// ---------------------------------------------------------------------------------- memory budget

#[test]
fn a_search_stops_at_the_trees_memory_budget() {
    // From the 37-ring start the root has 1944 edges and the nodes below hundreds each: 2 MiB
    // hold a few hundred simulations, far fewer than asked.
    let budget = 2 << 20;
    for leaves in [1, 8] {
        let mut trees = vec![Tree::with_max_bytes(start(), budget)];
        let mut scratch = Scratch::default();
        let finished = search_interruptible(
            &mut trees,
            &[100_000],
            &config(leaves),
            &UniformEvaluator,
            &mut scratch,
            &mut || false,
        )
        .unwrap();
        assert_eq!(finished, Finished::Done);
        let tree = &trees[0];
        let sims = tree.root_visits();
        assert!(tree.is_full(), "leaves {leaves}: {} bytes", tree.bytes());
        assert!(tree.bytes() <= budget, "leaves {leaves}: {} bytes", tree.bytes());
        assert!(tree.bytes() > budget / 2, "leaves {leaves}: {} bytes", tree.bytes());
        assert!((100..10_000).contains(&sims), "leaves {leaves}: {sims} simulations");
        assert_eq!(scratch.evaluated, u64::from(sims), "one evaluation per simulation");
        check_tree(tree);
        // A full tree takes no more simulations; with a larger budget it goes on from there.
        run(&mut trees, &[1000], &config(leaves), &UniformEvaluator);
        assert_eq!(trees[0].root_visits(), sims);
        trees[0].set_max_bytes(2 * budget);
        run(&mut trees, &[100_000], &config(leaves), &UniformEvaluator);
        assert!(trees[0].root_visits() > sims + 100);
        assert!(trees[0].bytes() <= 2 * budget && trees[0].is_full());
        check_tree(&trees[0]);
    }
}

#[test]
fn a_tree_at_its_budget_still_finds_the_win() {
    let p = pos(ISOLATION_WIN);
    let win = action(&p, "Ga1");
    // Room for one leaf of the 37-ring board (96 bytes and 4441 edges at most) and about 60
    // nodes of this position (9 legal actions at the root, fewer below).
    let budget = 48 << 10;
    for (k, eval) in evaluators().iter().enumerate() {
        for leaves in [1, 8] {
            let mut trees = vec![Tree::with_max_bytes(p, budget)];
            run(&mut trees, &[100_000], &config(leaves), eval.as_ref());
            let tree = &trees[0];
            check_tree(tree);
            let info = tree.root_info();
            // The win is proven before the budget is reached, or found within it.
            let proven = info.proven == Some(1);
            assert!(tree.bytes() <= budget, "{} bytes", tree.bytes());
            assert!(proven || (tree.is_full() && info.total >= 50), "evaluator {k}: {info:?}");
            assert_eq!(most_visited(tree).0, win, "evaluator {k}, leaves {leaves}: {info:?}");
        }
    }
}

#[test]
fn the_root_is_evaluated_whatever_the_budget() {
    let mut trees = vec![Tree::with_max_bytes(start(), 0)];
    run(&mut trees, &[100], &config(8), &UniformEvaluator);
    assert_eq!(trees[0].root_visits(), 1);
    assert_eq!(trees[0].root_children().len(), 1944);
    assert!(trees[0].is_full());
    check_tree(&trees[0]);
}

#[test]
fn a_tree_within_its_budget_searches_as_an_unbounded_one() {
    for leaves in [1, 8] {
        let bounded = searched(start(), 2000, &config(leaves), &rollouts());
        let mut unbounded = vec![Tree::with_max_bytes(start(), usize::MAX)];
        run(&mut unbounded, &[2000], &config(leaves), &rollouts());
        assert_eq!(bounded.max_bytes(), zertz_search::mcts::DEFAULT_MAX_TREE_BYTES);
        assert!(!bounded.is_full());
        assert_eq!(bounded.root_info(), unbounded[0].root_info());
        assert_eq!(bounded.root_children(), unbounded[0].root_children());
        assert_eq!(bounded.bytes(), unbounded[0].bytes());
    }
}

#[test]
fn a_tree_past_half_its_budget_keeps_only_the_subtree_when_it_advances() {
    let base = searched(pos(DIAGRAM_3), 300, &config(8), &UniformEvaluator);
    let (best, visits) = most_visited(&base);
    let bytes = base.bytes();
    // Within half the budget the arena is kept whole.
    let mut whole = base.clone();
    whole.set_max_bytes(2 * bytes);
    whole.advance(&best, usize::MAX);
    assert_eq!((whole.root_visits(), whole.arena_len()), (visits, base.arena_len()));
    // Past it, only the subtree: the same tree in less memory, which searches on the same.
    let mut compact = base;
    compact.set_max_bytes(2 * bytes - 2);
    compact.advance(&best, usize::MAX);
    assert_eq!(compact.root_visits(), visits);
    assert!(compact.arena_len() < whole.arena_len() && compact.bytes() < whole.bytes());
    assert_eq!(compact.root_info(), whole.root_info());
    assert_eq!(compact.root_children(), whole.root_children());
    check_tree(&compact);
    for tree in [&mut whole, &mut compact] {
        tree.set_max_bytes(usize::MAX);
        run(std::slice::from_mut(tree), &[200], &config(8), &UniformEvaluator);
    }
    assert_eq!(compact.root_info(), whole.root_info());
    assert_eq!(compact.root_children(), whole.root_children());
    check_tree(&compact);
}
