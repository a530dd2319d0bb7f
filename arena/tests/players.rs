//! Players and matches: legal play on every board, greedy captures, MCTS strength, Elo, records.

mod common;

use common::Checked;
use zertz_arena::config::MatchSettings;
use zertz_arena::matches::MatchConfig;
use zertz_arena::matches::{End, elo, elo_from_score, play_game, play_match};
use zertz_arena::players::{
    Bot, BotError, GUMBEL_PLAN_HEADROOM, GreedyBot, MAX_SIMULATIONS, MctsBot, Models, PlayerSpec,
    RandomBot, SpecError, WorkUnit, gumbel_plan, parse_player,
};
use zertz_env::{Action, Board, Game, MarbleSet, Outcome, Player, Position, Variant};
use zertz_search::Precision;

#[test]
fn every_player_plays_legal_actions_on_every_board() {
    let specs = ["random", "greedy", "mcts:24", "uniform:24"];
    for (i, variant) in Variant::all().enumerate() {
        for (j, a) in specs.iter().enumerate() {
            let b = specs[(j + i) % specs.len()];
            let seed = (i * 10 + j) as u64;
            let mut p0 =
                Checked(a.parse::<PlayerSpec>().unwrap().build(seed, &Models::new()).unwrap());
            let mut p1 =
                Checked(b.parse::<PlayerSpec>().unwrap().build(seed + 1, &Models::new()).unwrap());
            let g = play_game(&mut p0, &mut p1, variant, 120).unwrap();
            assert_ne!(g.end, End::Illegal, "{variant}: {a} vs {b}");
            assert!(g.actions <= 120);
            match g.end {
                End::Win => assert_eq!(g.winner, g.game.outcome().and_then(|o| o.winner())),
                _ => assert_eq!(g.winner, None),
            }
        }
    }
}

#[test]
fn games_between_baselines_finish_legally() {
    // Whole games (greedy plays chains hop by hop from its plan).
    for seed in 0..6 {
        let variant = Variant::new(Board::R37, MarbleSet::ALL[seed % 2]);
        let mut p0 = Checked(Box::new(GreedyBot::new(seed as u64)));
        let mut p1 = Checked(Box::new(RandomBot::new(seed as u64)));
        let g = play_game(&mut p0, &mut p1, variant, 2000).unwrap();
        assert_ne!(g.end, End::Illegal);
        assert_ne!(g.end, End::Limit);
        assert!(g.game.is_over());
    }
}

/// P0 holds three whites and may capture a white (a1xa3, a win) or a black (g1xg3).
const WHITE_WIN: &str =
    "37 standard gw../...../....../......./....../...../gb.. 2/6/9 3/0/0 0/0/0 P0 - 0";

#[test]
fn greedy_takes_an_immediate_capture_win() {
    let pos = Position::from_text(WHITE_WIN).unwrap();
    assert_eq!(pos.count_legal_actions(), 2);
    for seed in 0..20 {
        let a = GreedyBot::new(seed).choose(&pos).unwrap();
        let after = pos.play_action(&a).unwrap();
        assert_eq!(after.outcome(), Some(Outcome::Win(Player::P0)), "seed {seed}: {a:?}");
    }
    // Search finds it too.
    let a = MctsBot::rollout(50, 1).choose(&pos).unwrap();
    assert_eq!(pos.play_action(&a).unwrap().outcome(), Some(Outcome::Win(Player::P0)));
}

#[test]
fn greedy_avoids_handing_over_a_win() {
    // P1 holds three whites and a white stands on d4: a marble placed next to it would let P1
    // jump over it and win.
    let text = "37 standard ..../...../....../...w.../....../...../.... 2/8/10 0/0/0 3/0/0 P0 - 0";
    let pos = Position::from_text(text).unwrap();
    for seed in 0..5 {
        let a = GreedyBot::new(seed).choose(&pos).unwrap();
        let after = pos.play_action(&a).unwrap();
        for r in after.legal_moves() {
            let next = after.play(&r).unwrap();
            assert_ne!(next.outcome(), Some(Outcome::Win(Player::P1)), "seed {seed}: {a:?}");
        }
    }
}

