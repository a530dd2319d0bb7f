//! Every example file in configs/ loads, and the match example equals the documented defaults.

use std::path::PathBuf;

use zertz_arena::config::MatchFileConfig;
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

#[test]
fn the_match_example_documents_every_setting() {
    use zertz_settings::Described;
    let text = std::fs::read_to_string(configs_dir().join("match.toml")).unwrap();
    for field in zertz_arena::config::MatchSettings::FIELDS {
        let set = format!("{} = ", field.name);
        let shown = text.lines().any(|l| l.starts_with(&set) || l.starts_with(&format!("# {set}")));
        assert!(shown, "configs/match.toml does not show {}", field.name);
    }
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
        ("move_time = -1", "move_time"),
        ("move_time = 5000", "move_time"),
        ("games = -1", "games"),
        ("answer_time = \"x\"", "answer_time"),
        ("games = 2\ngmes = 2", "gmes"),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = MatchFileConfig::from_file(&path).unwrap_err().to_string();
        assert!(err.contains(needle), "{text}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_value_past_its_type_names_the_range_not_the_rust_type() {
    use zertz_arena::config::MatchSettings;
    let e = zertz_settings::check_value::<MatchSettings>(
        "opening_actions",
        &serde_json::json!(1u64 << 40),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("opening_actions: "), "{e}");
    assert!(e.contains("a whole number from 0 to 4294967295") && !e.contains("u32"), "{e}");
}

#[test]
fn the_selfplay_example_shows_every_setting_and_its_default() {
    use zertz_settings::Described;
    let text = std::fs::read_to_string(configs_dir().join("selfplay.toml")).unwrap();
    for field in SelfPlayConfig::FIELDS {
        let set = format!("{} = ", field.name);
        let table = format!("[{}]", field.name);
        let shown = text.lines().any(|l| l.starts_with(&set) || l.starts_with(&table));
        assert!(shown, "configs/selfplay.toml does not show {}", field.name);
    }
    let example = SelfPlayConfig::from_file(&configs_dir().join("selfplay.toml")).unwrap();
    assert_eq!(example, SelfPlayConfig::default());
}

#[test]
fn a_value_toml_has_and_json_has_not_is_refused_by_its_whole_key() {
    let e = zertz_settings::toml_layer("games = 2\n[search]\nc_puct = inf\n", &[])
        .unwrap_err()
        .to_string();
    assert_eq!(e, "search.c_puct: must be a finite number, not inf");
    let e = zertz_settings::toml_layer("temperature = nan\n", &[]).unwrap_err();
    assert_eq!(e.to_string(), "temperature: must be a finite number, not NaN");
}
