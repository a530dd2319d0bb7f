//! The self-play driver: shards and records of a small run.

use std::path::PathBuf;

use std::sync::atomic::Ordering;
use zertz_env::files::partial_owner;
use zertz_env::records::{End, GameRecord};
use zertz_env::sgf::Record;
use zertz_selfplay::config::SelfPlayConfig;

use zertz_search::{RolloutEvaluator, UniformEvaluator};
use zertz_selfplay::driver::{Progress, SelfPlayError, run};

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
    // No partial file (`.NAME.partial-PID`) is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| partial_owner(&e.file_name().to_string_lossy()).is_some())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Every game is a JSON line whose moves replay.
    let mut games = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "jsonl") {
            for line in std::fs::read_to_string(&path).unwrap().lines() {
                // The typed record, which replays its moves on its own board.
                let record = GameRecord::from_json(line).unwrap();
                assert_eq!(record.board, zertz_env::Board::R37);
                assert_eq!(record.players, None);
                let game = record.replay().unwrap();
                let pos = game.position();
                for p in zertz_env::Player::ALL {
                    let caps = zertz_env::Marble::ALL.map(|m| pos.captures(p)[m]);
                    assert_eq!(record.captures[p.index()], caps);
                }
                if record.end == End::Win {
                    assert_eq!(record.winner, game.outcome().and_then(|o| o.winner()));
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
    let sgf = zertz_env::records::to_sgf(&game, Some(zertz_env::Player::P1)).unwrap();
    let replay = Record::parse(&sgf).unwrap().replay().unwrap();
    assert_eq!(replay.notation(), ["Wd4,a1", "Gd5,g1"]);
    assert_eq!(replay.winner, Some(zertz_env::Player::P0));
    let blitz = zertz_env::Game::new(
        zertz_env::Variant::new(zertz_env::Board::R40, zertz_env::MarbleSet::Standard),
        zertz_env::Player::P0,
    );
    assert!(zertz_env::records::to_sgf(&blitz, None).is_err());
}

#[test]
fn a_folder_that_holds_output_is_refused_and_nothing_is_replaced() {
    let dir = temp_dir("refuse");
    run(&small(2, 1), &UniformEvaluator, &dir, &Progress::default()).unwrap();
    let before: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            (p.clone(), std::fs::read(&p).unwrap())
        })
        .collect();
    assert!(!before.is_empty());
    let err = run(&small(2, 1), &UniformEvaluator, &dir, &Progress::default()).unwrap_err();
    assert!(matches!(err, SelfPlayError::OutputExists { .. }), "{err}");
    assert!(err.to_string().contains("already holds self-play output"), "{err}");
    for (path, bytes) in &before {
        assert_eq!(&std::fs::read(path).unwrap(), bytes, "{} changed", path.display());
    }
    // A folder with other files only is fine.
    let other = temp_dir("other-files");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), "mine").unwrap();
    run(&small(1, 1), &UniformEvaluator, &other, &Progress::default()).unwrap();
    assert_eq!(std::fs::read_to_string(other.join("notes.txt")).unwrap(), "mine");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::remove_dir_all(&other).unwrap();
}

#[test]
fn settings_out_of_range_are_refused_before_anything_is_written() {
    let dir = temp_dir("bad-settings");
    let mut cfg = small(2, 1);
    cfg.temperature = f32::NAN;
    let err = run(&cfg, &UniformEvaluator, &dir, &Progress::default()).unwrap_err();
    assert!(err.to_string().starts_with("temperature:"), "{err}");
    cfg = small(2, 100_000);
    let err = run(&cfg, &UniformEvaluator, &dir, &Progress::default()).unwrap_err();
    assert!(err.to_string().starts_with("threads:"), "{err}");
    assert!(!dir.exists());
    // An empty path would write into the current folder unasked (found by the Python fuzz).
    let empty = std::path::Path::new("");
    let err = run(&small(1, 1), &UniformEvaluator, empty, &Progress::default()).unwrap_err();
    assert!(matches!(err, SelfPlayError::EmptyOutput), "{err}");
    assert!(err.to_string().contains("empty path"), "{err}");
}

/// Uniform answers; sets the run's stop flag once a game has finished.
struct StopAfterAGame<'a>(&'a Progress);

impl zertz_search::Evaluator for StopAfterAGame<'_> {
    fn wants_encoding(&self) -> bool {
        false
    }

    fn evaluate(
        &self,
        batch: &zertz_search::Batch<'_>,
        out: &mut zertz_search::Output<'_>,
    ) -> Result<(), zertz_search::EvalError> {
        if self.0.games.load(Ordering::SeqCst) > 0 {
            self.0.stop.store(true, Ordering::SeqCst);
        }
        UniformEvaluator.evaluate(batch, out)
    }
}

#[test]
fn a_stopped_run_writes_the_games_it_finished_and_says_so() {
    // The stop flag is set while the workers play (by the evaluator, at its first call after the
    // first finished game: however fast or busy the machine, the run cannot end first); they
    // stop after their round of evaluations, and the shards and records hold whole games only.
    let dir = temp_dir("stop");
    let progress = Progress::default();
    let mut cfg = small(200, 2);
    cfg.games_per_worker = 1;
    let eval = StopAfterAGame(&progress);
    let err = run(&cfg, &eval, &dir, &progress).unwrap_err();
    let SelfPlayError::Stopped { games } = err else { panic!("{err}") };
    assert!((1..200).contains(&games), "{games}");
    let mut lines = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(partial_owner(&name).is_none(), "{name} left behind");
        if name.ends_with(".jsonl") {
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(text.is_empty() || text.ends_with('\n'), "a partial line in {name}");
            lines += text.lines().count() as u64;
        }
    }
    assert_eq!(lines, games, "every finished game is recorded, and no other");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn selfplay_workers_share_one_batching_evaluator() {
    let dir = std::env::temp_dir().join(format!("zertz-batching-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let eval = zertz_search::batching::BatchingEvaluator::new(
        std::sync::Arc::new(UniformEvaluator),
        64,
        std::time::Duration::from_millis(1),
    );
    let config = SelfPlayConfig {
        games: 4,
        threads: 2,
        games_per_worker: 2,
        full_simulations: 16,
        fast_simulations: 8,
        ..Default::default()
    };
    let progress = Progress::default();
    let summary = run(&config, &eval, &dir, &progress).unwrap();
    assert_eq!(summary.games, 4);
    let stats = eval.stats();
    assert!(stats.requests > 0 && stats.positions >= stats.requests);
    std::fs::remove_dir_all(&dir).unwrap();
}