#[test]
fn mcts_skips_search_when_forced_and_reuses_its_tree() {
    // One legal action: no search.
    let forced =
        "37 standard gw../...../....../......./....../...../.... 2/7/10 3/0/0 0/0/0 P0 - 0";
    let pos = Position::from_text(forced).unwrap();
    assert_eq!(pos.count_legal_actions(), 1);
    let mut p = MctsBot::rollout(100, 0);
    let a = p.choose(&pos).unwrap();
    assert!(pos.is_legal_action(&a));
    assert!(p.tree().is_none());

    // The chosen child keeps its subtree, and the tree follows the opponent's action.
    let start = Position::new(Variant::default(), Player::P0);
    let mut p = MctsBot::rollout(200, 0);
    let a = p.choose(&start).unwrap();
    let after = start.play_action(&a).unwrap();
    let tree = p.tree().unwrap();
    assert_eq!(tree.position(), &after);
    assert!(tree.root_visits() > 0);
    let reply = RandomBot::new(3).choose(&after).unwrap();
    p.observe(&after, &reply);
    let next = after.play_action(&reply).unwrap();
    assert_eq!(p.tree().unwrap().position(), &next);
    let a2 = p.choose(&next).unwrap();
    assert!(next.is_legal_action(&a2));
}

#[test]
fn search_threads_give_a_players_search_more_cores_and_count_their_time() {
    use std::sync::Arc;
    use std::time::Duration;
    use zertz_search::{RolloutEvaluator, SearchConfig};
    let start = Position::new(Variant::default(), Player::P0);
    let config = SearchConfig { leaves_per_round: 8, ..SearchConfig::default() };
    let build = || MctsBot::new("mcts", Arc::new(RolloutEvaluator::default()), 400, 1);
    let mut one = build().with_config(config.clone());
    let mut two = build().with_config(config.clone());
    let mut again = build().with_config(config.clone());
    two.set_search_threads(2);
    again.set_search_threads(2);
    let (a1, a2) = (one.choose(&start).unwrap(), two.choose(&start).unwrap());
    assert!(start.is_legal_action(&a1) && start.is_legal_action(&a2));
    // The same simulations; the search in turns fixed in advance: the same choice each time.
    assert_eq!(again.choose(&start).unwrap(), a2);
    assert_eq!(one.work(), two.work());
    assert_eq!(one.cpu_elsewhere(), Duration::ZERO);
    assert!(two.cpu_elsewhere() > Duration::ZERO, "the helper's playouts are counted");
    // Back to one thread: the helpers' time so far stays counted.
    let counted = two.cpu_elsewhere();
    two.set_search_threads(1);
    assert_eq!(two.cpu_elsewhere(), counted);

    // Built from a spec: a network's player takes the models' search threads (a rollout
    // evaluator stands in for the network).
    let mut models = Models::new().with_search_threads(3);
    models.insert("net.safetensors", Arc::new(RolloutEvaluator::default()));
    assert_eq!(models.search_threads(), 3);
    let mut nn = "nn:net.safetensors:64".parse::<PlayerSpec>().unwrap().build(0, &models).unwrap();
    nn.choose(&start).unwrap();
    assert!(nn.cpu_elsewhere() > Duration::ZERO);
    let mut alone = "nn:net.safetensors:64".parse::<PlayerSpec>().unwrap();
    let mut single = alone.build(0, &models.clone().with_search_threads(1)).unwrap();
    single.choose(&start).unwrap();
    assert_eq!(single.cpu_elsewhere(), Duration::ZERO);
    alone = "nn:net.safetensors:64:time=0.05".parse().unwrap();
    let mut timed = alone.build(0, &models).unwrap();
    timed.choose(&start).unwrap();
    assert!(timed.cpu_elsewhere() > Duration::ZERO, "through a player's own time");
}

