//! The MCTS-solver of `zertz_search::mcts`: finished games in the tree are exact, proven wins and
//! losses propagate to the root, a search never picks an avoidable proven loss and always takes
//! a proven win, and every proof agrees with the alpha-beta searcher's exact results.
//!
//! The searches here are guided by [`UniformEvaluator`] (uniform priors, value 0): everything
//! they know about a position comes from the finished games they reach.

mod common;

use common::*;
use zertz_env::{Action, Board, Outcome, Position, SplitMix64};
use zertz_search::alphabeta::{AlphaBeta, Limits};
use zertz_search::mcts::{Scratch, Tree, search};
use zertz_search::{Preset, SearchConfig, UniformEvaluator};

fn config() -> SearchConfig {
    Preset::Rollout.config()
}

/// A tree of `pos` after `simulations` simulations (fewer once the root is proven).
fn searched(pos: &Position, simulations: u32, config: &SearchConfig) -> Tree {
    let mut tree = Tree::new(*pos);
    search(
        std::slice::from_mut(&mut tree),
        &[simulations],
        config,
        &UniformEvaluator,
        &mut Scratch::default(),
    )
    .unwrap();
    tree
}

/// The exact value of `pos` for its player to move when the alpha-beta searcher proves one
/// within `depth` whole turns: 1 a win, -1 a loss.
fn alphabeta_proof(pos: &Position, depth: u32) -> Option<i8> {
    let r = AlphaBeta::new(1 << 18).search(pos, &Limits::depth(depth), &|| false)?;
    r.mate_in().map(|m| if m > 0 { 1 } else { -1 })
}

/// The outcome of playing `action` and then, while the same player moves (a capture chain),
/// whatever the tree's candidates say, for `mover`: whether it has won.
fn wins_now(pos: &Position, action: &Action) -> bool {
    let mover = pos.turn();
    let next = pos.play_action(action).unwrap();
    if next.outcome() == Some(Outcome::Win(mover)) {
        return true;
    }
    // In the middle of a chain the same player goes on: a win if some continuation wins.
    next.chain().is_some()
        && next.turn() == mover
        && next.legal_actions().iter().any(|a| wins_now(&next, a))
}

/// Positions with a win for the player to move on this turn (a chain, or an isolation), on 37 and
/// 61 rings, in both marble sets.
fn wins_in_one() -> Vec<Position> {
    let mut out = Vec::new();
    for board in [Board::R37, Board::R61] {
        for (set, p0) in [(STANDARD, [2, 0, 0]), (BLITZ, [1, 0, 0])] {
            out.push(endgame(board, set, CHAIN, p0, [1, 2, 3]));
        }
        for (set, p0, p1) in [(STANDARD, [3, 0, 0], [2, 2, 3]), (BLITZ, [2, 0, 0], [2, 1, 3])] {
            out.push(endgame(board, set, FILL_THE_GROUP, p0, p1));
            out.push(endgame(board, set, CUT_OFF, p0, p1));
        }
    }
    out
}

#[test]
fn a_win_on_this_turn_is_proven_and_every_candidate_wins() {
    for pos in wins_in_one() {
        let what = pos.to_text();
        let tree = searched(&pos, 5_000, &config());
        let info = tree.root_info();
        assert_eq!(info.proven, Some(1), "{what}");
        assert_eq!(info.value, 1.0, "{what}");
        assert!(tree.root_proven());
        // The search stopped once the root was proven, long before its 5,000 simulations.
        assert!(info.total < 5_000, "{what}: {}", info.total);
        let candidates = tree.root_candidates();
        assert!(!candidates.is_empty(), "{what}");
        for (a, _) in &candidates {
            assert!(wins_now(&pos, a), "{what}: {} does not win", pos.action_to_string(a));
        }
        // The training target is the winning moves alone.
        let mut policy = vec![0.0; zertz_env::ActionSpace::new(pos.board()).len()];
        tree.visit_policy(&mut policy);
        let space = zertz_env::ActionSpace::new(pos.board());
        let on_wins: f32 = candidates.iter().map(|(a, _)| policy[space.index(a)]).sum();
        assert!((on_wins - 1.0).abs() < 1e-5, "{what}: {on_wins}");
        // A child proven lost for the chooser is never among the candidates; the children
        // report their proofs from the root player's side.
        for c in tree.root_children() {
            if c.proven == Some(1) {
                assert!(candidates.iter().any(|&(a, _)| a == c.action), "{what}");
            }
        }
    }
}

