//! Players and matches fail with errors, never panics: an evaluator that fails, a finished game,
//! settings past the documented maxima.

use std::sync::Arc;

use zertz_arena::config::MAX_GAMES;
use zertz_arena::config::MatchSettings;
use zertz_arena::matches::{MatchConfig, MatchError, run_match};
use zertz_arena::players::{
    Bot, BotError, GreedyBot, MAX_SIMULATIONS, MctsBot, Models, PlayerSpec, RandomBot, SpecError,
};
use zertz_env::{Player, Position, Variant};
use zertz_search::{Batch, EvalError, Evaluator, Output};
use zertz_settings::MAX_THREADS;

/// An evaluator that always fails, as a broken network does.
struct Broken;

impl Evaluator for Broken {
    fn evaluate(&self, _batch: &Batch<'_>, _out: &mut Output<'_>) -> Result<(), EvalError> {
        Err(EvalError("model broken.safetensors produced NaN/non-finite values".into()))
    }
}

fn match_config(a: PlayerSpec, b: PlayerSpec, models: Models) -> MatchConfig {
    let settings = MatchSettings { games: 4, seed: 1, threads: 2, ..MatchSettings::default() };
    MatchConfig { models, ..MatchConfig::with(a, b, settings) }
}

#[test]
fn a_failing_evaluator_is_an_error_naming_the_player() {
    let pos = Position::new(Variant::default(), Player::P0);
    let mut p = MctsBot::neural("nn:broken.safetensors:8", Arc::new(Broken), 8, 0);
    let e = p.choose(&pos).unwrap_err();
    assert!(matches!(e, BotError::Evaluator { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("nn:broken.safetensors:8") && text.contains("NaN"), "{text}");
    // The player stays usable (and fails the same way) rather than poisoned.
    assert!(p.choose(&pos).is_err());
}

#[test]
fn a_failing_player_stops_the_match_with_an_error() {
    let mut models = Models::new();
    models.insert("broken.safetensors", Arc::new(Broken));
    let spec: PlayerSpec = "nn:broken.safetensors:8".parse().unwrap();
    let config = match_config(PlayerSpec::Greedy, spec, models);
    let e = run_match(&config, &|_| Ok(())).unwrap_err();
    match &e {
        MatchError::Bot { error: BotError::Evaluator { player, .. }, .. } => {
            assert_eq!(player, "nn:broken.safetensors:8")
        }
        other => panic!("{other:?}"),
    }
    let text = e.to_string();
    assert!(text.starts_with("game ") && text.contains("broken.safetensors"), "{text}");
    assert!(!text.contains('\n'), "{text}");
}

#[test]
fn finished_games_have_no_action_to_choose() {
    // P1 holds four whites: the game is over.
    let text = "37 standard ..../...../....../......./....../...../.... 2/8/10 0/0/0 4/0/0 P0 - 0";
    let pos = Position::from_text(text).unwrap();
    assert!(pos.is_over());
    let players: Vec<Box<dyn Bot>> = vec![
        Box::new(RandomBot::new(0)),
        Box::new(GreedyBot::new(0)),
        Box::new(MctsBot::rollout(8, 0)),
        Box::new(MctsBot::uniform(8, 0)),
    ];
    for mut p in players {
        let e = p.choose(&pos).unwrap_err();
        assert!(matches!(e, BotError::NoLegalAction { .. }), "{}: {e:?}", p.name());
    }
}

#[test]
fn match_sizes_past_the_maxima_are_refused_before_anything_starts() {
    let config = match_config(PlayerSpec::Random, PlayerSpec::Random, Models::new());
    for (bad, what) in [
        (MatchSettings { threads: MAX_THREADS + 1, ..config.settings.clone() }, "threads"),
        (MatchSettings { threads: 100_000, ..config.settings.clone() }, "threads"),
        (MatchSettings { games: MAX_GAMES + 1, ..config.settings.clone() }, "games"),
        (MatchSettings { games: usize::MAX, ..config.settings.clone() }, "games"),
        (MatchSettings { max_actions: 0, ..config.settings.clone() }, "max_actions"),
    ] {
        let bad = MatchConfig { settings: bad, ..config.clone() };
        let started = std::time::Instant::now();
        let e = run_match(&bad, &|_| panic!("no game may start")).unwrap_err();
        assert!(matches!(e, MatchError::Settings(_)), "{e:?}");
        assert!(e.to_string().starts_with(what), "{e}");
        // Refused before anything starts (a match of usize::MAX games would never end).
        assert!(started.elapsed() < std::time::Duration::from_secs(60));
    }
    // The edge is accepted (no game: nothing runs).
    let settings = MatchSettings { threads: 4, games: 0, ..config.settings.clone() };
    let edge = MatchConfig { settings, ..config };
    assert_eq!(run_match(&edge, &|_| Ok(())).unwrap().games(), 0);
}

#[test]
fn simulation_counts_past_the_maximum_are_refused() {
    let max = MAX_SIMULATIONS;
    assert_eq!(format!("mcts:{max}").parse::<PlayerSpec>(), Ok(PlayerSpec::Mcts(max)));
    for bad in [
        format!("mcts:{}", max + 1),
        format!("uniform:{}", u32::MAX),
        format!("nn:m.safetensors:{}", max + 1),
        "mcts:99999999999999999999".to_string(),
    ] {
        let e = bad.parse::<PlayerSpec>().unwrap_err();
        assert!(matches!(e, SpecError::Simulations(_)), "{bad}: {e:?}");
        assert!(e.to_string().contains(&max.to_string()), "{bad}: {e}");
    }
}
