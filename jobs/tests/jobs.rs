//! The jobs of both fronts: self-play with each built-in guide, matches with records, stops and
//! refusals.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use zertz_arena::config::MatchSettings;
use zertz_arena::matches::MatchError;
use zertz_env::{Cause, Classify, ErrorClass};
use zertz_jobs::{Guide, JobError, MatchJob, play_match, selfplay};
use zertz_model::{DeviceChoice, Inference, ModelError};
use zertz_search::Preset;
use zertz_selfplay::config::SelfPlayConfig;
use zertz_selfplay::driver::Progress;

fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("zertz-engine-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn small() -> SelfPlayConfig {
    SelfPlayConfig {
        games: 2,
        threads: 1,
        games_per_worker: 2,
        full_simulations: 8,
        fast_simulations: 4,
        max_actions: 60,
        ..SelfPlayConfig::default()
    }
}

#[test]
fn selfplay_searches_with_the_preset_of_its_guide() {
    for (guide, preset) in [(Guide::Rollout, Preset::Rollout), (Guide::Uniform, Preset::Default)] {
        let dir = temp_dir(&format!("{guide:?}"));
        let summary = selfplay(&small(), &guide, &dir, &Progress::default()).unwrap();
        assert_eq!(summary.games, 2);
        assert_eq!(summary.search, preset.config(), "{guide:?}");
        assert_eq!((summary.network_seconds, summary.network_share), (None, None));
        assert!(summary.actions > 0 && summary.seconds > 0.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(Guide::builtin("network").unwrap_err().contains("uniform or rollout"));
}

#[test]
fn a_missing_model_is_refused_before_anything_is_written() {
    let dir = temp_dir("missing-model");
    let guide =
        Guide::Network { path: "no-such-model.safetensors".into(), inference: Default::default() };
    let e = selfplay(&small(), &guide, &dir, &Progress::default()).unwrap_err();
    assert!(matches!(e, JobError::Model(_)), "{e:?}");
    assert!(!e.class().while_working);
    assert!(e.to_string().contains("no-such-model.safetensors"), "{e}");
    assert!(!dir.exists());
}

/// A program (the TorchScript file of the built-in network before network files) guides
/// self-play and plays in matches only when its code is trusted; otherwise it is refused before
/// anything is written or played, with the command that converts it.
#[test]
fn a_program_runs_only_when_its_code_is_trusted() {
    let program = concat!(env!("CARGO_MANIFEST_DIR"), "/../model/tests/data/builtin-v1.pt");
    let cpu = Inference { device: DeviceChoice::Cpu, ..Inference::default() };
    let trusted = Inference { trust_code: true, ..cpu };
    let dir = temp_dir("program");
    let guide = Guide::Network { path: program.into(), inference: cpu };
    let e = selfplay(&small(), &guide, &dir, &Progress::default()).unwrap_err();
    assert!(matches!(e, JobError::Model(ModelError::Code { package: false, .. })), "{e:?}");
    assert!(!e.class().while_working);
    assert!(e.to_string().contains("python -m zertz convert-network"), "{e}");
    assert!(!dir.exists());
    let guide = Guide::Network { path: program.into(), inference: trusted };
    let summary = selfplay(&small(), &guide, &dir, &Progress::default()).unwrap();
    assert_eq!(summary.games, 2);
    std::fs::remove_dir_all(&dir).unwrap();
    let settings = MatchSettings { games: 2, threads: 1, ..MatchSettings::default() };
    let mut job = MatchJob::with(format!("nn:{program}:8"), "random", settings);
    job.inference = cpu;
    let e = play_match(&job, &|_| panic!("no game may be played"), &AtomicBool::new(false))
        .unwrap_err();
    assert!(matches!(e, JobError::Model(ModelError::Code { .. })), "{e:?}");
    job.inference = trusted;
    let s = play_match(&job, &|_| {}, &AtomicBool::new(false)).unwrap();
    assert_eq!(s.games, 2);
}

#[test]
fn a_match_writes_its_records_and_sums_up() {
    let dir = temp_dir("match");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("games.jsonl");
    let job = MatchJob::with(
        "greedy",
        "random",
        MatchSettings { games: 4, threads: 2, out: Some(out.clone()), ..MatchSettings::default() },
    );
    let heard = AtomicUsize::new(0);
    let s = play_match(
        &job,
        &|_| {
            heard.fetch_add(1, Ordering::Relaxed);
        },
        &AtomicBool::new(false),
    )
    .unwrap();
    assert_eq!(
        (s.a.as_str(), s.b.as_str(), s.games, s.board, s.blitz),
        ("greedy", "random", 4, 37, false)
    );
    assert_eq!(s.wins + s.draws + s.losses, 4);
    assert!((s.score - (f64::from(s.wins) + 0.5 * f64::from(s.draws)) / 4.0).abs() < 1e-12);
    assert!(s.elo_low <= s.elo && s.elo <= s.elo_high);
    assert_eq!(heard.load(Ordering::Relaxed), 4);
    assert_eq!(std::fs::read_to_string(&out).unwrap().lines().count(), 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_match_never_replaces_a_file_and_never_opens_a_fifo() {
    let dir = temp_dir("match-out");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("games.jsonl");
    std::fs::write(&out, "precious\n").unwrap();
    let job = MatchJob::with(
        "greedy",
        "random",
        MatchSettings { games: 2, threads: 1, out: Some(out.clone()), ..MatchSettings::default() },
    );
    let never = AtomicBool::new(false);
    let e = play_match(&job, &|_| panic!("no game may be played"), &never).unwrap_err();
    assert!(matches!(e, JobError::Output { .. }) && !e.class().while_working, "{e:?}");
    assert!(e.to_string().contains("nothing is ever replaced"), "{e}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "precious\n");
    #[cfg(unix)]
    {
        let fifo = dir.join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        // Opening it would wait for a reader forever: it is refused first.
        let mut job = job;
        job.settings.out = Some(fifo);
        let e = play_match(&job, &|_| panic!("no game may be played"), &never).unwrap_err();
        assert!(e.to_string().contains("a FIFO of that name exists"), "{e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stopped_match_keeps_the_games_it_finished() {
    let dir = temp_dir("match-stop");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("games.jsonl");
    let job = MatchJob::with(
        "greedy",
        "random",
        MatchSettings {
            games: 1000,
            threads: 2,
            out: Some(out.clone()),
            ..MatchSettings::default()
        },
    );
    let stop = AtomicBool::new(false);
    let heard = AtomicUsize::new(0);
    let e = play_match(
        &job,
        &|_| {
            if heard.fetch_add(1, Ordering::Relaxed) == 5 {
                stop.store(true, Ordering::Relaxed);
            }
        },
        &stop,
    )
    .unwrap_err();
    assert!(matches!(&e, JobError::Match(MatchError::Stopped { .. })), "{e:?}");
    let text = std::fs::read_to_string(&out).unwrap();
    let games: Vec<u64> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["game"].as_u64().unwrap())
        .collect();
    assert_eq!(games.len(), heard.load(Ordering::Relaxed), "every finished game is written");
    assert!(games.len() < 1000);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_stopped_match_and_bad_players_are_errors_of_their_kind() {
    let job = MatchJob::with(
        "mcts:50",
        "random",
        MatchSettings { games: 8, threads: 1, ..MatchSettings::default() },
    );
    let e = play_match(&job, &|_| {}, &AtomicBool::new(true)).unwrap_err();
    assert_eq!(e.class(), ErrorClass::during(Cause::Stopped), "{e:?}");
    assert!(e.to_string().contains("stopped"), "{e}");
    for (a, needle) in
        [("alphazero", "alphazero"), ("nn:no-such.safetensors", "no-such.safetensors")]
    {
        let job =
            MatchJob::with(a, "random", MatchSettings { games: 2, ..MatchSettings::default() });
        let e = play_match(&job, &|_| {}, &AtomicBool::new(false)).unwrap_err();
        assert!(!e.class().while_working, "{a}: {e:?}");
        assert!(e.to_string().contains(needle), "{a}: {e}");
    }
    let job = MatchJob::with(
        "random",
        "random",
        MatchSettings { threads: 100_000, ..MatchSettings::default() },
    );
    let e = play_match(&job, &|_| {}, &AtomicBool::new(false)).unwrap_err();
    assert!(e.to_string().contains("threads"), "{e}");
}
