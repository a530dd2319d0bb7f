//! Fuzz targets that stay: seeded mutations of valid settings, fed to the self-play config
//! ([`SelfPlayConfig::from_toml`]), the match config file ([`MatchFileConfig::from_file`]) and the
//! player-spec grammar ([`PlayerSpec`]), for a bounded time in the test suite.
//!
//! The corpora: the files of `configs/` (and the default settings written as TOML), and player
//! specs of every kind, mutated by [`zertz_fuzzkit::fuzz`]; what a parser accepts must read back
//! the same after being written out.
//!
//! Budget per target: `ZERTZ_FUZZ_SECS` seconds (default 8), `ZERTZ_FUZZ_CASES` inputs,
//! `ZERTZ_FUZZ_SEED` (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-selfplay --test fuzz -- --nocapture
//! ```
//!
//! A failing input is printed and written to `target/fuzz-failures/`.

use std::path::{Path, PathBuf};

use zertz_fuzzkit::fuzz;
use zertz_selfplay::config::{MAX_THREADS, MatchFileConfig, SelfPlayConfig};
use zertz_selfplay::players::{MAX_SIMULATIONS, Models, PlayerSpec};

// ------------------------------------------------------------------------------- corpora

fn configs_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../configs"))
}

/// Every .toml file under `configs/`, and `extra`.
fn toml_corpus(extra: &[String]) -> Vec<Vec<u8>> {
    let mut files = Vec::new();
    let mut dirs = vec![configs_dir()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|x| x == "toml") {
                files.push(path);
            }
        }
    }
    files.sort();
    assert!(files.len() >= 2, "no configs in {}", configs_dir().display());
    let mut out = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        // Without its comments too, so that fewer mutations land in them.
        let bare: Vec<&str> = text.lines().filter(|l| !l.trim_start().starts_with('#')).collect();
        out.push(bare.join("\n").into_bytes());
        out.push(text.into_bytes());
    }
    out.extend(extra.iter().map(|s| s.clone().into_bytes()));
    out
}

/// Tokens of TOML and of the settings.
const TOML_TOKENS: &[&str] = &[
    "=",
    " = ",
    "\n",
    "[",
    "]",
    "[search]",
    "[[search]]",
    "\"",
    "'",
    "\"\"\"",
    "#",
    ",",
    "{",
    "}",
    ".",
    "0",
    "1",
    "-1",
    "1e9",
    "1e39",
    "-0.0",
    "nan",
    "inf",
    "-inf",
    "+inf",
    "true",
    "false",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551616",
    "1024",
    "1025",
    "100000",
    "65536",
    "65537",
    "1048577",
    "0x10",
    "0o7",
    "0b1",
    "1_000",
    "1979-05-27",
    "board",
    "threads",
    "games",
    "games_per_worker",
    "shard_size",
    "players",
    "\"greedy\"",
    "\"nn:m.pt:0\"",
    "\"mcts:99999999999\"",
    "c_puct",
    "policy_temperature",
    "dirichlet_fraction",
    "leaves_per_round",
    "out",
    "seed",
    "\\u0000",
    "é",
];

/// Tokens of player specs.
const SPEC_TOKENS: &[&str] = &[
    "random",
    "greedy",
    "mcts",
    "uniform",
    "nn",
    "NN",
    ":",
    "::",
    " ",
    "\t",
    "\n",
    "0",
    "1",
    "400",
    "1048576",
    "1048577",
    "4294967295",
    "4294967296",
    "99999999999999999999",
    "-1",
    "+5",
    "m.pt",
    "runs/a:b/m.pt",
    "/",
    "é",
    "\u{0}",
];

// ------------------------------------------------------------------------------- checks

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

/// A file for [`MatchFileConfig::from_file`], one per thread.
fn match_file() -> PathBuf {
    std::env::temp_dir().join(format!(
        "zertz-fuzz-match-{}-{:?}.toml",
        std::process::id(),
        std::thread::current().id()
    ))
}

fn read_match_config(path: &Path, bytes: &[u8]) -> Option<MatchFileConfig> {
    std::fs::write(path, bytes).unwrap();
    MatchFileConfig::from_file(path).ok()
}

fn check_match_config(bytes: &[u8]) -> bool {
    let path = match_file();
    let Some(config) = read_match_config(&path, bytes) else {
        return false;
    };
    assert_eq!(config.players.len(), 2);
    for p in &config.players {
        let spec: PlayerSpec = p.parse().expect("accepted players parse");
        let _ = spec.build(0, &Models::new());
    }
    assert!(config.threads <= MAX_THREADS);
    let written = toml::to_string(&config).expect("an accepted config writes as TOML");
    let back = read_match_config(&path, written.as_bytes());
    assert_eq!(back.as_ref(), Some(&config), "{written}");
    true
}

fn check_player_spec(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    let Ok(spec) = text.parse::<PlayerSpec>() else {
        return false;
    };
    // Its name reads back as the same spec, and is canonical.
    let name = spec.to_string();
    let back: PlayerSpec =
        name.parse().unwrap_or_else(|e| panic!("{text:?} -> {name:?} does not read back: {e}"));
    assert_eq!(back, spec, "{text:?} -> {name:?}");
    assert_eq!(back.to_string(), name);
    let sims = match &spec {
        PlayerSpec::Mcts(n) | PlayerSpec::Uniform(n) => Some(*n),
        PlayerSpec::Neural { simulations, .. } => Some(*simulations),
        PlayerSpec::Random | PlayerSpec::Greedy => None,
    };
    assert!(sims.is_none_or(|n| (1..=MAX_SIMULATIONS).contains(&n)), "{spec:?}");
    // Players without a network build; a network's player names its missing model.
    match (spec.build(1, &Models::new()), spec.model()) {
        (Ok(p), None) => assert_eq!(p.name(), name),
        (Err(e), Some(model)) => assert!(e.contains(model), "{e}"),
        (built, model) => {
            panic!("{spec:?}: built {:?}, model {model:?}", built.map(|p| p.name().to_string()))
        }
    }
    true
}

// ------------------------------------------------------------------------------- targets

#[test]
fn fuzz_selfplay_config() {
    let default = toml::to_string(&SelfPlayConfig::default()).unwrap();
    let corpus = toml_corpus(&[default, "[search]\ntree_reuse = false\n".into()]);
    fuzz("selfplay-config", corpus, TOML_TOKENS, check_selfplay_config);
}

#[test]
fn fuzz_match_config() {
    let default = toml::to_string(&MatchFileConfig::default()).unwrap();
    let extra = [
        default,
        "players = [\"nn:runs/a/model.pt:64\", \"mcts:200\"]\nout = \"m.jsonl\"\n".into(),
    ];
    fuzz("match-config", toml_corpus(&extra), TOML_TOKENS, check_match_config);
    let _ = std::fs::remove_file(match_file());
}

#[test]
fn fuzz_player_spec() {
    let specs = [
        "random",
        "greedy",
        "mcts",
        "mcts:1000",
        "uniform:800",
        " MCTS:50 ",
        "nn:model.pt",
        "nn:runs/a:b/m.pt:64",
        "NN: m.pt :7",
        "nn:C:\\models\\m.pt:1",
        "mcts:1048576",
    ];
    let corpus = specs.iter().map(|s| s.as_bytes().to_vec()).collect();
    fuzz("player-spec", corpus, SPEC_TOKENS, check_player_spec);
}
