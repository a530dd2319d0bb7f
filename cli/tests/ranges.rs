//! Every declared range holds where the settings are read: each number setting of the match, the
//! self-play and the search settings takes the ends of its range and refuses what lies just past
//! them, by its key and in the range's words, and its help says the range. A range is declared
//! once, beside its setting (`zertz_settings::settings!`); this test follows any that is added.

use serde_json::{Value, json};
use zertz_arena::config::MatchSettings;
use zertz_search::SearchSettings;
use zertz_selfplay::config::SelfPlayConfig;
use zertz_settings::{Bound, Kind, Settings, check_value};

/// A setting's value as JSON: a whole number for a whole-number setting, else a float.
fn value(kind: Kind, x: f64) -> Option<Value> {
    match kind {
        Kind::Int if x < 0.0 || x.fract() != 0.0 => None,
        Kind::Int => Some(json!(x as u64)),
        _ => Some(json!(x)),
    }
}

/// Values in the range and values out of it, near its ends.
fn probes(kind: Kind, low: Bound, high: Bound) -> (Vec<f64>, Vec<f64>) {
    let step = if kind == Kind::Int { 1.0 } else { 1e-3 };
    let (mut inside, mut outside) = (Vec::new(), Vec::new());
    match low {
        Bound::Incl(l) => {
            inside.push(l);
            outside.push(l - step);
        }
        Bound::Excl(l) => {
            inside.push(l + step);
            outside.push(l);
        }
        Bound::Open => {}
    }
    match high {
        Bound::Incl(h) => {
            inside.push(h);
            outside.push(h + step);
        }
        Bound::Excl(h) => {
            inside.push(h - step);
            outside.push(h);
        }
        Bound::Open => {}
    }
    (inside, outside)
}

/// Checks every ranged field of `S`; returns how many were checked.
fn check_ranges<S: Settings>() -> usize {
    let mut checked = 0;
    for field in S::FIELDS {
        let Some(range) = field.range else { continue };
        checked += 1;
        let words = range.describe(field.kind);
        assert!(field.help().to_lowercase().contains(&words.to_lowercase()), "{}", field.name);
        let (mut inside, outside) = probes(field.kind, range.low, range.high);
        inside.extend(range.also);
        for x in inside {
            let Some(v) = value(field.kind, x) else { continue };
            check_value::<S>(field.name, &v)
                .unwrap_or_else(|e| panic!("{} = {x} is in {words}: {e}", field.name));
        }
        for x in outside {
            if range.also == Some(x) {
                continue;
            }
            let Some(v) = value(field.kind, x) else { continue };
            let e = check_value::<S>(field.name, &v).unwrap_err().to_string();
            assert_eq!(e, format!("{}: {}", field.name, range.reason(field.kind)), "{x}");
        }
        if field.kind != Kind::Int {
            // NaN and infinities are no JSON: a front that reads one says so before the range.
            for x in [f64::NAN, f64::INFINITY] {
                assert!(!range.contains(x), "{}: {x}", field.name);
            }
        }
    }
    checked
}

#[test]
fn every_declared_range_is_the_check_its_error_and_its_help() {
    assert!(check_ranges::<MatchSettings>() >= 6);
    assert!(check_ranges::<SelfPlayConfig>() >= 11);
    assert!(check_ranges::<SearchSettings>() >= 11);
}

#[test]
fn a_whole_config_is_checked_by_the_same_ranges() {
    let mut config = SelfPlayConfig { games_per_worker: 0, ..SelfPlayConfig::default() };
    assert_eq!(
        config.validate().unwrap_err().to_string(),
        "games_per_worker: must be between 1 and 65536"
    );
    config.games_per_worker = 1;
    config.search.c_puct = Some(0.0);
    assert_eq!(
        config.validate().unwrap_err().to_string(),
        "search.c_puct: must be a positive finite number"
    );
    let settings = MatchSettings { max_actions: 0, ..MatchSettings::default() };
    assert_eq!(settings.validate().unwrap_err().to_string(), "max_actions: must be at least 1");
}