#[test]
fn a_match_counts_each_sides_cpu_seconds() {
    let settings = MatchSettings { games: 2, threads: 1, ..MatchSettings::default() };
    let config =
        MatchConfig::with("mcts:300".parse().unwrap(), "random".parse().unwrap(), settings);
    let r = zertz_arena::matches::run_match(&config, &|_| Ok(())).unwrap();
    let (a, b) = (r.a_effort, r.b_effort);
    assert!(a.cpu_seconds > 0.0 && a.moves > 0, "{a:?}");
    // The searching side costs far more than the random one, and no more CPU than one thread
    // had wall time (mcts:300 does not split its rounds: one leaf a round).
    assert!(a.cpu_seconds > 10.0 * b.cpu_seconds, "{a:?} {b:?}");
    assert!(a.cpu_seconds <= a.seconds * 1.2 + 0.01, "{a:?}");
    assert!(a.describe().contains("s of CPU"), "{}", a.describe());
}

#[test]
fn bench_player_measures_each_position_and_thread_count() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    use std::time::Duration;
    use zertz_arena::bench::{BenchError, bench_player, bench_positions};
    let positions = bench_positions(Board::R37);
    let names: Vec<_> = positions.iter().map(|(n, _)| *n).collect();
    assert_eq!(names, ["opening", "middle", "endgame"]);
    // Fixed: the same positions every time, each further into a game than the one before.
    assert_eq!(positions, bench_positions(Board::R37));
    let rings = |p: &Position| p.rings().count_ones();
    assert!(rings(&positions[0].1) >= rings(&positions[1].1));
    assert!(positions[1].1 != positions[2].1);
    for (_, p) in &positions {
        assert!(p.outcome().is_none() && p.count_legal_actions() > 1);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let spec: PlayerSpec = "mcts:100".parse().unwrap();
    let rows = bench_player(
        &spec,
        &Models::new(),
        Board::R37,
        &[1, 2],
        Duration::from_millis(30),
        1,
        &stop,
    )
    .unwrap();
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(r.unit, WorkUnit::Simulations);
        assert!(r.work > 0 && r.per_second > 0.0 && r.per_cpu_second > 0.0, "{r:?}");
        // A search of its move time, not of the spec's 100 simulations (a busy machine may
        // take longer: only a search that never ends fails the bound).
        assert!((0.02..60.0).contains(&r.seconds), "a search of its move time: {r:?}");
    }
    assert_eq!(rows.iter().map(|r| r.search_threads).collect::<Vec<_>>(), [1, 1, 1, 2, 2, 2]);
    let e = bench_player(
        &"random".parse().unwrap(),
        &Models::new(),
        Board::R37,
        &[1],
        Duration::from_millis(10),
        1,
        &stop,
    )
    .unwrap_err();
    assert!(matches!(e, BenchError::NoSearch(_)), "{e}");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let e = bench_player(&spec, &Models::new(), Board::R37, &[1], Duration::from_secs(5), 1, &stop)
        .unwrap_err();
    assert!(matches!(e, BenchError::Stopped), "{e}");
}

