//! Fuzzing of the server's API: mutated request bodies for every route that reads one, and whole
//! mutated requests (method, path, `Host`, `Origin`, `Sec-Fetch-Site`, `Content-Type`, cookies,
//! body). Every answer is a success or a 4xx/503 with a JSON message, never another 5xx or a
//! panic; a request from another site (or for another host, or of a type a form can send) is
//! always refused.

use std::net::IpAddr;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use tower::ServiceExt;
use zertz_env::{Game, Player, Variant};
use zertz_fuzzkit::{Budget, fuzz_within};
use zertz_serve::{Limits, ServeSettings, Site, router};

/// The address the fuzzed server answers for.
const HOST: &str = "127.0.0.1:8000";

struct Client {
    runtime: tokio::runtime::Runtime,
    app: axum::Router,
}

impl Client {
    fn new() -> Client {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        // Small search trees: a page's largest search stays quick.
        let limits = Limits { tree_bytes: 16 << 20, ..Limits::default() };
        let settings = ServeSettings { seed: 3, limits, ..ServeSettings::default() };
        Client { runtime, app: router(settings, Site::new("127.0.0.1", 8000)) }
    }

    /// Sends `req` and checks the answer: JSON (but the page's own files); an error is 4xx or
    /// 503 with a message. Its status.
    fn send(&self, req: Request<Body>, what: &str) -> StatusCode {
        let api = req.uri().path().starts_with("/api/");
        let head = req.method() == axum::http::Method::HEAD;
        let (status, bytes) = self.runtime.block_on(async {
            let resp = self.app.clone().oneshot(req).await.unwrap();
            let status = resp.status();
            (status, resp.into_body().collect().await.unwrap().to_bytes())
        });
        assert!(
            !status.is_server_error() || status == StatusCode::SERVICE_UNAVAILABLE,
            "{what}: {status}"
        );
        // The page's own files are not JSON; an answer to HEAD has no body.
        if (status.is_success() && !api) || head {
            return status;
        }
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_else(|_| {
            panic!("{what}: {status} answered {:?}, not JSON", String::from_utf8_lossy(&bytes))
        });
        if !status.is_success() {
            assert!(value["error"].is_string(), "{what}: {status} {value}");
        }
        status
    }

    /// Posts `body` as the page does and checks the answer; whether it was accepted (2xx).
    fn post(&self, uri: &str, body: &[u8]) -> bool {
        let kind = if uri.starts_with("/api/record") {
            "application/octet-stream"
        } else {
            "application/json"
        };
        let req = Request::builder()
            .method("POST")
            .uri(uri)
            .header("host", HOST)
            .header("content-type", kind)
            .body(Body::from(body.to_vec()))
            .unwrap();
        let what = format!("{uri} {:?}", String::from_utf8_lossy(body));
        self.send(req, &what) == StatusCode::OK
    }

