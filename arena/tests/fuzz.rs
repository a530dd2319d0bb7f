//! Fuzz targets that stay: seeded mutations of valid settings, fed to the match config file
//! ([`MatchFileConfig::from_file`]) and the player-spec grammar ([`PlayerSpec`]), for a bounded
//! time in the test suite. The corpora: the files of `configs/` and the default settings written
//! as TOML, and player specs of every kind, mutated by [`zertz_fuzzkit::fuzz`]; what a parser
//! accepts must read back the same after being written out.
//!
//! Budget per target: `ZERTZ_FUZZ_SECS` seconds (default 8), `ZERTZ_FUZZ_CASES` inputs,
//! `ZERTZ_FUZZ_SEED` (see `fuzzkit`). A longer run:
//!
//! ```text
//! ZERTZ_FUZZ_SECS=600 cargo test --release -p zertz-arena --test fuzz -- --nocapture
//! ```

use std::path::{Path, PathBuf};

use zertz_arena::config::MatchFileConfig;
use zertz_arena::players::{MAX_SIMULATIONS, Models, PlayerSpec};
use zertz_fuzzkit::{TOML_TOKENS, config_corpus, fuzz};
use zertz_selfplay::config::MAX_THREADS;

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
        (Err(e), Some(model)) => assert!(e.to_string().contains(model), "{e}"),
        (built, model) => {
            panic!("{spec:?}: built {:?}, model {model:?}", built.map(|p| p.name().to_string()))
        }
    }
    true
}

#[test]
fn fuzz_match_config() {
    let default = toml::to_string(&MatchFileConfig::default()).unwrap();
    let extra = [
        default,
        "players = [\"nn:runs/a/model.pt:64\", \"mcts:200\"]\nout = \"m.jsonl\"\n".into(),
    ];
    fuzz("match-config", config_corpus(&extra), TOML_TOKENS, check_match_config);
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