#[test]
fn specs_parse_and_name_players() {
    for (spec, name) in [
        ("random", "random"),
        ("greedy", "greedy"),
        ("mcts:1000", "mcts:1000"),
        ("mcts", "mcts:1000"),
        ("uniform:800", "uniform:800"),
        (" MCTS:50 ", "mcts:50"),
    ] {
        assert_eq!(parse_player(spec).unwrap().name(), name, "{spec}");
        assert_eq!(spec.parse::<PlayerSpec>().unwrap().to_string(), name);
    }
    for bad in ["alphazero", "mcts:0", "mcts:lots", "random:3", ""] {
        let e = parse_player(bad).err().unwrap();
        assert!(e.to_string().contains(bad.trim()), "{bad}: {e}");
        let simulations = bad.starts_with("mcts");
        assert_eq!(matches!(e, SpecError::Simulations(_)), simulations, "{bad}: {e:?}");
    }
    // Not a precision, nor any part of a file's name (no '/', '\\' or '.'): named as the bad part
    // (it was read as part of the model's file name: "cannot read model m.safetensors:bf17").
    for (spec, part) in [
        ("nn:m.safetensors:bf17", "bf17"),
        ("nn:builtin:fp8", "fp8"),
        ("nn:m.safetensors:8:fast", "fast"),
    ] {
        let e = spec.parse::<PlayerSpec>().unwrap_err();
        assert!(matches!(&e, SpecError::Part { part: p, .. } if p == part), "{spec}: {e:?}");
    }
    for (spec, model, sims, precision, gumbel) in [
        ("nn:model.safetensors", "model.safetensors", 400, None, None),
        ("nn:runs/a:b/m.safetensors:64", "runs/a:b/m.safetensors", 64, None, None),
        ("NN: m.safetensors :7", "m.safetensors", 7, None, None),
        ("nn:m.safetensors:64:bf16", "m.safetensors", 64, Some(Precision::Bf16), None),
        ("nn:m.safetensors:FP16", "m.safetensors", 400, Some(Precision::Fp16), None),
        ("nn:a:b.safetensors:8:fp32", "a:b.safetensors", 8, Some(Precision::Fp32), None),
        ("nn:m.safetensors:9:auto", "m.safetensors", 9, Some(Precision::Auto), None),
        // A Gumbel root, last.
        ("nn:m.safetensors:64:gumbel=16", "m.safetensors", 64, None, Some(16)),
        ("nn:m.safetensors:GUMBEL= 2", "m.safetensors", 400, None, Some(2)),
        (
            "nn:a:b.safetensors:8:bf16:gumbel=65536",
            "a:b.safetensors",
            8,
            Some(Precision::Bf16),
            Some(65536),
        ),
    ] {
        let parsed = spec.parse::<PlayerSpec>().unwrap();
        let expected =
            PlayerSpec::Neural { model: model.into(), simulations: sims, precision, gumbel };
        assert_eq!(parsed, expected, "{spec}");
        assert_eq!(parsed.model(), Some(model));
        assert_eq!(parsed.network(), Some((model, precision)));
        assert_eq!(parsed.to_string().parse::<PlayerSpec>().unwrap(), parsed);
    }
    assert_eq!(
        "nn:m.safetensors:64:bf16".parse::<PlayerSpec>().unwrap().to_string(),
        "nn:m.safetensors:64:bf16"
    );
    assert_eq!(
        "nn:m.safetensors:8:gumbel=16:time=0.5".parse::<PlayerSpec>().unwrap().to_string(),
        "nn:m.safetensors:8:gumbel=16:time=0.5"
    );
    for bad in
        ["nn", "nn:", "nn:m.safetensors:0", "nn:bf16:0", "nn:m.safetensors:0:bf16", "nn::bf16"]
    {
        assert!(bad.parse::<PlayerSpec>().is_err(), "{bad}");
    }
    let gumbels = [
        "nn:m.safetensors:gumbel=1",
        "nn:m.safetensors:8:gumbel=0",
        "nn:m.safetensors:gumbel=65537",
        "nn:m.safetensors:gumbel=",
    ];
    for bad in gumbels {
        let e = bad.parse::<PlayerSpec>().unwrap_err();
        assert!(matches!(e, SpecError::Gumbel(_)), "{bad}: {e:?}");
        assert!(e.to_string().contains(bad) && e.to_string().contains("gumbel=K"), "{e}");
    }
    // A neural player needs its evaluator: refused by name without one, built with one.
    let e = parse_player("nn:model.safetensors").err().unwrap();
    assert_eq!(
        e,
        SpecError::NotLoaded {
            player: "nn:model.safetensors:400".into(),
            model: "model.safetensors".into()
        }
    );
    assert!(
        e.to_string().contains("model.safetensors") && e.to_string().contains("not loaded"),
        "{e}"
    );
    let mut models = Models::new();
    models.insert("model.safetensors", std::sync::Arc::new(zertz_search::UniformEvaluator));
    let spec: PlayerSpec = "nn:model.safetensors:16".parse().unwrap();
    let mut p = spec.build(1, &models).unwrap();
    assert_eq!(p.name(), "nn:model.safetensors:16");
    // A player that names a precision needs the network loaded in it.
    let bf16: PlayerSpec = "nn:model.safetensors:16:bf16".parse().unwrap();
    assert!(matches!(bf16.build(1, &models), Err(SpecError::NotLoaded { .. })));
    models.insert_key(
        ("model.safetensors".into(), Some(Precision::Bf16)),
        std::sync::Arc::new(zertz_search::UniformEvaluator),
    );
    assert_eq!(bf16.build(1, &models).unwrap().name(), "nn:model.safetensors:16:bf16");
    let pos = Position::new(Variant::default(), Player::P0);
    assert!(pos.is_legal_action(&p.choose(&pos).unwrap()));
}

