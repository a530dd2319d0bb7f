//! Fuzzing of the server's API: mutated request bodies for every route that reads one. Every
//! answer is a success or a 4xx with a JSON message, never a 5xx or a panic.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;
use zertz_arena::Models;
use zertz_env::{Game, Player, Variant};
use zertz_fuzzkit::{Budget, fuzz_within};
use zertz_serve::{ServeSettings, router};

struct Client {
    runtime: tokio::runtime::Runtime,
    app: axum::Router,
}

impl Client {
    fn new() -> Client {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let settings = ServeSettings {
            players: Vec::new(),
            models: Models::new(),
            model_boards: Default::default(),
            seed: 3,
        };
        Client { runtime, app: router(settings) }
    }

    /// Sends `body` and checks the answer; whether it was accepted (2xx).
    fn post(&self, uri: &str, body: &[u8]) -> bool {
        let req =
            Request::builder().method("POST").uri(uri).body(Body::from(body.to_vec())).unwrap();
        let (status, bytes) = self.runtime.block_on(async {
            let resp = self.app.clone().oneshot(req).await.unwrap();
            let status = resp.status();
            (status, resp.into_body().collect().await.unwrap().to_bytes())
        });
        assert!(
            !status.is_server_error(),
            "{uri}: {status} for {:?}",
            String::from_utf8_lossy(body)
        );
        let value: serde_json::Value = match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            // axum's own answer to a query string it cannot read is plain text.
            Err(_) => return false,
        };
        if status.is_client_error() {
            assert!(value["error"].is_string(), "{uri}: {status} {value}");
        }
        status == StatusCode::OK
    }

    fn new_game(&self) -> String {
        let req =
            Request::builder().method("POST").uri("/api/games").body(Body::from("{}")).unwrap();
        self.runtime.block_on(async {
            let resp = self.app.clone().oneshot(req).await.unwrap();
            let bytes = resp.into_body().collect().await.unwrap().to_bytes();
            let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            v["id"].as_str().unwrap().to_string()
        })
    }
}

fn budget() -> Budget {
    let b = Budget::from_env();
    // Four targets: a quarter of the usual budget each.
    Budget { secs: b.secs / 4.0, ..b }
}

fn corpus(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn new_game_bodies() {
    let client = Client::new();
    let seeds = corpus(&[
        r#"{"board":37,"blitz":false,"opponent":"random","colour":"P0"}"#,
        r#"{"board":61,"blitz":true,"opponent":"greedy","colour":"P1"}"#,
        r#"{"opponent":"mcts:10","opponent_b":"uniform:5","colour":"watch"}"#,
        "{}",
    ]);
    let tokens = &[
        "\"board\"",
        "48",
        "\"opponent\"",
        "\"mcts:",
        "nn:",
        "cmd:",
        "\"watch\"",
        "null",
        "{",
        "}",
        ",",
    ];
    let report =
        fuzz_within(budget(), "serve-new-game", seeds, tokens, |b| client.post("/api/games", b));
    assert!(report.accepted > 0);
}

#[test]
fn play_bodies() {
    let client = Client::new();
    let start = zertz_env::Position::new(Variant::default(), Player::P0);
    let mut seeds = vec![r#"{"move":"pass"}"#.to_string()];
    for m in start.legal_moves().iter().step_by(97) {
        seeds.push(format!(r#"{{"move":"{}"}}"#, start.move_to_string(m)));
    }
    let seeds = seeds.iter().map(|s| s.as_bytes().to_vec()).collect();
    let tokens = &["x", ",", "W", "G", "B", "d4", "a1", "g1", "\"move\"", "pass", "\\u0000"];
    // A fresh game for every input, then the engine's answer to an accepted move.
    let report = fuzz_within(budget(), "serve-play", seeds, tokens, |b| {
        let id = client.new_game();
        let ok = client.post(&format!("/api/games/{id}/play"), b);
        if ok {
            assert!(client.post(&format!("/api/games/{id}/engine"), b""));
        }
        ok
    });
    assert!(report.accepted > 0);
}

#[test]
fn analyze_bodies() {
    let client = Client::new();
    let start = zertz_env::Position::new(Variant::default(), Player::P0);
    let seeds = vec![
        serde_json::json!({"position": start.to_text(), "simulations": 20})
            .to_string()
            .into_bytes(),
        serde_json::json!({"position": start.to_text(), "simulations": 5, "player": "uniform:5"})
            .to_string()
            .into_bytes(),
    ];
    let tokens = &["\"simulations\"", "0", "99", "\"player\"", "\"nn:x\"", "37", "blitz", "/", " "];
    let report =
        fuzz_within(budget(), "serve-analyze", seeds, tokens, |b| client.post("/api/analyze", b));
    assert!(report.accepted > 0);
}

#[test]
fn record_bodies() {
    let client = Client::new();
    let sgf = "(;GM[22]SU[Zertz]\n; P0[0 Start P0]\n; P0[1 RtoB 2 1 D 3]\n; P0[2 R- F 5]\n; P0[3 Done]\n)";
    let mut game = Game::new(Variant::default(), Player::P0);
    game.play_str("Wd4,a1").unwrap();
    let json = zertz_selfplay::records::GameRecord::of_game(
        1,
        &game,
        zertz_selfplay::records::End::Win,
        None,
        None,
    )
    .to_json();
    let seeds = vec![sgf.as_bytes().to_vec(), json.into_bytes()];
    let tokens = &["(", ")", ";", "P0[", "P1[", "RtoB", "R-", "Done", "\"moves\"", "\n"];
    let report =
        fuzz_within(budget(), "serve-record", seeds, tokens, |b| client.post("/api/record", b));
    assert!(report.accepted > 0);
}
