//! Fuzz target that stays: seeded mutations of valid settings, fed to the self-play config
//! ([`SelfPlayConfig::from_toml`]), for a bounded time in the test suite. The corpus: the files of
//! `configs/` and the default settings written as TOML, mutated by [`zertz_fuzzkit::fuzz`]; what
//! the parser accepts must read back the same after being written out.
//!
//! Budget: `ZERTZ_FUZZ_SECS` seconds (default 8), `ZERTZ_FUZZ_CASES` inputs, `ZERTZ_FUZZ_SEED`
//! (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-selfplay --test fuzz -- --nocapture
//! ```

use zertz_fuzzkit::{TOML_TOKENS, config_corpus, fuzz};
use zertz_selfplay::config::{MAX_THREADS, SelfPlayConfig};
use zertz_settings::Settings;

fn check_selfplay_config(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(config) = SelfPlayConfig::from_toml(&text) else {
        return false;
    };
    config.validate().expect("an accepted config is valid");
    assert!(config.threads <= MAX_THREADS);
    let _ = config.variant();
    // Written out and read back: the same settings.
    let written = toml::to_string(&config).expect("an accepted config writes as TOML");
    let back = SelfPlayConfig::from_toml(&written)
        .unwrap_or_else(|e| panic!("{written:?} does not read back: {e}"));
    assert_eq!(back, config, "{written}");
    true
}

#[test]
fn fuzz_selfplay_config() {
    let default = toml::to_string(&SelfPlayConfig::default()).unwrap();
    let corpus = config_corpus(&[default, "[search]\ntree_reuse = false\n".into()]);
    fuzz("selfplay-config", corpus, TOML_TOKENS, check_selfplay_config);
}

/// The dataset writer ([`zertz_selfplay::dataset::build`]) on mutated records, one per run: a
/// bad record is counted, never fatal; every record read is kept, failed or filtered exactly
/// once; a kept game has its line in `games.jsonl` and its samples in shards.
#[test]
fn fuzz_dataset_records() {
    use std::cell::Cell;
    use zertz_env::records::to_sgf;
    use zertz_env::{Board, Game, MarbleSet, Player, SplitMix64, Variant};
    use zertz_selfplay::dataset::{DatasetConfig, build};

    let root = std::env::temp_dir().join(format!("zertz-fuzz-dataset-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let input = root.join("in");
    std::fs::create_dir_all(&input).unwrap();
    let mut corpus = Vec::new();
    for (i, board) in [Board::R37, Board::R48, Board::R61, Board::R37].into_iter().enumerate() {
        let mut rng = SplitMix64(i as u64);
        let mut g = Game::new(Variant::new(board, MarbleSet::Standard), Player::P0);
        while g.outcome().is_none() {
            let moves = g.legal_moves();
            g.play(&moves[rng.below(moves.len())]).unwrap();
        }
        let resigned = (i == 3).then_some(Player::P1);
        let sgf = to_sgf(&g, resigned).unwrap();
        corpus.push(sgf.replace("P0[id \"P0\"]", "P0[id \"Dumbot\"]").into_bytes());
    }
    const TOKENS: &[&str] = &[
        ";P0[",
        ";P1[",
        "RtoB 2 0 D 4",
        "R- A 1",
        "Done",
        "Resign",
        "Start P1",
        "Reset",
        "]",
        ")",
    ];
    let config = DatasetConfig {
        exclude_players: vec!["dumbot".into()],
        min_turns: 3,
        validation: 0.5,
        shard_size: 64,
        ..DatasetConfig::default()
    };
    let run = Cell::new(0u64);
    fuzz("dataset-records", corpus, TOKENS, |bytes| {
        run.set(run.get() + 1);
        std::fs::write(input.join("r.sgf"), bytes).unwrap();
        let out = root.join(format!("out-{}", run.get()));
        let summary = build(std::slice::from_ref(&input), &config, &out, &|_| {})
            .unwrap_or_else(|e| panic!("a bad record is fatal: {e}"));
        let failed: u64 = summary.failed.values().sum();
        let filtered: u64 = summary.filtered.values().sum();
        let kept = summary.train_games + summary.validation_games;
        assert_eq!(summary.records, 1);
        assert_eq!(kept + failed + filtered, 1, "{summary:?}");
        let lines = std::fs::read_to_string(out.join("games.jsonl")).unwrap();
        assert_eq!(lines.lines().count() as u64, kept);
        let samples = summary.train_samples + summary.validation_samples;
        assert_eq!(summary.shards.is_empty(), samples == 0, "{summary:?}");
        for shard in &summary.shards {
            assert!(shard.is_file(), "{}", shard.display());
        }
        let _ = std::fs::remove_dir_all(&out);
        kept == 1
    });
    let _ = std::fs::remove_dir_all(&root);
}