/// Uniform answers; sets `stop` once it has answered `after` positions.
struct StopAfter {
    answered: std::sync::atomic::AtomicU64,
    after: u64,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl zertz_search::Evaluator for StopAfter {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(
        &self,
        batch: &zertz_search::Batch<'_>,
        out: &mut zertz_search::Output<'_>,
    ) -> Result<(), zertz_search::EvalError> {
        use std::sync::atomic::Ordering;
        let answered = self.answered.fetch_add(batch.len() as u64, Ordering::SeqCst);
        if answered + batch.len() as u64 >= self.after {
            self.stop.store(true, Ordering::SeqCst);
        }
        zertz_search::UniformEvaluator.evaluate(batch, out)
    }
}

#[test]
fn a_gumbel_root_under_a_time_per_move_plans_its_simulations_from_the_time() {
    // Ten minutes a move, and a stop once the evaluator has answered 2000 positions: what the
    // second search plans does not depend on how fast the machine runs the first (its 50
    // simulations would have to take half a minute to plan fewer than 1000).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let eval = StopAfter { answered: 0.into(), after: 2000, stop: stop.clone() };
    let mut models = Models::new();
    models.insert("m.safetensors", std::sync::Arc::new(eval));
    let spec: PlayerSpec = "nn:m.safetensors:50:gumbel=4:time=600".parse().unwrap();
    let mut p = spec.build(1, &models).unwrap();
    p.set_stop(stop);
    let mut game = Game::from_position(Position::new(Variant::default(), Player::P0));
    // The first search knows no rate yet: it plans the spec's count and stops there, long
    // before its time is spent (a PUCT root would search until then).
    let a = p.choose(game.position()).unwrap();
    assert_eq!(p.work(), Some((WorkUnit::Simulations, 50)));
    game.play_action(&a).unwrap();
    // The next one plans for what its time allows at the rate measured: far more (here, until
    // the stop).
    let b = p.choose(game.position()).unwrap();
    assert!(game.position().is_legal_action(&b));
    let (_, total) = p.work().unwrap();
    assert!(total > 1000, "{total} simulations in two searches");
    // The plan: the spec's count without a rate, then more than the rate fits in the time, so
    // that a search faster than the mean still runs until its time is spent.
    let second = std::time::Duration::from_secs(1);
    assert_eq!(gumbel_plan(None, 50, second), 50);
    let planned = gumbel_plan(Some(2000.0), 50, second);
    assert_eq!(planned, (2000.0 * GUMBEL_PLAN_HEADROOM) as u32);
    assert!(planned > 2000, "{planned}");
    assert_eq!(gumbel_plan(Some(1e-9), 50, second), 1);
    assert_eq!(gumbel_plan(Some(1e12), 50, second), MAX_SIMULATIONS);
}

#[test]
fn rollout_mcts_beats_random() {
    let r = play_match("mcts:200", "random", 10, Variant::default(), 11, 2).unwrap();
    assert!(r.wins >= 8, "{} wins, {} draws, {} losses", r.wins, r.draws, r.losses);
}

#[test]
fn elo_from_scores() {
    assert_eq!(elo_from_score(0.5), 0.0);
    assert!((elo_from_score(0.75) - 190.85).abs() < 0.01);
    assert!((elo_from_score(0.25) + 190.85).abs() < 0.01);
    let e = elo(75, 0, 25);
    assert!((e.diff - 190.85).abs() < 0.01);
    assert!(e.low < e.diff && e.diff < e.high);
    // 0.75 ± 1.96 √(0.1875 / 100): about [+119, +282].
    assert!((e.low - 119.2).abs() < 0.5 && (e.high - 281.5).abs() < 0.5, "{e:?}");
    let even = elo(10, 20, 10);
    assert_eq!(even.diff, 0.0);
    assert!((even.low + even.high).abs() < 1e-9);
    // Perfect scores stay finite, with the estimate at the clamped edge.
    let all = elo(100, 0, 0);
    assert!(all.diff.is_finite() && all.low.is_finite() && all.high.is_finite());
    assert!((all.diff - 920.0).abs() < 1.0 && all.low > 600.0 && all.high == all.diff, "{all:?}");
    let none = elo(0, 0, 100);
    assert!((none.diff + all.diff).abs() < 1e-9 && none.low == none.diff);
    let draws = elo(0, 8, 0);
    assert_eq!(draws.diff, 0.0);
    assert!(draws.low < 0.0 && draws.high > 0.0);
    assert_eq!(elo(0, 0, 0).diff, 0.0);
}

#[test]
fn small_and_one_sided_results_read_honestly() {
    // One win is not an even score known to the Elo (it was "-0 ± 0"), and an interval whose
    // ends are not as far from the estimate gets no "±" (2-0 was "+191 ± 191").
    assert_eq!(elo(1, 0, 0).to_string(), "+120 (95%: -120 to +120)");
    assert_eq!(elo(0, 0, 1).to_string(), "-120 (95%: -120 to +120)");
    let two = elo(2, 0, 0);
    assert!(two.diff > 200.0 && two.low < 0.0 && two.high == two.diff, "{two:?}");
    assert!(!two.to_string().contains('±'), "{two}");
    assert_eq!(elo(1, 0, 1).to_string(), "+0 ± 241 (95%: -241 to +241)");
    assert_eq!(elo(0, 2, 0).to_string().chars().next(), Some('+'), "never -0");
    let e = elo(75, 0, 25).to_string();
    assert_eq!(e, "+191 ± 81 (95%: +119 to +282)");
    assert_eq!(elo(100, 0, 0).to_string(), "+920 (95%: +687 to +920)");
}

/// The games of a match, as `on_game` hands them over (checked to be in game order), with its
/// result.
fn match_games(
    config: &zertz_arena::matches::MatchConfig,
) -> (zertz_arena::matches::MatchResult, Vec<zertz_arena::matches::MatchGame>) {
    let games = std::sync::Mutex::new(Vec::new());
    let result = zertz_arena::matches::run_match(config, &|g| {
        games.lock().unwrap().push(g.clone());
        Ok(())
    })
    .unwrap();
    let mut games = games.into_inner().unwrap();
    let order: Vec<u64> = games.iter().map(|g| g.record.game).collect();
    assert_eq!(order, (0..games.len() as u64).collect::<Vec<_>>(), "handed over in game order");
    // Everything but the time the players took is reproducible: the moves and the work of the
    // searches (simulations here) included.
    let mut result = result;
    for e in [&mut result.a_effort, &mut result.b_effort] {
        assert!(e.seconds >= 0.0 && e.cpu_seconds >= 0.0 && e.moves > 0, "{e:?}");
        (e.seconds, e.cpu_seconds) = (0.0, 0.0);
    }
    for g in &mut games {
        (g.a_effort.seconds, g.a_effort.cpu_seconds) = (0.0, 0.0);
        (g.b_effort.seconds, g.b_effort.cpu_seconds) = (0.0, 0.0);
    }
    (result, games)
}

fn config(
    a: &str,
    b: &str,
    games: usize,
    variant: Variant,
    seed: u64,
    threads: usize,
) -> MatchConfig {
    let settings = MatchSettings {
        games,
        board: variant.board,
        blitz: variant.marbles == zertz_env::MarbleSet::Blitz,
        seed,
        threads,
        ..MatchSettings::default()
    };
    MatchConfig::with(a.parse().unwrap(), b.parse().unwrap(), settings)
}

#[test]
fn matches_are_reproducible_and_independent_of_threads() {
    let v = Variant::new(Board::R37, MarbleSet::Blitz);
    let (one, one_games) = match_games(&config("greedy", "mcts:30", 6, v, 5, 1));
    let (three, three_games) = match_games(&config("greedy", "mcts:30", 6, v, 5, 3));
    assert_eq!((&one, &one_games), (&three, &three_games));
    assert_eq!(one.games(), 6);
    // A alternates between first and second player.
    for r in &one_games {
        assert_eq!(r.a_is_p0, r.record.game % 2 == 0);
        let (p0, p1) = r.names();
        let (a, b) = if r.a_is_p0 { (p0, p1) } else { (p1, p0) };
        assert_eq!((a, b), ("greedy", "mcts:30"));
    }
    let (_, other) = match_games(&config("greedy", "mcts:30", 6, v, 6, 2));
    assert_ne!(one_games, other);
}

#[test]
fn each_record_is_in_the_file_as_its_game_ends() {
    // Through a buffered writer: each record is flushed when added, so that a second Ctrl-C's
    // exit or a kill loses no finished game (two Ctrl-C left the file empty).
    use zertz_arena::matches::RecordWriter;
    let (_, games) = match_games(&config("greedy", "random", 3, Variant::default(), 9, 1));
    let path = std::env::temp_dir().join(format!("zertz-records-{}.jsonl", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let writer = RecordWriter::new(std::io::BufWriter::new(file));
    for (i, game) in games.iter().enumerate() {
        writer.add(game).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), i + 1, "{text}");
        assert!(text.ends_with('\n'));
    }
    drop(writer);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn records_are_json_lines_that_replay() {
    use zertz_arena::matches::RecordWriter;
    use zertz_env::records::GameRecord;
    let (_, games) = match_games(&config("greedy", "random", 4, Variant::default(), 9, 2));
    let writer = RecordWriter::new(Vec::new());
    for game in &games {
        writer.add(game).unwrap();
    }
    let text = String::from_utf8(writer.finish().unwrap()).unwrap();
    let lines: Vec<serde_json::Value> =
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4);
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["game"], i);
        let (p0, p1) = if i % 2 == 0 { ("greedy", "random") } else { ("random", "greedy") };
        assert_eq!(line["players"], serde_json::json!([p0, p1]));
        assert_eq!((line["board"].as_u64(), line["blitz"].as_bool()), (Some(37), Some(false)));
        let mut game = Game::new(Variant::default(), Player::P0);
        for m in line["moves"].as_array().unwrap() {
            game.play_str(m.as_str().unwrap()).unwrap();
        }
        let winner = game.outcome().and_then(|o| o.winner()).map(|w| w.to_string());
        assert_eq!(line["winner"].as_str().map(str::to_string), winner);
        assert_eq!(line["end"], "win");
        // The typed record reads it back and replays it to the same game.
        let record = GameRecord::from_json(text.lines().nth(i).unwrap()).unwrap();
        assert_eq!(record, games[i].record);
        assert_eq!(record.replay().unwrap().moves(), game.moves());
        // Who moved first is `first_player`; a record of an earlier version said `first`.
        assert_eq!(line["first_player"], "P0");
        let old = text.lines().nth(i).unwrap().replace("\"first_player\"", "\"first\"");
        assert_eq!(GameRecord::from_json(&old).unwrap(), record);
    }
}

