//! The self-play example equals the documented defaults, and training configs hold valid
//! self-play settings.

use std::path::PathBuf;

use zertz_selfplay::config::SelfPlayConfig;

fn configs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs")
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