    fn new_game(&self) -> String {
        let req = Request::builder()
            .method("POST")
            .uri("/api/games")
            .header("host", HOST)
            .header("content-type", "application/json")
            .body(Body::from("{}"))
            .unwrap();
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
    // Five targets: a fifth of the usual budget each; at least 256 inputs, after which every
    // target has accepted some (with the default seed), however busy the machine.
    Budget { secs: b.secs / 5.0, min_cases: b.min_cases.max(256), ..b }
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
    // A fresh game for every input, then the bot's answer to an accepted move.
    let report = fuzz_within(budget(), "serve-play", seeds, tokens, |b| {
        let id = client.new_game();
        let ok = client.post(&format!("/api/games/{id}/play"), b);
        if ok {
            assert!(client.post(&format!("/api/games/{id}/bot"), b""));
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
    let json =
        zertz_env::records::GameRecord::of_game(1, &game, zertz_env::records::End::Win, None, None)
            .to_json();
    let seeds = vec![sgf.as_bytes().to_vec(), json.into_bytes()];
    let tokens = &["(", ")", ";", "P0[", "P1[", "RtoB", "R-", "Done", "\"moves\"", "\n"];
    let report =
        fuzz_within(budget(), "serve-record", seeds, tokens, |b| client.post("/api/record", b));
    assert!(report.accepted > 0);
}

// -------------------------------------------------------------------------- whole requests

/// A request in text: `METHOD PATH`, header lines `Name: value`, an empty line, the body. `{id}`
/// in the path stands for a fresh game's id, `{cookie}` in a header for a browser's id.
const REQUESTS: &[&str] = &[
    "GET /\nHost: 127.0.0.1:8000\n\n",
    "GET /api/info\nHost: localhost:8000\nSec-Fetch-Site: same-origin\n\n",
    "POST /api/games\nHost: 127.0.0.1:8000\nOrigin: http://127.0.0.1:8000\nContent-Type: \
     application/json\nCookie: zertz_client={cookie}\n\n{\"board\": 40}",
    "POST /api/games/{id}/play\nHost: 127.0.0.1:8000\nContent-Type: application/json\n\n\
     {\"move\": \"Wd4,a1\"}",
    "POST /api/games/{id}/resign\nHost: [::1]:8000\nContent-Type: application/json\n\n",
    "POST /api/games/{id}/undo\nHost: 127.0.0.1:8000\nContent-Type: application/json\n\n{}",
    "GET /api/games/{id}\nHost: 127.0.0.1:8000\nCookie: a=b; zertz_client={cookie}\n\n",
    "POST /api/analyze\nHost: 127.0.0.1:8000\nContent-Type: application/json; charset=utf-8\n\n\
     {\"position\": \"37 standard ......./....../...../..../...../....../....... 6/8/10 0/0/0 \
     0/0/0 P0 - 0\", \"simulations\": 30}",
    "POST /api/record?game=0\nHost: 127.0.0.1:8000\nContent-Type: application/octet-stream\n\n\
     (;GM[22]SU[Zertz]\n; P0[0 Start P0]\n; P0[1 RtoB 2 1 D 3]\n; P0[2 R- F 5]\n; P0[3 Done]\n)",
];

const REQUEST_TOKENS: &[&str] = &[
    "\n",
    "Origin: http://evil.example\n",
    "Origin: null\n",
    "Origin: http://127.0.0.1:8000\n",
    "Origin: http://localhost:8001\n",
    "Host: evil.example:8000\n",
    "Host: 127.0.0.1:8001\n",
    "Host: localhost:8000\n",
    "Host: rebound.example\n",
    "Sec-Fetch-Site: cross-site\n",
    "Sec-Fetch-Site: same-site\n",
    "Sec-Fetch-Site: same-origin\n",
    "Content-Type: text/plain\n",
    "Content-Type: application/x-www-form-urlencoded\n",
    "Content-Type: multipart/form-data\n",
    "Content-Type: application/json\n",
    "Content-Type: application/octet-stream\n",
    "Cookie: zertz_client={cookie}\n",
    "Cookie: zertz_client=zz\n",
    "Cookie: zertz_client=\n",
    "GET ",
    "POST ",
    "PUT ",
    "DELETE ",
    "OPTIONS ",
    "HEAD ",
    "/api/games",
    "/api/games/",
    "/api/games/{id}",
    "/api/games/%FF/play",
    "/api/games/{id}/bot",
    "/api/analyze",
    "/api/record?game=x",
    "/api/nothing",
    "/..",
    "{}",
    "\"simulations\": 20000",
    "\"board\": 61",
    ":",
];

/// The parts of a request in the text of [`REQUESTS`].
struct Parsed {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

fn parse_request(bytes: &[u8], id: &str, cookie: &str) -> Option<Parsed> {
    let split = bytes.windows(2).position(|w| w == b"\n\n")?;
    let head = std::str::from_utf8(&bytes[..split]).ok()?;
    let body = bytes[split + 2..].to_vec();
    let mut lines = head.split('\n');
    let (method, path) = lines.next()?.split_once(' ')?;
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        // A header's value without the spaces around it, as HTTP reads it.
        .map(|(k, v)| (k.to_string(), v.trim().replace("{cookie}", cookie)))
        .collect();
    Some(Parsed { method: method.to_string(), path: path.replace("{id}", id), headers, body })
}

/// Whether a request that this server must refuse whatever its route: it names another host, it
/// comes from another site, or it is a `POST` of a type a form can send.
fn cross_site(p: &Parsed) -> bool {
    fn values<'a>(p: &'a Parsed, name: &'a str) -> impl Iterator<Item = &'a str> {
        p.headers.iter().filter(move |(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    let header = |name: &'static str| values(p, name);
    let hosts: Vec<&str> = header("host").collect();
    let foreign_host = match hosts.as_slice() {
        [host] => {
            let (name, port) = match host.rsplit_once(':') {
                Some((n, port)) if !n.ends_with(':') => (n, port),
                _ => (*host, "80"),
            };
            let name = name.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
            let loopback =
                name == "localhost" || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback());
            port != "8000" || !loopback
        }
        _ => true,
    };
    let api = p.path.starts_with("/api/") || p.method != "GET";
    let foreign_origin = header("origin")
        .any(|o| !hosts.first().is_some_and(|h| o.eq_ignore_ascii_case(&format!("http://{h}"))));
    let foreign_fetch = header("sec-fetch-site").any(|s| s != "same-origin" && s != "none");
    let form = p.method == "POST"
        && header("content-type").all(|t| {
            let t = t.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
            t != "application/json" && t != "application/octet-stream"
        });
    foreign_host || (api && (foreign_origin || foreign_fetch)) || form
}

#[test]
fn whole_requests_with_hostile_headers() {
    let client = Client::new();
    let cookie = "0123456789abcdef0123456789abcdef";
    let report = fuzz_within(budget(), "serve-requests", corpus(REQUESTS), REQUEST_TOKENS, |b| {
        let id = client.new_game();
        let Some(p) = parse_request(b, &id, cookie) else { return false };
        let mut builder = Request::builder().method(p.method.as_str()).uri(p.path.as_str());
        for (k, v) in &p.headers {
            builder = builder.header(k.as_str(), v.as_str());
        }
        let Ok(req) = builder.body(Body::from(p.body.clone())) else { return false };
        let what = format!("{:?}", String::from_utf8_lossy(b));
        let status = client.send(req, &what);
        if cross_site(&p) {
            assert!(status.is_client_error(), "{what}: {status}, not refused");
        }
        status.is_success()
    });
    assert!(report.accepted > 0);
}
