//! Every example file in configs/ loads, and the self-play example equals the documented defaults.

use std::path::PathBuf;

use zertz_selfplay::config::{MatchFileConfig, SelfPlayConfig};

fn configs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs")
}

#[test]
fn every_config_file_loads() {
    let mut loaded = 0;
    for entry in std::fs::read_dir(configs_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".toml") || path.is_dir() {
            continue;
        }
        if name.starts_with("selfplay") {
            SelfPlayConfig::from_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        } else if name.starts_with("match") {
            MatchFileConfig::from_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        } else {
            panic!("{name}: no config kind for this file name (selfplay*.toml, match*.toml)");
        }
        loaded += 1;
    }
    assert!(loaded >= 1);
}

/// The `[selfplay]` table of every training config (configs/train/*.toml, read by
/// `zertz.training`) is valid self-play settings once the keys of the training loop are taken out.
#[test]
fn training_configs_hold_valid_selfplay_settings() {
    let mut loaded = 0;
    for entry in std::fs::read_dir(configs_dir().join("train")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let doc: toml::Table = toml::from_str(&text).unwrap();
        let mut table = doc.get("selfplay").and_then(|t| t.as_table()).cloned().unwrap_or_default();
        table.remove("games");
        table.remove("chunks");
        let tmp = std::env::temp_dir()
            .join(format!("zertz-train-selfplay-{}-{loaded}.toml", std::process::id()));
        std::fs::write(&tmp, toml::to_string(&table).unwrap()).unwrap();
        let result = SelfPlayConfig::from_file(&tmp);
        std::fs::remove_file(&tmp).unwrap();
        result.unwrap_or_else(|e| panic!("{}: [selfplay]: {e}", path.display()));
        loaded += 1;
    }
    assert!(loaded >= 2);
}

#[test]
fn the_selfplay_example_shows_the_defaults() {
    let config = SelfPlayConfig::from_file(&configs_dir().join("selfplay.toml")).unwrap();
    assert_eq!(config, SelfPlayConfig::default());
}

#[test]
fn the_match_example_shows_the_defaults_and_bad_files_are_named() {
    let config = MatchFileConfig::from_file(&configs_dir().join("match.toml")).unwrap();
    assert_eq!(config, MatchFileConfig::default());
    let dir = std::env::temp_dir().join(format!("zertz-match-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("m.toml");
    for (text, needle) in [
        ("plyers = [\"a\"]", "plyers"),
        ("players = [\"greedy\"]", "two players"),
        ("players = [\"greedy\", \"alphazero\"]", "alphazero"),
        ("board = 38", "board"),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = MatchFileConfig::from_file(&path).unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
