//! Every example file in configs/ loads, and the self-play example equals the documented defaults.

use std::path::PathBuf;

use zertz_selfplay::config::SelfPlayConfig;

fn configs_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../configs")
}

#[test]
fn every_config_file_loads() {
    let mut loaded = 0;
    for entry in std::fs::read_dir(configs_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.ends_with(".toml") {
            continue;
        }
        if name.starts_with("selfplay") {
            SelfPlayConfig::from_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        } else {
            panic!("{name}: no config kind for this file name (expected selfplay*.toml)");
        }
        loaded += 1;
    }
    assert!(loaded >= 1);
}

#[test]
fn the_selfplay_example_shows_the_defaults() {
    let config = SelfPlayConfig::from_file(&configs_dir().join("selfplay.toml")).unwrap();
    assert_eq!(config, SelfPlayConfig::default());
}
