//! Replays every boardspace record of `shared/games` and compares with `expected.json`.
//!
//! The folder comes from `ZERTZ_GAMES`, or `../shared/games` beside the repository.

use std::path::PathBuf;

use serde_json::Value;
use zertz_env::sgf::Record;
use zertz_env::{Marble, Player};

fn games_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("ZERTZ_GAMES") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/games")
}

#[test]
fn every_record_replays_as_expected() {
    let dir = games_dir();
    let expected_path = dir.join("expected.json");
    let text = std::fs::read_to_string(&expected_path).unwrap_or_else(|e| {
        panic!("cannot read {} ({e}); set ZERTZ_GAMES to the games folder", expected_path.display())
    });
    let expected: serde_json::Map<String, Value> = serde_json::from_str(&text).unwrap();
    assert_eq!(expected.len(), 300);
    let mut failures = Vec::new();
    for (file, want) in &expected {
        let sgf = std::fs::read_to_string(dir.join(file)).unwrap();
        let replay = match Record::parse(&sgf)
            .map_err(|e| e.to_string())
            .and_then(|r| r.replay().map_err(|e| e.to_string()))
        {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{file}: {e}"));
                continue;
            }
        };
        let pos = replay.game.position();
        let caps = |p: Player| {
            Value::from(Marble::ALL.iter().map(|&m| pos.captures(p)[m]).collect::<Vec<_>>())
        };
        let got = serde_json::json!({
            "board": pos.board().rings(),
            "moves": replay.notation(),
            "legal_counts": replay.legal_counts,
            "turns": replay.game.moves().len(),
            "winner": replay.winner.map(|p| p.to_string()),
            "end": replay.end.name(),
            "captures": {"P0": caps(Player::P0), "P1": caps(Player::P1)},
        });
        for key in ["board", "moves", "legal_counts", "turns", "winner", "end", "captures"] {
            if got[key] != want[key] {
                failures.push(format!("{file}: {key}: got {} want {}", got[key], want[key]));
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}
