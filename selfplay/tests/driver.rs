//! The self-play driver: shards and records of a small run.

use std::path::PathBuf;

use zertz_env::sgf::Record;
use zertz_selfplay::config::SelfPlayConfig;
use zertz_selfplay::driver::{Progress, run};
use zertz_selfplay::{RolloutEvaluator, UniformEvaluator};

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zertz-selfplay-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn small(games: u32, threads: usize) -> SelfPlayConfig {
    SelfPlayConfig {
        games,
        threads,
        games_per_worker: 3,
        full_simulations: 24,
        fast_simulations: 8,
        shard_size: 50,
        seed: 5,
        ..SelfPlayConfig::default()
    }
}

#[test]
fn a_run_writes_shards_and_records() {
    let dir = temp_dir("run");
    let progress = Progress::default();
    let summary = run(&small(7, 2), &UniformEvaluator, &dir, &progress).unwrap();
    assert_eq!(summary.games, 7);
    assert_eq!(summary.first_wins + summary.second_wins + summary.draws, 7);
    assert!(summary.samples > 0);
    assert!(summary.mean_batch > 1.0, "leaves of several games are evaluated together");
    assert!(!summary.shards.is_empty());
    for shard in &summary.shards {
        let bytes = std::fs::read(shard).unwrap();
        assert_eq!(&bytes[..4], b"PK\x03\x04", "{} is a zip archive", shard.display());
    }
    // No temporary file is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty());
    // Every game is a JSON line whose moves replay.
    let mut games = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "jsonl") {
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let mut game = zertz_env::Game::new(
                    zertz_env::Variant::default(),
                    if v["first"] == "P0" { zertz_env::Player::P0 } else { zertz_env::Player::P1 },
                );
                for m in v["moves"].as_array().unwrap() {
                    game.play_str(m.as_str().unwrap()).unwrap();
                }
                if v["end"] == "capture" {
                    let winner = game.outcome().and_then(|o| o.winner()).map(|p| p.to_string());
                    assert_eq!(v["winner"].as_str().map(str::to_string), winner);
                }
                games += 1;
            }
        }
    }
    assert_eq!(games, 7);
    assert_eq!(progress.games.load(std::sync::atomic::Ordering::Relaxed), 7);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn runs_are_reproducible_for_a_fixed_thread_count() {
    let read = |dir: &PathBuf| {
        let mut files: Vec<_> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        files.sort();
        files.iter().map(|f| std::fs::read(f).unwrap()).collect::<Vec<_>>()
    };
    let (a, b) = (temp_dir("repro-a"), temp_dir("repro-b"));
    let eval = RolloutEvaluator { rollouts: 1, seed: 3 };
    run(&small(4, 2), &eval, &a, &Progress::default()).unwrap();
    run(&small(4, 2), &eval, &b, &Progress::default()).unwrap();
    assert_eq!(read(&a), read(&b));
    std::fs::remove_dir_all(&a).unwrap();
    std::fs::remove_dir_all(&b).unwrap();
}

#[test]
fn games_export_to_boardspace_sgf() {
    let mut game = zertz_env::Game::new(zertz_env::Variant::default(), zertz_env::Player::P1);
    for m in ["Wd4,a1", "Gd5,g1"] {
        game.play_str(m).unwrap();
    }
    let sgf = zertz_selfplay::records::to_sgf(&game, Some(zertz_env::Player::P1)).unwrap();
    let replay = Record::parse(&sgf).unwrap().replay().unwrap();
    assert_eq!(replay.notation(), ["Wd4,a1", "Gd5,g1"]);
    assert_eq!(replay.winner, Some(zertz_env::Player::P0));
    let blitz = zertz_env::Game::new(
        zertz_env::Variant::new(zertz_env::Board::R40, zertz_env::MarbleSet::Standard),
        zertz_env::Player::P0,
    );
    assert!(zertz_selfplay::records::to_sgf(&blitz, None).is_err());
}