/// Always passes, legal or not.
struct Passer;

impl Bot for Passer {
    fn name(&self) -> &str {
        "passer"
    }

    fn choose(&mut self, _pos: &Position) -> Result<Action, BotError> {
        Ok(Action::Pass)
    }
}

#[test]
fn illegal_actions_lose_and_long_games_are_drawn() {
    let g = play_game(&mut Passer, &mut RandomBot::new(0), Variant::default(), 100).unwrap();
    assert_eq!((g.end, g.winner, g.actions), (End::Illegal, Some(Player::P1), 0));
    let g = play_game(&mut RandomBot::new(0), &mut Passer, Variant::default(), 100).unwrap();
    assert_eq!((g.end, g.winner, g.actions), (End::Illegal, Some(Player::P0), 1));
    let mut a = RandomBot::new(1);
    let mut b = RandomBot::new(2);
    let g = play_game(&mut a, &mut b, Variant::default(), 3).unwrap();
    assert_eq!((g.end, g.winner, g.actions), (End::Limit, None, 3));
}

#[test]
fn random_openings_are_shared_by_the_two_games_of_a_pair() {
    let mut config = config("greedy", "greedy", 6, Variant::default(), 5, 2);
    config.settings.opening_actions = 3;
    let (_, records) = match_games(&config);
    let opening = |g: &zertz_arena::matches::MatchGame| g.record.moves[..3].to_vec();
    for pair in records.chunks(2) {
        assert_eq!(opening(&pair[0]), opening(&pair[1]));
        assert!(pair[0].a_is_p0 != pair[1].a_is_p0);
    }
    assert!(
        opening(&records[0]) != opening(&records[2])
            || opening(&records[2]) != opening(&records[4])
    );
    // Without an opening, two greedy players differ only by their tie-breaks.
    config.settings.opening_actions = 0;
    let (plain, _) = match_games(&config);
    assert_eq!(plain.games(), 6);
}

