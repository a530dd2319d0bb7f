//! The server's API through its router (no socket): games, moves, undo, analysis, records, and
//! every kind of bad request answered with a 4xx status and a message.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use zertz_arena::Models;
use zertz_env::MarbleSet;
use zertz_serve::{NetworkPlays, ServeSettings, Site, router};

/// The address the test servers answer for.
const HOST: &str = "127.0.0.1:8000";

fn site() -> Site {
    Site::new("127.0.0.1", 8000)
}

fn app() -> axum::Router {
    router(ServeSettings { seed: 5, ..ServeSettings::default() }, site())
}

/// A server that offers a "network" (a uniform evaluator standing in for one) that plays only
/// the 37-ring board.
fn app_with_network() -> axum::Router {
    let mut models = Models::new();
    models.insert("fake.safetensors", std::sync::Arc::new(zertz_search::UniformEvaluator));
    let settings = ServeSettings {
        players: vec!["nn:fake.safetensors:50".parse().unwrap()],
        models,
        model_plays: [(
            "fake.safetensors".to_string(),
            NetworkPlays { boards: vec![37], marbles: vec![MarbleSet::Standard] },
        )]
        .into_iter()
        .collect(),
        seed: 5,
        ..ServeSettings::default()
    };
    router(settings, site())
}

/// A request as the page sends it: its own host, JSON (a record as bytes).
async fn call(
    app: &axum::Router,
    method: &str,
    uri: &str,
    body: Option<&str>,
) -> (StatusCode, Value) {
    let kind = if uri.starts_with("/api/record") {
        "application/octet-stream"
    } else {
        "application/json"
    };
    let req = Request::builder()
        .method(method)
        .uri(uri)
        .header("host", HOST)
        .header("content-type", kind)
        .body(Body::from(body.unwrap_or("").to_string()))
        .unwrap();
    let resp = app.clone().oneshot(req).await.unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let value = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()));
    (status, value)
}

async fn new_game(app: &axum::Router, body: Value) -> Value {
    let (status, game) = call(app, "POST", "/api/games", Some(&body.to_string())).await;
    assert_eq!(status, StatusCode::OK, "{game}");
    game
}