#[test]
fn wins_two_turns_away_are_proven() {
    for board in [Board::R37, Board::R61] {
        // Through compulsory captures: one free move, then single replies.
        let (set, p0, p1) = (STANDARD, [3, 0, 0], [2, 2, 3]);
        let pos = endgame(board, set, FORCED_CAPTURES, p0, p1);
        let tree = searched(&pos, 200_000, &config());
        assert_eq!(tree.root_info().proven, Some(1), "{}", pos.to_text());
        // And whatever the 27 free replies.
        let (set, p0, p1) = (BLITZ, [2, 2, 0], [0, 1, 2]);
        let pos = endgame(board, set, FREE_REPLIES, p0, p1);
        let tree = searched(&pos, 200_000, &config());
        assert_eq!(tree.root_info().proven, Some(1), "{}", pos.to_text());
        if board == Board::R37 {
            // (Named on 37 rings.)
            let first = pos.parse_legal_move("We5,e4").unwrap();
            let first = pos.move_actions(&first)[0];
            assert!(tree.root_candidates().contains(&(first, tree_visits(&tree, first))));
        }
    }
}

fn tree_visits(tree: &Tree, action: Action) -> u32 {
    tree.root_children().iter().find(|c| c.action == action).map_or(0, |c| c.visits)
}

/// Every proof the solver makes in small endgames agrees with the alpha-beta searcher where
/// that one proves a result within five turns, and where alpha-beta sees a win on this turn the
/// solver proves it too.
#[test]
fn proofs_agree_with_alpha_beta_in_small_endgames() {
    let positions = endgames(11, 300, 40);
    let (mut proven, mut compared, mut wins_now_proven) = (0, 0, 0);
    for pos in &positions {
        let what = pos.to_text();
        let tree = searched(pos, 3_000, &config());
        let info = tree.root_info();
        let exact = alphabeta_proof(pos, 5);
        if let Some(p) = info.proven {
            proven += 1;
            if let Some(e) = exact {
                compared += 1;
                assert_eq!(p, e, "root of {what}");
            }
            // A proven draw: alpha-beta cannot prove a win for either side.
            if p == 0 {
                assert_eq!(exact, None, "{what}");
            }
        }
        // Each proven child of the root agrees too.
        for c in tree.root_children() {
            let (Some(p), Ok(child)) = (c.proven, pos.play_action(&c.action)) else { continue };
            if let Some(e) = alphabeta_proof(&child, 4) {
                let e = if child.turn() == pos.turn() { e } else { -e };
                assert_eq!(p, e, "{} in {what}", pos.action_to_string(&c.action));
            }
        }
        let r = AlphaBeta::new(1 << 18).search(pos, &Limits::depth(1), &|| false).unwrap();
        if r.mate_in() == Some(1) {
            wins_now_proven += 1;
            assert_eq!(info.proven, Some(1), "a win on this turn in {what}");
        }
    }
    assert!(
        proven > 100 && compared > 50 && wins_now_proven > 10,
        "{proven} {compared} {wins_now_proven}"
    );
}