// --------------------------------------------------------------------------- a look one turn ahead

/// P0 needs one more grey; `Ga1` claims the cut-off ring a1 and wins, nothing else does.
const ISOLATION_WIN: &str =
    "37 standard .---/-----/-wbw--/-b..b--/-wbb--/-----/---- 1/1/1 0/4/0 2/3/4 P0 - 0";
/// Of P0's nine placements, eight let P1 win at once; only `Ge5,e3` does not.
const FORCED_LOSS: &str =
    "37 standard ----/-----/------/---bbb-/--.w../---b./---- 0/2/0 2/4/4 3/2/2 P0 - 0";
/// Of P0's 25 placements, 24 let P1 win at once; only `Ba4,b5` does not.
const ONE_SAFE_OF_25: &str =
    "37 standard ---./----./----.-/----b.g/----w./---.-/---- 0/0/3 2/4/4 3/3/2 P0 - 0";

/// A search player guided by nothing (uniform priors, value 0) with `simulations`, with or
/// without the look ahead.
fn blind(simulations: u32, seed: u64, tactics: bool) -> MctsBot {
    let eval = std::sync::Arc::new(zertz_search::UniformEvaluator);
    MctsBot::new("blind", eval, simulations, seed).with_tactics(tactics)
}

#[test]
fn with_the_look_ahead_a_win_is_taken_and_a_loss_at_once_avoided() {
    let win = Position::from_text(ISOLATION_WIN).unwrap();
    for (text, safe) in [(FORCED_LOSS, "Ge5,e3"), (ONE_SAFE_OF_25, "Ba4,b5")] {
        let p = Position::from_text(text).unwrap();
        let safe = p.parse_legal_move(safe).unwrap();
        assert!(!zertz_arena::players::hands_a_win(&p, &p.move_actions(&safe)[0]));
        let (mut took, mut avoided, mut lost) = (0, 0, 0);
        for seed in 0..20 {
            // One simulation: the search alone knows nothing.
            let a = blind(1, seed, true).choose(&win).unwrap();
            took += usize::from(
                win.play_action(&a).unwrap().outcome() == Some(Outcome::Win(Player::P0)),
            );
            let a = blind(2, seed, true).choose(&p).unwrap();
            avoided += usize::from(a == p.move_actions(&safe)[0]);
            let a = blind(2, seed, false).choose(&p).unwrap();
            lost += usize::from(zertz_arena::players::hands_a_win(&p, &a));
        }
        assert_eq!((took, avoided), (20, 20), "{text}");
        // Without it, two blind simulations visit one move, the first in the tree's order: here
        // one that loses (in ONE_SAFE_OF_25 the first is the safe one).
        if text == FORCED_LOSS {
            assert_eq!(lost, 20, "{text}");
        }
    }
    // The network's player has it.
    let winning = zertz_arena::players::winning_move(&win).unwrap();
    assert_eq!(win.move_to_string(&winning), "Ga1");
}
