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