/// With a proven loss among the root's moves and a move that does not lose, the candidates
/// leave the loss out; when every move loses, all are candidates (a move must be played).
#[test]
fn a_proven_loss_is_never_chosen_when_another_move_is_not_lost() {
    let mut seen = 0;
    for pos in endgames(12, 400, 40) {
        let tree = searched(&pos, 2_000, &config());
        let children = tree.root_children();
        let lost = children.iter().filter(|c| c.proven == Some(-1)).count();
        let visited = children.iter().filter(|c| c.visits > 0).count();
        let candidates = tree.root_candidates();
        if lost == 0 || lost == visited {
            if tree.root_info().proven == Some(-1) {
                assert_eq!(candidates.len(), visited, "{}", pos.to_text());
            }
            continue;
        }
        seen += 1;
        for (a, _) in &candidates {
            let c = children.iter().find(|c| c.action == *a).unwrap();
            assert_ne!(c.proven, Some(-1), "{}", pos.to_text());
        }
        assert!(!candidates.is_empty());
    }
    assert!(seen > 20, "{seen}");
}

/// A proven root takes no more simulations, and a tree that follows the game keeps its proofs:
/// a player that follows its candidates from a proven win wins against any replies.
#[test]
fn a_proven_win_is_won_whatever_the_replies() {
    let mut rng = SplitMix64(5);
    let mut played = 0;
    for pos in wins_in_one().into_iter().chain(endgames(13, 200, 30)).take(60) {
        let tree = searched(&pos, 3_000, &config());
        if tree.root_info().proven != Some(1) {
            continue;
        }
        let winner = pos.turn();
        for _ in 0..4 {
            let (mut p, mut t) = (pos, tree.clone());
            while p.outcome().is_none() {
                let action = if p.turn() == winner {
                    // Fresh simulations top the tree up where a reply left the proof.
                    if !t.root_proven() {
                        search(
                            std::slice::from_mut(&mut t),
                            &[3_000],
                            &config(),
                            &UniformEvaluator,
                            &mut Scratch::default(),
                        )
                        .unwrap();
                    }
                    assert_eq!(t.root_info().proven, Some(1), "{}", p.to_text());
                    let c = t.root_candidates();
                    c[rng.below(c.len())].0
                } else {
                    let actions = p.legal_actions();
                    actions[rng.below(actions.len())]
                };
                t.advance(&action, usize::MAX);
                p = p.play_action(&action).unwrap();
            }
            assert_eq!(p.outcome(), Some(Outcome::Win(winner)), "from {}", pos.to_text());
            played += 1;
        }
    }
    assert!(played >= 60, "{played} games from proven wins");
}

/// A finished game is exact at the root: no search, its score as the value.
#[test]
fn a_finished_game_is_proven_at_the_root() {
    let pos = wins_in_one()[2];
    let win = pos.legal_actions().into_iter().find(|a| wins_now(&pos, a)).unwrap();
    let over = pos.play_action(&win).unwrap();
    assert!(over.is_over());
    let tree = searched(&over, 100, &config());
    let info = tree.root_info();
    assert_eq!((info.total, info.proven), (0, Some(over.outcome().unwrap().score(over.turn()))));
    assert_eq!(info.value, f32::from(info.proven.unwrap()));
    assert!(tree.root_candidates().is_empty());
}

/// Forced positions below the root are not evaluated: after `Gd1,f3` the replies are two
/// compulsory captures and P0's is the win, so that placement is proven at its first visit, and
/// the whole search needs no more evaluations than the root has moves (and its own).
#[test]
fn a_line_of_forced_replies_costs_one_evaluation() {
    let pos = endgame(Board::R37, STANDARD, FORCED_CAPTURES, [3, 0, 0], [2, 2, 3]);
    let mut tree = Tree::new(pos);
    let mut scratch = Scratch::default();
    search(std::slice::from_mut(&mut tree), &[100_000], &config(), &UniformEvaluator, &mut scratch)
        .unwrap();
    let info = tree.root_info();
    assert_eq!(
        info.proven,
        Some(1),
        "{} simulations, {} evaluations",
        info.total,
        scratch.evaluated
    );
    let moves = pos.count_legal_actions() as u64;
    assert!(scratch.evaluated <= moves + 1, "{} evaluations, {moves} moves", scratch.evaluated);
    assert!(tree.root_children().iter().any(|c| c.proven == Some(1)));
}
