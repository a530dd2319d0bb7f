//! The alpha-beta player (`AlphaBetaBot`, spec `alphabeta`): its specs and their errors, a
//! capture chain played on hop by hop, whole legal games against `random` on 37 and 61 rings
//! and in blitz, wins at depth 2, and the work it reports.

mod common;

use common::Checked;
use std::time::Duration;

use zertz_arena::matches::{End, play_game};
use zertz_arena::players::{
    AlphaBetaBot, Bot, DEFAULT_ALPHABETA_TIME, Models, PlayerSpec, RandomBot, SpecError, WorkUnit,
};
use zertz_env::{Action, Board, MarbleSet, Outcome, Player, Position, Variant};
use zertz_search::alphabeta::{Limits, MAX_DEPTH};

fn spec(text: &str) -> PlayerSpec {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn build(text: &str, seed: u64) -> Box<dyn Bot> {
    spec(text).build(seed, &Models::new()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn pos(text: &str) -> Position {
    Position::from_text(text).unwrap_or_else(|e| panic!("bad position {text:?}: {e}"))
}

// ------------------------------------------------------------------------------------------ specs

#[test]
fn specs_parse_and_display_round_trip() {
    let timed = |spec: PlayerSpec, seconds: f64| PlayerSpec::Timed {
        spec: Box::new(spec),
        time: Duration::from_secs_f64(seconds),
    };
    let cases = [
        ("alphabeta", PlayerSpec::AlphaBeta(None), "alphabeta"),
        ("alphabeta:3", PlayerSpec::AlphaBeta(Some(3)), "alphabeta:3"),
        ("alphabeta:64", PlayerSpec::AlphaBeta(Some(MAX_DEPTH)), "alphabeta:64"),
        ("alphabeta:time=0.5", timed(PlayerSpec::AlphaBeta(None), 0.5), "alphabeta:time=0.5"),
        (
            "alphabeta:2:time=0.25",
            timed(PlayerSpec::AlphaBeta(Some(2)), 0.25),
            "alphabeta:2:time=0.25",
        ),
        ("mcts:500:time=1", timed(PlayerSpec::Mcts(500), 1.0), "mcts:500:time=1"),
    ];
    for (text, want, shown) in cases {
        let parsed = spec(text);
        assert_eq!(parsed, want, "{text}");
        assert_eq!(parsed.to_string(), shown, "{text}");
        assert_eq!(spec(&parsed.to_string()), parsed, "{text}");
        assert!(parsed.searches(), "{text}");
    }
    // A network's player: its simulations are shown, and the model path keeps its dots.
    let nn = spec("nn:model.safetensors:time=2");
    assert_eq!(nn.own_time(), Some(Duration::from_secs(2)));
    assert_eq!(nn.network().map(|(m, _)| m), Some("model.safetensors"));
    assert!(
        matches!(nn.untimed(), PlayerSpec::Neural { model, .. } if model == "model.safetensors")
    );
    let shown = nn.to_string();
    assert!(shown.starts_with("nn:model.safetensors:") && shown.ends_with(":time=2"), "{shown}");
    assert_eq!(spec(&shown), nn);

    let timed = spec("alphabeta:2:time=0.25");
    assert_eq!(timed.own_time(), Some(Duration::from_millis(250)));
    assert_eq!(timed.untimed(), &PlayerSpec::AlphaBeta(Some(2)));
    assert_eq!(spec("alphabeta").own_time(), None);
    // Spaces around and the case of the words do not matter.
    assert_eq!(spec(" AlphaBeta:2:TIME=0.25 "), timed);
    // A built player is named by its spec.
    for text in ["alphabeta", "alphabeta:3", "alphabeta:time=0.5", "alphabeta:2:time=0.25"] {
        assert_eq!(build(text, 0).name(), text);
    }
}

#[test]
fn bad_specs_are_one_line_errors_naming_the_problem() {
    let depth = "the depth must be an integer from 1 to 64";
    let time = "the time per move must be a number of seconds from 0.001 to 3600";
    let cases = [
        ("alphabeta:0", depth),
        ("alphabeta:-1", depth),
        ("alphabeta:65", depth),
        ("alphabeta:1e9", depth),
        ("alphabeta:x", depth),
        ("alphabeta:", depth),
        ("alphabeta:2.5", depth),
        ("alphabeta:time=0", time),
        ("alphabeta:time=-1", time),
        ("alphabeta:time=nan", time),
        ("alphabeta:time=inf", time),
        ("alphabeta:time=1e9", time),
        ("alphabeta:time=0.0001", time),
        ("alphabeta:time=x", "'x' is not a number of seconds"),
        ("alphabeta:time=", "'' is not a number of seconds"),
        ("random:time=1", "random does not search, so it takes no time per move"),
        ("greedy:time=1", "greedy does not search, so it takes no time per move"),
        ("alphabeta:time=1:time=2", "one time per move at most"),
        ("alphabeta:3:time=1:time=2", "one time per move at most"),
        // A part that belongs nowhere is named (it was read as part of a model's file name).
        ("nn:builtin:fp8", "'fp8' is not a simulation count, a precision (auto, fp32"),
        ("nn:builtin:time=0.01:gumbel=4", "'time=0.01' must end the spec"),
        ("alphabeta:time=1:3", "'time=1' must end the spec"),
    ];
    // A bad player under a good time: the error names the player.
    let inner = [("alphabeta:0:time=1", "alphabeta:0", depth)];
    let cases = cases.into_iter().map(|(text, reason)| (text, text, reason)).chain(inner);
    for (text, named, reason) in cases {
        let e = text.parse::<PlayerSpec>().expect_err(text);
        let shown = e.to_string();
        assert!(!shown.contains('\n'), "{text}: {shown}");
        assert!(shown.contains(&format!("'{named}'")), "{text}: {shown}");
        assert!(shown.contains(reason), "{text}: {shown}");
        match e {
            SpecError::Depth(_) => assert_eq!(reason, depth, "{text}"),
            SpecError::Part { .. } => {}
            SpecError::Time { .. } => assert_ne!(reason, depth, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
    }
}

#[test]
fn the_limits_follow_the_spec_and_the_move_time() {
    assert_eq!(AlphaBetaBot::new(Some(3)).limits(), Limits::depth(3));
    assert_eq!(
        AlphaBetaBot::new(None).limits(),
        Limits { max_depth: MAX_DEPTH, time: Some(DEFAULT_ALPHABETA_TIME) }
    );
    // Held to 1..=MAX_DEPTH.
    assert_eq!(AlphaBetaBot::new(Some(0)).limits(), Limits::depth(1));
    assert_eq!(AlphaBetaBot::new(Some(1000)).limits(), Limits::depth(MAX_DEPTH));
    // A time per move stops a fixed depth sooner, and sets the time of `alphabeta`.
    let mut p = AlphaBetaBot::new(Some(2));
    p.set_move_time(Some(Duration::from_millis(250)));
    assert_eq!(p.limits(), Limits { max_depth: 2, time: Some(Duration::from_millis(250)) });
    p.set_move_time(None);
    assert_eq!(p.limits(), Limits::depth(2));
    let mut p = AlphaBetaBot::new(None);
    p.set_move_time(Some(Duration::from_millis(50)));
    assert_eq!(p.limits(), Limits::time(Duration::from_millis(50)));
}

// ------------------------------------------------------------------------------------ chains

/// P0 can start three capture chains: d2xd4xd6 takes a fourth white and wins (from
/// `arena/tests/protocol.rs`).
const CHAIN_WIN: &str =
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 - 0";

/// The same, P0 in the middle of its chain with the marble on d2: d2xd4 then d4xd6 wins,
/// d4xb4 (a grey) or d2xf2 end the chain without a win.
const CHAIN_ROOT: &str =
    "37 standard ----/---.-/---g--/.bw.w.-/-g----/-.---/---- 1/4/6 2/0/0 1/2/3 P0 d2 0";

/// Lets `player` choose in `pos` until the turn passes or the game ends: the actions, each
/// checked to be a legal hop of the chain marble when a chain is under way.
fn play_out_turn(player: &mut dyn Bot, pos: &Position) -> (Position, Vec<Action>) {
    let mover = pos.turn();
    let mut p = *pos;
    let mut actions = Vec::new();
    loop {
        let a = player.choose(&p).unwrap();
        assert!(p.is_legal_action(&a), "{a:?} in {}", p.to_text());
        if let Some(at) = p.chain() {
            assert!(matches!(a, Action::Hop(h) if h.from == at), "{a:?} in {}", p.to_text());
        }
        player.observe(&p, &a);
        p = p.play_action(&a).unwrap();
        actions.push(a);
        if p.turn() != mover || p.is_over() {
            return (p, actions);
        }
        assert!(p.chain().is_some(), "the same player moves again only in a chain");
        assert!(actions.len() < 30, "{}", pos.to_text());
    }
}

#[test]
fn in_the_middle_of_a_chain_it_plays_on_along_legal_hops() {
    // Asked in the middle of a chain it did not plan (its own, after an opening, say).
    for text in ["alphabeta", "alphabeta:1", "alphabeta:3", "alphabeta:time=0.01"] {
        let mut player = build(text, 0);
        let (end, actions) = play_out_turn(player.as_mut(), &pos(CHAIN_ROOT));
        assert_eq!(actions.len(), 2, "{text}");
        assert_eq!(end.outcome(), Some(Outcome::Win(Player::P0)), "{text}");
    }
    // Its own chain, planned whole and played hop by hop.
    let mut player = AlphaBetaBot::new(Some(2));
    let start = pos(CHAIN_WIN);
    let (end, actions) = play_out_turn(&mut player, &start);
    assert_eq!(start.action_to_string(&actions[0]), "d2xd4");
    assert_eq!(actions.len(), 2);
    assert_eq!(end.outcome(), Some(Outcome::Win(Player::P0)));
    let report = player.last_search().expect("a search");
    assert_eq!(report.mate_in(), Some(1));
    assert_eq!(start.move_to_string(&report.best), "d2xd4xd6");
    // Chains under way in random games of every variant: the player ends each turn legally.
    let mut chains = 0;
    for (i, variant) in Variant::all().enumerate() {
        let mut random = RandomBot::new(i as u64);
        let mut p = Position::new(variant, Player::P0);
        while !p.is_over() {
            if p.chain().is_some() {
                chains += 1;
                let mut player = AlphaBetaBot::new(Some(1 + chains % 2));
                let (end, _) = play_out_turn(&mut player, &p);
                assert!(end.turn() != p.turn() || end.is_over());
            }
            let a = random.choose(&p).unwrap();
            p = p.play_action(&a).unwrap();
        }
    }
    assert!(chains >= 5, "{chains} chains");
}

// ------------------------------------------------------------------------------------ games

#[test]
fn whole_games_against_random_are_legal() {
    let variants = [
        Variant::new(Board::R37, MarbleSet::Standard),
        Variant::new(Board::R61, MarbleSet::Standard),
        Variant::new(Board::R37, MarbleSet::Blitz),
    ];
    for (i, &variant) in variants.iter().enumerate() {
        for (j, text) in ["alphabeta:1", "alphabeta:time=0.002"].iter().enumerate() {
            let seed = (i * 2 + j) as u64;
            let mut ab = Checked(build(text, seed));
            let mut random = Checked(build("random", seed));
            let (p0, p1): (&mut dyn Bot, &mut dyn Bot) =
                if j == 0 { (&mut ab, &mut random) } else { (&mut random, &mut ab) };
            let g = play_game(p0, p1, variant, 2000).unwrap();
            assert!(matches!(g.end, End::Win | End::Draw), "{variant} {text}: {:?}", g.end);
            assert!(g.game.is_over(), "{variant} {text}");
            assert_eq!(g.winner, g.game.outcome().and_then(|o| o.winner()));
            let side = if j == 0 { 0 } else { 1 };
            assert_eq!(g.effort[side].unit, Some(WorkUnit::Nodes), "{variant} {text}");
            assert!(g.effort[side].work > 0, "{variant} {text}");
        }
    }
}

#[test]
fn depth_two_beats_random_every_game() {
    let variants = [
        Variant::new(Board::R37, MarbleSet::Standard),
        Variant::new(Board::R37, MarbleSet::Blitz),
        Variant::new(Board::R61, MarbleSet::Standard),
    ];
    for (i, &variant) in variants.iter().enumerate() {
        for ab_first in [true, false] {
            let seed = 10 + i as u64 * 2 + u64::from(ab_first);
            let mut ab = Checked(build("alphabeta:2", seed));
            let mut random = Checked(build("random", seed));
            let (p0, p1): (&mut dyn Bot, &mut dyn Bot) =
                if ab_first { (&mut ab, &mut random) } else { (&mut random, &mut ab) };
            let g = play_game(p0, p1, variant, 2000).unwrap();
            let side = if ab_first { Player::P0 } else { Player::P1 };
            assert_eq!(g.end, End::Win, "{variant}, seed {seed}");
            assert_eq!(g.winner, Some(side), "{variant}, seed {seed}: {:?}", g.game.notation());
        }
    }
}

#[test]
fn work_is_counted_in_nodes_and_grows() {
    let start = Position::new(Variant::new(Board::R37, MarbleSet::Blitz), Player::P0);
    for text in ["alphabeta:1", "alphabeta:2", "alphabeta:time=0.01"] {
        let mut p = build(text, 0);
        assert_eq!(p.work(), Some((WorkUnit::Nodes, 0)), "{text}");
        let mut pos = start;
        let mut last = 0;
        for _ in 0..3 {
            let a = p.choose(&pos).unwrap();
            pos = pos.play_action(&a).unwrap();
            let (unit, work) = p.work().unwrap();
            assert_eq!(unit, WorkUnit::Nodes);
            assert!(work > last, "{text}: {work} after {last}");
            last = work;
        }
    }
    // Quiescence nodes count too: the search's nodes and qnodes.
    let mut p = AlphaBetaBot::new(Some(2));
    p.choose(&start).unwrap();
    let r = p.last_search().unwrap();
    assert_eq!(p.work(), Some((WorkUnit::Nodes, r.nodes + r.qnodes)));
    // Random plays without searching.
    assert_eq!(RandomBot::new(0).work(), None);
}

// ------------------------------------------------------------------------------------------ stops

/// A match of a player whose every decision takes an hour or more, stopped half a second in: it
/// ends with no game finished, long before a decision would. (How soon: `scripts/bench-stops.py`;
/// a loaded machine may take its time, and only a stop that never came fails here.)
fn stopped_long_before_a_decision(a: &str, board: Board) {
    use std::time::Instant;
    use zertz_arena::config::MatchSettings;
    use zertz_arena::matches::{MatchConfig, MatchError, run_match_until};

    let settings = MatchSettings { games: 2, threads: 2, board, ..MatchSettings::default() };
    let config = MatchConfig::with(spec(a), spec("random"), settings);
    let started = Instant::now();
    let result = common::stopped_after(Duration::from_millis(500), |stop| {
        run_match_until(&config, &|_| Ok(()), stop)
    });
    let took = started.elapsed();
    assert!(matches!(result, Err(MatchError::Stopped { games: 0 })), "{a}: {result:?}");
    assert!(took < common::NEVER, "{a} on {board}: the match took {took:?}");
}

#[test]
fn a_stop_reaches_a_search_under_way() {
    // Before the stop reached the searches, these ran on for their time per move, or for
    // minutes.
    stopped_long_before_a_decision("alphabeta:time=3600", Board::R37);
    stopped_long_before_a_decision("alphabeta:20", Board::R61);
    stopped_long_before_a_decision("mcts:time=3600", Board::R37);
    stopped_long_before_a_decision("mcts:1048576", Board::R61);
}
