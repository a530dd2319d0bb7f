//! The Gumbel root (`SearchConfig::gumbel_actions`): sequential halving's schedule, the visits it
//! gives, its draws, tree reuse, the improved policy and proofs.

use zertz_env::{Action, ActionSpace, Outcome, Player, Position, Variant};
use zertz_search::mcts::{Scratch, Tree, considered_visits, search};
use zertz_search::{Evaluator, SearchConfig, UniformEvaluator};

fn start() -> Position {
    Position::new(Variant::default(), Player::P0)
}

fn gumbel(actions: u32) -> SearchConfig {
    SearchConfig { gumbel_actions: actions, ..SearchConfig::default() }
}

fn run(tree: &mut Tree, sims: u32, config: &SearchConfig, eval: &dyn Evaluator) {
    search(std::slice::from_mut(tree), &[sims], config, eval, &mut Scratch::default()).unwrap();
}

/// The visits of the root's children, most first.
fn visits(tree: &Tree) -> Vec<u32> {
    let mut v: Vec<u32> =
        tree.root_children().iter().map(|c| c.visits).filter(|&v| v > 0).collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

#[test]
fn the_schedule_halves_the_considered_actions() {
    assert_eq!(considered_visits(1, 5), vec![0, 1, 2, 3, 4]);
    assert_eq!(considered_visits(2, 6), vec![0, 0, 1, 1, 2, 2]);
    // Two phases for four actions: one visit each, then the best two share the rest.
    assert_eq!(considered_visits(4, 8), vec![0, 0, 0, 0, 1, 1, 2, 2]);
    // Fewer simulations than actions: the first phase is cut short.
    assert_eq!(considered_visits(16, 5), vec![0; 5]);
    for (m, n) in [(16, 100), (8, 64), (3, 7), (16, 25), (5, 1000)] {
        let s = considered_visits(m, n);
        assert_eq!(s.len(), n as usize);
        // Each action's visits are counted up one at a time: a value v appears only after v - 1
        // has appeared as often.
        for v in 1..=s.iter().copied().max().unwrap() {
            let count = |x: u32| s.iter().filter(|&&y| y == x).count();
            assert!(count(v) <= count(v - 1), "{m} {n}: {s:?}");
        }
    }
}

#[test]
fn a_gumbel_root_visits_its_considered_actions_as_the_schedule_says() {
    // 64 simulations below the root (the first evaluates it), 8 actions considered: two visits
    // each, then seven for the best four, then 21 for the best two (mctx's schedule).
    for leaves in [1, 8] {
        let config = SearchConfig { leaves_per_round: leaves, ..gumbel(8) };
        let mut tree = Tree::new(start());
        run(&mut tree, 65, &config, &UniformEvaluator);
        assert_eq!(visits(&tree), [21, 21, 7, 7, 2, 2, 2, 2], "{leaves} leaves per round");
        // The choice is one of the two most visited.
        let chosen = tree.gumbel_action(&config).unwrap();
        let child = tree.root_children().into_iter().find(|c| c.action == chosen).unwrap();
        assert_eq!(child.visits, 21);
        // The visited children are a prefix of the root's edges, whatever order they came in.
        let children = tree.root_children();
        let first_unvisited = children.iter().position(|c| c.visits == 0).unwrap();
        assert!(children[first_unvisited..].iter().all(|c| c.visits == 0));
    }
}

#[test]
fn fewer_legal_actions_than_considered_are_all_considered() {
    // The white-race position of the search tests has a handful of actions.
    let p = Position::from_text(
        "37 standard ----/-----/------/---bbb-/--.w../---b./---- 0/2/0 2/4/4 3/2/2 P0 - 0",
    )
    .unwrap();
    let legal = p.count_legal_actions();
    assert!(legal < 16, "{legal}");
    let mut tree = Tree::new(p);
    run(&mut tree, 40, &gumbel(16), &UniformEvaluator);
    assert!(tree.root_children().iter().all(|c| c.visits > 0 || c.proven.is_some()));
}

#[test]
fn the_draws_follow_the_seed_and_none_is_deterministic() {
    let visited = |seed: Option<u64>| {
        let mut tree = Tree::new(start());
        if let Some(s) = seed {
            tree.set_gumbel_seed(s);
        }
        run(&mut tree, 33, &gumbel(4), &UniformEvaluator);
        let mut v: Vec<Action> =
            tree.root_children().iter().filter(|c| c.visits > 0).map(|c| c.action).collect();
        v.sort_by_key(|a| ActionSpace::new(start().board()).index(a));
        (v, tree.gumbel_action(&gumbel(4)).unwrap())
    };
    assert_eq!(visited(None), visited(None));
    assert_eq!(visited(Some(7)), visited(Some(7)));
    // Uniform priors: the draws alone choose which 4 of the 1,944 placements are considered.
    assert_ne!(visited(Some(7)).0, visited(Some(8)).0);
    assert_eq!(visited(Some(7)).0.len(), 4);
}

#[test]
fn a_reused_root_counts_the_schedule_from_its_visits_at_the_start() {
    let config = gumbel(8);
    let mut tree = Tree::new(start());
    run(&mut tree, 65, &config, &UniformEvaluator);
    let chosen = tree.gumbel_action(&config).unwrap();
    tree.advance(&chosen, usize::MAX);
    let before: Vec<(Action, u32)> =
        tree.root_children().iter().map(|c| (c.action, c.visits)).collect();
    assert!(before.iter().any(|&(_, v)| v > 0), "the subtree is kept");
    run(&mut tree, 64, &config, &UniformEvaluator);
    let mut gained: Vec<u32> = tree
        .root_children()
        .iter()
        .map(|c| c.visits - before.iter().find(|b| b.0 == c.action).map_or(0, |b| b.1))
        .filter(|&v| v > 0)
        .collect();
    gained.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(gained, [21, 21, 7, 7, 2, 2, 2, 2]);
}

#[test]
fn the_improved_policy_covers_every_legal_action_and_sums_to_one() {
    let config = gumbel(8);
    let mut tree = Tree::new(start());
    let a = ActionSpace::new(start().board()).len();
    let mut policy = vec![0.0; a];
    tree.policy(&config, &mut policy);
    assert!(policy.iter().all(|&p| p == 0.0), "nothing before the root is expanded");
    run(&mut tree, 65, &config, &UniformEvaluator);
    tree.policy(&config, &mut policy);
    let mut mask = vec![false; a];
    start().legal_action_mask(&mut mask);
    for (p, legal) in policy.iter().zip(&mask) {
        assert_eq!(*p > 0.0, *legal);
    }
    assert!((policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
    // Without a Gumbel root the policy is the visit distribution.
    let puct = SearchConfig::default();
    let mut tree = Tree::new(start());
    run(&mut tree, 65, &puct, &UniformEvaluator);
    let mut visits = vec![0.0; a];
    tree.visit_policy(&mut visits);
    tree.policy(&puct, &mut policy);
    assert_eq!(policy, visits);
}

/// Uniform priors and a value drawn from the position's hash: children of one root differ in
/// value, deterministically.
struct Hashed;

impl Evaluator for Hashed {
    fn evaluate(
        &self,
        batch: &zertz_search::Batch<'_>,
        out: &mut zertz_search::Output<'_>,
    ) -> Result<(), zertz_search::EvalError> {
        out.logits.fill(0.0);
        for (v, p) in out.values.iter_mut().zip(batch.positions) {
            *v = (p.hash() % 2001) as f32 / 1000.0 - 1.0;
        }
        Ok(())
    }

    fn wants_encoding(&self) -> bool {
        false
    }
}

#[test]
fn a_proven_win_takes_the_improved_policy_and_is_chosen() {
    let p = Position::from_text(
        "37 standard .---/-----/-wbw--/-b..b--/-wbb--/-----/---- 1/1/1 0/4/0 2/3/4 P0 - 0",
    )
    .unwrap();
    let win = p.parse_legal_action("Ga1").unwrap();
    assert_eq!(p.play_action(&win).unwrap().outcome(), Some(Outcome::Win(Player::P0)));
    let config = gumbel(64);
    let mut tree = Tree::new(p);
    run(&mut tree, 200, &config, &UniformEvaluator);
    assert_eq!(tree.root_info().proven, Some(1));
    assert_eq!(tree.gumbel_action(&config), Some(win));
    let space = ActionSpace::new(p.board());
    let mut policy = vec![0.0; space.len()];
    tree.policy(&config, &mut policy);
    assert_eq!(policy[space.index(&win)], 1.0);
}

#[test]
fn with_equal_priors_the_improved_policy_ranks_children_by_value() {
    let config = gumbel(16);
    let mut tree = Tree::new(start());
    run(&mut tree, 100, &config, &Hashed);
    let space = ActionSpace::new(start().board());
    let mut policy = vec![0.0; space.len()];
    tree.policy(&config, &mut policy);
    let children = tree.root_children();
    let share = |a: &Action| policy[space.index(a)];
    let visited: Vec<_> = children.iter().filter(|c| c.visits > 0).collect();
    assert_eq!(visited.len(), 16);
    for a in &visited {
        for b in &visited {
            if a.value > b.value + 1e-3 {
                assert!(share(&a.action) > share(&b.action), "{a:?} {b:?}");
            }
        }
    }
    // Unvisited children share the mixed value: one share for all of them.
    let unvisited: Vec<f32> =
        children.iter().filter(|c| c.visits == 0).map(|c| share(&c.action)).collect();
    assert!(unvisited.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-9));
    // The best visited child is above the unvisited share, the worst below it.
    let best = visited.iter().max_by(|a, b| a.value.total_cmp(&b.value)).unwrap();
    let worst = visited.iter().min_by(|a, b| a.value.total_cmp(&b.value)).unwrap();
    assert!(share(&best.action) > unvisited[0] && share(&worst.action) < unvisited[0]);
}