#[tokio::test]
async fn the_page_and_its_assets_are_served() {
    let app = app();
    for (path, needle) in
        [("/", "id=\"board-svg\""), ("/app.js", "data-cell"), ("/style.css", ".cell")]
    {
        let req = Request::builder().uri(path).header("host", HOST).body(Body::empty()).unwrap();
        let resp = app.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        let text = resp.into_body().collect().await.unwrap().to_bytes();
        assert!(String::from_utf8_lossy(&text).contains(needle), "{path}");
    }
    let (status, info) = call(&app, "GET", "/api/info", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(info["boards"], json!([37, 40, 43, 44, 48, 61]));
    assert_eq!(info["default_opponent"], "random");
    // The page builds its board list, its suggestions and its analysis limit from here (its
    // HTML names none of them), and every suggestion is a player the page may ask for.
    assert_eq!(info["max_page_simulations"], json!(zertz_serve::settings::MAX_PAGE_SIMULATIONS));
    let suggested = info["suggested"].as_array().unwrap();
    assert!(suggested.len() >= 5, "{suggested:?}");
    for spec in suggested {
        let game = new_game(&app, json!({"opponent": spec, "colour": "P0"})).await;
        assert_eq!(game["players"][1], *spec, "{game}");
    }
    let (status, err) = call(&app, "GET", "/nothing", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(err["error"].is_string());
}

#[tokio::test]
async fn a_game_against_random_is_played_undone_and_resigned() {
    let app = app();
    let game =
        new_game(&app, json!({"board": 48, "blitz": true, "opponent": "random", "colour": "P0"}))
            .await;
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!((game["board"].as_u64(), game["blitz"].as_bool()), (Some(48), Some(true)));
    assert_eq!(game["cells"].as_array().unwrap().len(), 48);
    assert_eq!(game["you"], "P0");
    assert_eq!(game["legal"]["colours"], json!(["W", "G", "B"]));
    let (s, g) =
        call(&app, "POST", &format!("/api/games/{id}/play"), Some(r#"{"move":"Wd4,a1"}"#)).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g["bot_to_move"], true);
    assert_eq!(g["moves"], json!(["Wd4,a1"]));
    let d4 = g["cells"].as_array().unwrap().iter().find(|c| c["name"] == "d4").unwrap().clone();
    assert_eq!(d4["marble"], "W");
    // Not the person's turn now.
    let (s, e) =
        call(&app, "POST", &format!("/api/games/{id}/play"), Some(r#"{"move":"Gd5,a2"}"#)).await;
    assert_eq!(s, StatusCode::CONFLICT);
    assert!(e["error"].as_str().unwrap().contains("not your turn"), "{e}");
    let (s, g) = call(&app, "POST", &format!("/api/games/{id}/bot"), None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(g["moves"].as_array().unwrap().len(), 2);
    assert_eq!(g["bot_to_move"], false);
    let (s, g) = call(&app, "POST", &format!("/api/games/{id}/undo"), None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(g["moves"], json!([]));
    let (s, g) = call(&app, "POST", &format!("/api/games/{id}/resign"), None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(g["over"], true);
    assert_eq!(g["status"], "P1 wins: P0 resigned");
    let (s, g2) = call(&app, "GET", &format!("/api/games/{id}"), None).await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(g2["status"], g["status"]);
}

#[tokio::test]
async fn bad_requests_get_4xx_answers_with_messages() {
    let app = app();
    let game = new_game(&app, json!({"opponent": "greedy"})).await;
    let id = game["id"].as_str().unwrap().to_string();
    let play = format!("/api/games/{id}/play");
    let (no_sims, many_sims) = (analyze_body(0), analyze_body(1_000_000));
    let cases: Vec<(&str, String, Option<&str>, StatusCode, &str)> = vec![
        ("POST", "/api/games".into(), Some("{"), StatusCode::BAD_REQUEST, "bad request body"),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"board": 39}"#),
            StatusCode::BAD_REQUEST,
            "no 39-ring board",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"colour": "red"}"#),
            StatusCode::BAD_REQUEST,
            "colour",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"opponent": "alphazero"}"#),
            StatusCode::BAD_REQUEST,
            "unknown player",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"opponent": "mcts:1000000"}"#),
            StatusCode::BAD_REQUEST,
            "at most",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"opponent": "alphabeta:3"}"#),
            StatusCode::BAD_REQUEST,
            "at most depth 2",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"opponent": "alphabeta:time=11"}"#),
            StatusCode::BAD_REQUEST,
            "at most 10 s",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"opponent": "nn:/etc/passwd:time=1"}"#),
            StatusCode::BAD_REQUEST,
            "not offered",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"opponent": "nn:/etc/passwd"}"#),
            StatusCode::BAD_REQUEST,
            "not offered",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"opponent": "cmd:rm -rf /"}"#),
            StatusCode::BAD_REQUEST,
            "not offered",
        ),
        (
            "POST",
            "/api/games".into(),
            Some(r#"{"surprise": 1}"#),
            StatusCode::BAD_REQUEST,
            "unknown field",
        ),
        ("POST", play.clone(), Some(r#"{"move":"Wz9,a1"}"#), StatusCode::BAD_REQUEST, "z9"),
        ("POST", play.clone(), Some(r#"{"move":"Wd4,d4"}"#), StatusCode::BAD_REQUEST, "illegal"),
        (
            "POST",
            play.clone(),
            Some(r#"{"mv":"Wd4,a1"}"#),
            StatusCode::BAD_REQUEST,
            "unknown field",
        ),
        ("POST", play.clone(), Some("\u{0}\u{1}"), StatusCode::BAD_REQUEST, "bad request body"),
        ("POST", format!("/api/games/{id}/bot"), None, StatusCode::BAD_REQUEST, "no bot plays P0"),
        ("POST", format!("/api/games/{id}/undo"), None, StatusCode::BAD_REQUEST, "nothing to undo"),
        ("GET", "/api/games/ffff".into(), None, StatusCode::NOT_FOUND, "no game"),
        (
            "POST",
            "/api/games/ffff/play".into(),
            Some(r#"{"move":"pass"}"#),
            StatusCode::NOT_FOUND,
            "no game",
        ),
        (
            "POST",
            "/api/analyze".into(),
            Some(r#"{"position":"nonsense"}"#),
            StatusCode::BAD_REQUEST,
            "bad position",
        ),
        ("POST", "/api/analyze".into(), Some(&no_sims), StatusCode::BAD_REQUEST, "simulations"),
        ("POST", "/api/analyze".into(), Some(&many_sims), StatusCode::BAD_REQUEST, "simulations"),
        ("POST", "/api/record".into(), Some(""), StatusCode::BAD_REQUEST, "empty"),
        ("POST", "/api/record".into(), Some("(;GM[1]"), StatusCode::BAD_REQUEST, "SGF"),
        ("POST", "/api/record?game=x".into(), Some("{}"), StatusCode::BAD_REQUEST, ""),
    ];
    for (method, uri, body, want, needle) in cases {
        let (status, answer) = call(&app, method, &uri, body).await;
        assert_eq!(status, want, "{method} {uri} {body:?}: {answer}");
        let message =
            answer["error"].as_str().map(str::to_string).unwrap_or_else(|| answer.to_string());
        assert!(message.contains(needle), "{method} {uri} {body:?}: {message}");
    }
    // The game is untouched by the refused requests.
    let (_, g) = call(&app, "GET", &format!("/api/games/{id}"), None).await;
    assert_eq!(g["moves"], json!([]));
}

fn analyze_body(simulations: u32) -> String {
    let start = zertz_env::Position::new(zertz_env::Variant::default(), zertz_env::Player::P0);
    json!({"position": start.to_text(), "simulations": simulations}).to_string()
}

#[tokio::test]
async fn analysis_reports_visits_priors_and_values() {
    let app = app();
    let (s, a) = call(&app, "POST", "/api/analyze", Some(&analyze_body(200))).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    let moves = a["moves"].as_array().unwrap();
    assert_eq!(moves.len(), 1944);
    let visits: u64 = moves.iter().map(|m| m["visits"].as_u64().unwrap()).sum();
    assert!(visits >= 190, "{visits}");
    assert!(moves[0]["visits"].as_u64() >= moves[1]["visits"].as_u64());
    assert!(moves[0]["notation"].as_str().unwrap().starts_with(['W', 'G', 'B']));
    assert!(a["value"].as_f64().unwrap().abs() <= 1.0);
}

#[tokio::test]
async fn a_watched_game_between_bots_runs_to_its_end() {
    let app = app();
    let game =
        new_game(&app, json!({"opponent": "greedy", "opponent_b": "random", "colour": "watch"}))
            .await;
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(game["you"], Value::Null);
    assert_eq!(game["players"], json!(["greedy", "random"]));
    let mut g = game;
    let mut turns = 0;
    while g["bot_to_move"] == true {
        let (s, next) = call(&app, "POST", &format!("/api/games/{id}/bot"), None).await;
        assert_eq!(s, StatusCode::OK, "{next}");
        g = next;
        turns += 1;
        assert!(turns < 500);
    }
    assert_eq!(g["over"], true);
    assert_eq!(g["moves"].as_array().unwrap().len(), turns);
    let (s, _) = call(&app, "POST", &format!("/api/games/{id}/bot"), None).await;
    assert_eq!(s, StatusCode::CONFLICT);
}

#[tokio::test]
async fn the_page_plays_alpha_beta_within_its_limits() {
    let app = app();
    let game = new_game(
        &app,
        json!({"opponent": "alphabeta:time=0.05", "opponent_b": "alphabeta:1", "colour": "watch"}),
    )
    .await;
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(game["players"], json!(["alphabeta:time=0.05", "alphabeta:1"]));
    let mut g = game;
    for _ in 0..6 {
        if g["bot_to_move"] != true {
            break;
        }
        let (s, next) = call(&app, "POST", &format!("/api/games/{id}/bot"), None).await;
        assert_eq!(s, StatusCode::OK, "{next}");
        g = next;
    }
    assert!(!g["moves"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn records_are_read_into_frames() {
    let app = app();
    let sgf = "(;GM[22]SU[Zertz]\n; P0[0 Start P0]\n; P0[1 RtoB 2 1 D 3]\n; P0[2 R- F 5]\n; P0[3 Done]\n)";
    let (s, r) = call(&app, "POST", "/api/record", Some(sgf)).await;
    assert_eq!(s, StatusCode::OK, "{r}");
    assert_eq!(r["games"], 1);
    assert_eq!(r["moves"].as_array().unwrap().len(), 1);
    assert_eq!(r["frames"].as_array().unwrap().len(), 2);
    let (s, e) = call(&app, "POST", "/api/record?game=3", Some(sgf)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(e["error"].as_str().unwrap().contains("game 3"));
}

#[tokio::test]
async fn many_games_at_once_each_keep_their_own_state() {
    let app = app();
    let mut ids = Vec::new();
    for board in [37, 40, 43, 44, 48, 61] {
        let g = new_game(&app, json!({"board": board})).await;
        ids.push((board, g["id"].as_str().unwrap().to_string()));
    }
    let mut handles = Vec::new();
    for (board, id) in ids.clone() {
        let app = app.clone();
        handles.push(tokio::spawn(async move {
            let (s, g) =
                call(&app, "POST", &format!("/api/games/{id}/play"), Some(r#"{"move":"Bd4,a1"}"#))
                    .await;
            assert_eq!(s, StatusCode::OK, "{g}");
            assert_eq!(g["board"].as_u64(), Some(board));
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    for (board, id) in ids {
        let (_, g) = call(&app, "GET", &format!("/api/games/{id}"), None).await;
        assert_eq!(g["board"].as_u64(), Some(board));
        assert_eq!(g["moves"], json!(["Bd4,a1"]));
    }
}

#[tokio::test]
async fn offered_networks_play_and_analyse_on_their_boards_only() {
    let app = app_with_network();
    let (_, info) = call(&app, "GET", "/api/info", None).await;
    assert_eq!(info["default_opponent"], "nn:fake.safetensors:50");
    assert_eq!(info["players"], json!(["nn:fake.safetensors:50"]));
    // The default opponent is the offered network.
    let game = new_game(&app, json!({"colour": "P1"})).await;
    assert_eq!(game["players"], json!(["nn:fake.safetensors:50", "you"]));
    let id = game["id"].as_str().unwrap();
    let (s, g) = call(&app, "POST", &format!("/api/games/{id}/bot"), None).await;
    assert_eq!(s, StatusCode::OK, "{g}");
    assert_eq!(g["moves"].as_array().unwrap().len(), 1);
    // On another board, or with the blitz marbles, the network is refused by name; a game
    // that names no opponent there gets rollout MCTS.
    for body in [
        r#"{"board": 48, "opponent": "nn:fake.safetensors:50"}"#,
        r#"{"blitz": true, "opponent": "nn:fake.safetensors:50"}"#,
    ] {
        let (s, e) = call(&app, "POST", "/api/games", Some(body)).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body}: {e}");
        let text = e["error"].as_str().unwrap();
        assert!(text.contains("plays the 37 boards with the standard marbles, not"), "{e}");
    }
    for body in [r#"{"board": 48, "colour": "P1"}"#, r#"{"blitz": true, "colour": "P1"}"#] {
        let g = new_game(&app, serde_json::from_str(body).unwrap()).await;
        assert_eq!(g["players"], json!(["mcts:1000", "you"]), "{body}");
    }
    // The offered network at a time per move of the page's.
    let g =
        new_game(&app, json!({"colour": "P1", "opponent": "nn:fake.safetensors:50:time=1"})).await;
    assert_eq!(g["players"], json!(["nn:fake.safetensors:50:time=1", "you"]));
    // Another simulation count of the same network is not offered.
    let (s, e) =
        call(&app, "POST", "/api/games", Some(r#"{"opponent": "nn:fake.safetensors:51"}"#)).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    // Analysis searches with the offered network by default (uniform priors: 1/1944 each).
    let (s, a) = call(&app, "POST", "/api/analyze", Some(&analyze_body(100))).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    let prior = a["moves"][0]["prior"].as_f64().unwrap();
    assert!((prior - 1.0 / 1944.0).abs() < 1e-4, "{prior}");
    let r48 = zertz_env::Position::new(
        zertz_env::Variant::new(zertz_env::Board::R48, zertz_env::MarbleSet::Standard),
        zertz_env::Player::P0,
    );
    // A position the network does not play is analysed with rollouts unless the network is
    // named.
    let body = json!({"position": r48.to_text(), "simulations": 10}).to_string();
    let (s, a) = call(&app, "POST", "/api/analyze", Some(&body)).await;
    assert_eq!(s, StatusCode::OK, "{a}");
    assert_eq!(a["simulations"], 10, "{a}");
    let body =
        json!({"position": r48.to_text(), "simulations": 10, "player": "nn:fake.safetensors:50"});
    let (s, e) = call(&app, "POST", "/api/analyze", Some(&body.to_string())).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{e}");
    assert!(e["error"].as_str().unwrap().contains("not 48 rings with the standard"), "{e}");
}

/// A program that answers every command of the engine protocol with `= x` (enough to start).
#[cfg(unix)]
fn stub_engine() -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::temp_dir().join(format!("zertz-serve-stub-{}.sh", std::process::id()));
    let script = "#!/bin/sh\nwhile read -r line; do\n  case \"$line\" in\n    quit) printf '=\\n\\n'; exit 0;;\n    *) printf '= x\\n\\n';;\n  esac\ndone\n";
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn games_with_programs_are_bounded() {
    let max_programs = zertz_serve::Limits::DEFAULT.programs;
    let stub = stub_engine();
    let spec = format!("cmd:{}", stub.display());
    let settings =
        ServeSettings { players: vec![spec.parse().unwrap()], seed: 1, ..ServeSettings::default() };
    let app = router(settings, site());
    let plain = new_game(&app, json!({"opponent": "random"})).await;
    let mut ids = Vec::new();
    for _ in 0..max_programs + 2 {
        let g = new_game(&app, json!({"opponent": spec})).await;
        assert_eq!(g["players"][1], spec.as_str());
        ids.push(g["id"].as_str().unwrap().to_string());
    }
    // The two oldest games with a program are gone, the others and the plain game stay.
    for (i, id) in ids.iter().enumerate() {
        let (status, _) = call(&app, "GET", &format!("/api/games/{id}"), None).await;
        let want = if i < 2 { StatusCode::NOT_FOUND } else { StatusCode::OK };
        assert_eq!(status, want, "game {i}");
    }
    let (status, _) =
        call(&app, "GET", &format!("/api/games/{}", plain["id"].as_str().unwrap()), None).await;
    assert_eq!(status, StatusCode::OK);
    let _ = std::fs::remove_file(stub);
}
