//! The server against hostile clients: requests from other sites (and for other hosts), guessed
//! ids, one browser's games against another's, too many searches or programs at once, a program
//! that never answers, connections left idle or half sent, and a stop with requests still open.
//! Limits are set small and times short (a few hundred milliseconds), so that each test takes
//! about a second.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderMap, Request, StatusCode};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;
use zertz_arena::players::command::ProgramLimits;
use zertz_serve::{Limits, ServeSettings, Site, router};

const HOST: &str = "127.0.0.1:8000";

/// How long a test waits for what must happen at once (a program to start or end, the server to
/// stop) before it fails: only what never happens takes that long, however busy the machine.
const NEVER: Duration = Duration::from_secs(60);

/// A program's answer time in these tests: the stop ends its waits long before.
const HOUR: Duration = Duration::from_secs(3600);

fn site() -> Site {
    Site::new("127.0.0.1", 8000)
}

fn app_with(limits: Limits) -> axum::Router {
    router(ServeSettings { limits, ..ServeSettings::default() }, site())
}

/// An answer: status, headers, body (JSON, or the text as a JSON string).
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Value,
}

/// Sends a request with these headers (`host` and `content-type` as the page sends them unless
/// given).
async fn send(
    app: &axum::Router,
    method: &str,
    uri: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut req = Request::builder().method(method).uri(uri);
    let named = |n: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(n));
    if !named("host") {
        req = req.header("host", HOST);
    }
    if !named("content-type") && method == "POST" {
        let kind = if uri.starts_with("/api/record") {
            "application/octet-stream"
        } else {
            "application/json"
        };
        req = req.header("content-type", kind);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app.clone().oneshot(req.body(Body::from(body.to_string())).unwrap()).await.unwrap();
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or(Value::String(String::from_utf8_lossy(&bytes).into()));
    Answer { status, headers, body }
}

async fn new_game(app: &axum::Router, headers: &[(&str, &str)], body: Value) -> Answer {
    send(app, "POST", "/api/games", headers, &body.to_string()).await
}

/// The id of a new game that must start.
async fn started(app: &axum::Router, headers: &[(&str, &str)], body: Value) -> String {
    let a = new_game(app, headers, body).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.body["id"].as_str().unwrap().to_string()
}

fn error_of(a: &Answer) -> String {
    a.body["error"].as_str().unwrap_or_else(|| panic!("not a JSON error: {}", a.body)).to_string()
}

// ------------------------------------------------------------------------------ other sites

/// A request that must be refused: method, path, headers, status, a word of the message.
type Refused<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>, StatusCode, &'a str);

#[tokio::test]
async fn requests_from_other_sites_are_refused_and_change_nothing() {
    let app = app_with(Limits::default());
    let id = started(&app, &[], json!({})).await;
    let resign = format!("/api/games/{id}/resign");
    let view = format!("/api/games/{id}");
    let cases: Vec<Refused> = vec![
        // A page of another site: its origin.
        (
            "POST",
            &resign,
            vec![("origin", "http://evil.example")],
            StatusCode::FORBIDDEN,
            "other sites",
        ),
        ("POST", &resign, vec![("origin", "null")], StatusCode::FORBIDDEN, "other sites"),
        // Another port of this machine is another site too.
        (
            "POST",
            &resign,
            vec![("origin", "http://127.0.0.1:8001")],
            StatusCode::FORBIDDEN,
            "origin",
        ),
        (
            "POST",
            &resign,
            vec![("sec-fetch-site", "cross-site")],
            StatusCode::FORBIDDEN,
            "Sec-Fetch-Site",
        ),
        (
            "POST",
            &resign,
            vec![("sec-fetch-site", "same-site")],
            StatusCode::FORBIDDEN,
            "Sec-Fetch-Site",
        ),
        (
            "GET",
            "/api/info",
            vec![("sec-fetch-site", "cross-site")],
            StatusCode::FORBIDDEN,
            "other sites",
        ),
        // A "simple" request, which a browser sends to any site without asking first.
        (
            "POST",
            &resign,
            vec![("content-type", "text/plain")],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "application/json",
        ),
        (
            "POST",
            &resign,
            vec![("content-type", "application/x-www-form-urlencoded")],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type",
        ),
        (
            "POST",
            &resign,
            vec![("content-type", "multipart/form-data; boundary=x")],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type",
        ),
        (
            "POST",
            "/api/games",
            vec![("content-type", "text/plain")],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type",
        ),
        (
            "POST",
            "/api/record",
            vec![("content-type", "text/plain")],
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "octet-stream",
        ),
        // DNS rebinding: another name that points at this machine, another port.
        (
            "POST",
            &resign,
            vec![("host", "rebound.evil.example:8000")],
            StatusCode::MISDIRECTED_REQUEST,
            "127.0.0.1:8000",
        ),
        (
            "GET",
            &view,
            vec![("host", "rebound.evil.example:8000")],
            StatusCode::MISDIRECTED_REQUEST,
            "host",
        ),
        ("GET", "/", vec![("host", "evil.example")], StatusCode::MISDIRECTED_REQUEST, "host"),
        ("GET", "/", vec![("host", "127.0.0.1:9999")], StatusCode::MISDIRECTED_REQUEST, "host"),
    ];
    for (method, uri, headers, want, needle) in cases {
        let a = send(&app, method, uri, &headers, "{}").await;
        assert_eq!(a.status, want, "{method} {uri} {headers:?}: {}", a.body);
        assert!(error_of(&a).contains(needle), "{method} {uri} {headers:?}: {}", a.body);
    }
    // Without a Host, or with two.
    let req = Request::builder().uri("/api/info").body(Body::empty()).unwrap();
    assert_eq!(app.clone().oneshot(req).await.unwrap().status(), StatusCode::MISDIRECTED_REQUEST);
    let a = send(&app, "GET", "/api/info", &[("host", HOST), ("host", HOST)], "").await;
    assert_eq!(a.status, StatusCode::MISDIRECTED_REQUEST);
    // The game is as it was.
    let a = send(&app, "GET", &format!("/api/games/{id}"), &[], "").await;
    assert_eq!((a.status, &a.body["over"]), (StatusCode::OK, &json!(false)));
}

#[tokio::test]
async fn the_pages_own_requests_pass() {
    let app = app_with(Limits::default());
    let own = [
        ("origin", "http://127.0.0.1:8000"),
        ("sec-fetch-site", "same-origin"),
        ("content-type", "application/json; charset=utf-8"),
    ];
    let id = started(&app, &own, json!({})).await;
    let a = send(&app, "POST", &format!("/api/games/{id}/resign"), &own, "").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    // Other loopback names of this machine, and the address typed into the address bar.
    for host in ["localhost:8000", "[::1]:8000"] {
        let origin = format!("http://{host}");
        let headers = [("host", host), ("origin", origin.as_str())];
        assert_eq!(send(&app, "GET", "/api/info", &headers, "").await.status, StatusCode::OK);
    }
    let typed = [("sec-fetch-site", "none")];
    assert_eq!(send(&app, "GET", "/api/info", &typed, "").await.status, StatusCode::OK);
    // A link from another site opens the page (but not the API).
    let link = [("sec-fetch-site", "cross-site")];
    assert_eq!(send(&app, "GET", "/", &link, "").await.status, StatusCode::OK);
}

#[tokio::test]
async fn game_ids_are_unguessable() {
    // Two fresh servers with the same seed: nothing in common.
    let (a, b) = (app_with(Limits::default()), app_with(Limits::default()));
    let (x, y) = (started(&a, &[], json!({})).await, started(&b, &[], json!({})).await);
    assert_ne!(x, y);
    for id in [&x, &y] {
        assert_eq!(id.len(), 32, "{id}");
        assert!(id.bytes().all(|c| c.is_ascii_hexdigit()), "{id}");
    }
    // One server's ids do not open the other's games.
    let a2 = send(&b, "GET", &format!("/api/games/{x}"), &[], "").await;
    assert_eq!(a2.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_browser_gets_an_id_in_a_strict_cookie_and_the_page_cannot_be_framed() {
    let app = app_with(Limits::default());
    let a = send(&app, "GET", "/", &[], "").await;
    assert_eq!(a.status, StatusCode::OK);
    let cookie = a.headers.get("set-cookie").unwrap().to_str().unwrap().to_string();
    assert!(cookie.starts_with("zertz_client="), "{cookie}");
    for part in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(part), "{cookie}");
    }
    assert_eq!(a.headers["x-frame-options"], "DENY");
    assert_eq!(a.headers["content-security-policy"], "frame-ancestors 'none'");
    assert_eq!(a.headers["x-content-type-options"], "nosniff");
    // A browser with an id keeps it.
    let id = cookie.split(';').next().unwrap().to_string();
    let a = send(&app, "GET", "/", &[("cookie", id.as_str())], "").await;
    assert!(a.headers.get("set-cookie").is_none());
}

#[tokio::test]
async fn every_error_is_a_json_message() {
    let app = app_with(Limits::default());
    let big = "x".repeat((4 << 20) + 1);
    let cases: Vec<(&str, &str, &str, StatusCode)> = vec![
        ("GET", "/api/analyze", "", StatusCode::METHOD_NOT_ALLOWED),
        ("DELETE", "/api/games", "", StatusCode::METHOD_NOT_ALLOWED),
        ("PUT", "/", "", StatusCode::METHOD_NOT_ALLOWED),
        ("GET", "/api/games/a/b/c", "", StatusCode::NOT_FOUND),
        ("GET", "/api/games/%FF", "", StatusCode::BAD_REQUEST),
        ("POST", "/api/record", big.as_str(), StatusCode::PAYLOAD_TOO_LARGE),
        ("POST", "/api/record?game=x", "(;)", StatusCode::BAD_REQUEST),
        ("POST", "/api/record?game=1&game=2", "(;)", StatusCode::BAD_REQUEST),
    ];
    for (method, uri, body, want) in cases {
        let a = send(&app, method, uri, &[], body).await;
        assert_eq!(a.status, want, "{method} {uri}: {}", a.body);
        assert!(!error_of(&a).is_empty(), "{method} {uri}");
        assert_eq!(a.headers["content-type"], "application/json", "{method} {uri}");
    }
}

// -------------------------------------------------------------------------------- quotas

#[tokio::test]
async fn one_browsers_games_never_push_out_anothers() {
    let limits = Limits { client_games: 3, games: 5, ..Limits::default() };
    let app = app_with(limits);
    let a = [("cookie", "zertz_client=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")];
    let b = [("cookie", "zertz_client=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")];
    let mut mine = Vec::new();
    for _ in 0..4 {
        mine.push(started(&app, &a, json!({})).await);
    }
    // Past its quota a browser loses its own game left alone longest.
    let status = |id: &String| {
        let app = app.clone();
        let uri = format!("/api/games/{id}");
        async move { send(&app, "GET", &uri, &[], "").await.status }
    };
    assert_eq!(status(&mine[0]).await, StatusCode::NOT_FOUND);
    let theirs = [started(&app, &b, json!({})).await, started(&app, &b, json!({})).await];
    // All browsers' games at the limit: a new game is refused, nobody's game goes.
    let refused = new_game(&app, &b, json!({})).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE, "{}", refused.body);
    assert!(error_of(&refused).contains("5 games"), "{}", refused.body);
    for id in mine[1..].iter().chain(&theirs) {
        assert_eq!(status(id).await, StatusCode::OK);
    }
    // A browser at its own quota still makes room with its own game.
    let fifth = started(&app, &a, json!({})).await;
    assert_eq!(status(&mine[1]).await, StatusCode::NOT_FOUND);
    for id in mine[2..].iter().chain(&theirs).chain([&fifth]) {
        assert_eq!(status(id).await, StatusCode::OK);
    }
}

/// The position text of the 61-ring start.
fn r61() -> String {
    let v = zertz_env::Variant::new(zertz_env::Board::R61, zertz_env::MarbleSet::Standard);
    zertz_env::Position::new(v, zertz_env::Player::P0).to_text()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_past_the_line_are_answered_503_at_once() {
    let limits = Limits { searches: 1, search_queue: 1, ..Limits::default() };
    let app = app_with(limits);
    // Each analysis takes a few tenths of a second; the third finds one running and one waiting.
    let body = json!({"position": r61(), "simulations": 5000}).to_string();
    let calls: Vec<_> = (0..3)
        .map(|_| {
            let (app, body) = (app.clone(), body.clone());
            tokio::spawn(async move { send(&app, "POST", "/api/analyze", &[], &body).await })
        })
        .collect();
    let mut statuses = Vec::new();
    for c in calls {
        let a = c.await.unwrap();
        if a.status != StatusCode::OK {
            assert!(error_of(&a).contains("busy"), "{}", a.body);
        }
        statuses.push(a.status);
    }
    statuses.sort();
    assert_eq!(statuses, [StatusCode::OK, StatusCode::OK, StatusCode::SERVICE_UNAVAILABLE]);
    // A bot that searches takes a slot too; random answers at once whatever runs.
    let searching = started(&app, &[], json!({"opponent": "mcts:20", "colour": "P1"})).await;
    let a = send(&app, "POST", &format!("/api/games/{searching}/bot"), &[], "").await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_stops_at_the_tree_budget() {
    // 8 MiB hold a few hundred simulations from the 61-ring start, not 20,000.
    let app = app_with(Limits { tree_bytes: 8 << 20, ..Limits::default() });
    let body = json!({"position": r61(), "simulations": 20_000, "player": "uniform:1"});
    let a = send(&app, "POST", "/api/analyze", &[], &body.to_string()).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let sims = a.body["simulations"].as_u64().unwrap();
    assert!((50..20_000).contains(&sims), "{sims}");
}

// ------------------------------------------------------------------------------- programs

/// A program in `dir` that speaks enough of the engine protocol to start (`= x` to anything)
/// but never answers `genmove` (`hang_on = "genmove"`) or anything (`hang_on = "*"`); it writes
/// its process id to `dir/pids` when it starts.
#[cfg(unix)]
fn stub_program(dir: &Path, hang_on: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("engine.sh");
    let pids = dir.join("pids");
    // It leaves a file `hung` once it hangs, for a test to wait for.
    let script = format!(
        "#!/bin/sh\necho $$ >> '{}'\nwhile read -r line; do\n  case \"$line\" in\n    \
         {hang_on}) : > '{}'; sleep 1000;;\n    quit) printf '=\\n\\n'; exit 0;;\n    \
         *) printf '= x\\n\\n';;\n  esac\ndone\n",
        pids.display(),
        dir.join("hung").display()
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zertz-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn pids(dir: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(dir.join("pids")).unwrap_or_default();
    text.lines().filter_map(|l| l.trim().parse().ok()).collect()
}

/// Waits up to `secs` for every process of `pids` to be gone.
fn all_gone(pids: &[u32], secs: u64) -> bool {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if pids.iter().all(|p| !Path::new(&format!("/proc/{p}")).exists()) {
            return true;
        }
        if Instant::now() > end {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server that offers the program `program`, whose answers are waited for `answer` at most
/// and end when `stop` is set.
#[cfg(unix)]
fn app_with_program(
    program: &Path,
    limits: Limits,
    answer: Duration,
    stop: &Arc<AtomicBool>,
) -> (axum::Router, String) {
    let spec = format!("cmd:{}", program.display());
    let programs =
        ProgramLimits { stop: Some(stop.clone()), ..ProgramLimits::with_answer_time(answer) };
    let settings = ServeSettings {
        players: vec![spec.parse().unwrap()],
        limits,
        programs,
        ..ServeSettings::default()
    };
    (router(settings, site()), spec)
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_that_never_answer_stay_within_the_limit_and_end() {
    let dir = temp_dir("silent");
    let program = stub_program(&dir, "*");
    let stop = Arc::new(AtomicBool::new(false));
    let limits = Limits { programs: 4, ..Limits::default() };
    let (app, spec) = app_with_program(&program, limits, HOUR, &stop);
    // Ten browsers start a game with the program at once: four programs start (and wait for an
    // answer), the others are refused at once.
    let calls: Vec<_> = (0..10)
        .map(|i| {
            let (app, spec) = (app.clone(), spec.clone());
            tokio::spawn(async move {
                let cookie = format!("zertz_client={i:032x}");
                new_game(&app, &[("cookie", cookie.as_str())], json!({"opponent": spec})).await
            })
        })
        .collect();
    // Until four programs run and the six others are answered (however late a busy machine
    // gets to them: the four wait for the stop).
    let started = Instant::now();
    while pids(&dir).len() < 4 || calls.iter().filter(|c| c.is_finished()).count() < 6 {
        let answered = calls.iter().filter(|c| c.is_finished()).count();
        assert!(started.elapsed() < NEVER, "{} programs, {answered} answered", pids(&dir).len());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(pids(&dir).len(), 4, "processes started");
    // The server stops waiting (as when it stops, or after the answer time): they end.
    stop.store(true, Ordering::SeqCst);
    let mut statuses = Vec::new();
    for c in calls {
        let a = c.await.unwrap();
        assert!(!error_of(&a).is_empty());
        statuses.push(a.status);
    }
    let busy = statuses.iter().filter(|s| **s == StatusCode::SERVICE_UNAVAILABLE).count();
    let failed = statuses.iter().filter(|s| **s == StatusCode::BAD_REQUEST).count();
    assert_eq!((busy, failed), (6, 4), "{statuses:?}");
    assert!(
        all_gone(&pids(&dir), NEVER.as_secs()),
        "a program outlived its game: {:?}",
        pids(&dir)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_that_hangs_does_not_wedge_the_other_games() {
    let dir = temp_dir("hangs");
    let program = stub_program(&dir, "genmove");
    let stop = Arc::new(AtomicBool::new(false));
    let (app, spec) = app_with_program(&program, Limits::default(), HOUR, &stop);
    let hung = started(&app, &[], json!({"opponent": spec, "colour": "P1"})).await;
    let bot = {
        let (app, uri) = (app.clone(), format!("/api/games/{hung}/bot"));
        tokio::spawn(async move { send(&app, "POST", &uri, &[], "").await })
    };
    // Until the program hangs in the bot's request, which holds the game (however late a busy
    // machine gets to it). Not by asking for the game: a request that holds it when the bot's
    // comes would have the bot's refused.
    let waiting = Instant::now();
    while !dir.join("hung").exists() {
        assert!(!bot.is_finished(), "the bot's request ended: {:?}", bot.await.unwrap().body);
        assert!(waiting.elapsed() < NEVER, "the bot's request never came");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Hundreds of requests on the hung game are answered at once (409), holding no thread.
    let burst = async {
        for _ in 0..600 {
            let a = send(&app, "GET", &format!("/api/games/{hung}"), &[], "").await;
            assert_eq!(a.status, StatusCode::CONFLICT, "{}", a.body);
            assert!(error_of(&a).contains("busy"));
        }
        // Other games go on.
        let other = started(&app, &[], json!({"opponent": "greedy"})).await;
        let a =
            send(&app, "POST", &format!("/api/games/{other}/play"), &[], r#"{"move":"Wd4,a1"}"#)
                .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let a = send(&app, "POST", &format!("/api/games/{other}/bot"), &[], "").await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    };
    tokio::time::timeout(NEVER, burst).await.expect("the server is wedged");
    stop.store(true, Ordering::SeqCst);
    let a = bot.await.unwrap();
    assert_eq!(a.status, StatusCode::INTERNAL_SERVER_ERROR, "{}", a.body);
    assert!(error_of(&a).contains("stopped"), "{}", a.body);
    let _ = std::fs::remove_dir_all(&dir);
}

// ------------------------------------------------------------------- connections and stopping

/// Short limits for the tests of connections.
fn quick() -> Limits {
    Limits {
        header_timeout: Duration::from_millis(200),
        body_timeout: Duration::from_millis(200),
        shutdown_grace: Duration::from_millis(300),
        ..Limits::default()
    }
}

/// A server on a free loopback port in a thread of its own; its address, the switch that stops
/// it, and where it tells how long it took to stop once asked.
fn serve(
    settings: ServeSettings,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>, std::sync::mpsc::Receiver<Duration>) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let asked = Arc::new(std::sync::Mutex::new(None));
        let noted = asked.clone();
        let stop = async move {
            let _ = stop_rx.await;
            *noted.lock().unwrap() = Some(Instant::now());
        };
        zertz_serve::run_until("127.0.0.1", 0, settings, |a| ready_tx.send(a).unwrap(), stop)
            .unwrap();
        let at = asked.lock().unwrap().expect("stopped when asked");
        let _ = done_tx.send(at.elapsed());
    });
    let addr = ready_rx.recv_timeout(NEVER).unwrap();
    (addr, stop_tx, done_rx)
}

/// Whether the server closes `stream` within `secs` (reading what it sent first).
fn closed_within(stream: &mut TcpStream, secs: u64) -> (bool, String) {
    stream.set_read_timeout(Some(Duration::from_secs(secs))).unwrap();
    let mut got = Vec::new();
    let closed = stream.read_to_end(&mut got).is_ok();
    (closed, String::from_utf8_lossy(&got).into_owned())
}

#[test]
fn idle_and_half_sent_connections_are_closed() {
    let (addr, stop, stopped) =
        serve(ServeSettings { limits: quick(), ..ServeSettings::default() });
    let host = format!("Host: {addr}\r\n");
    // Connected, nothing sent.
    let mut idle = TcpStream::connect(addr).unwrap();
    // Half of the headers.
    let mut half = TcpStream::connect(addr).unwrap();
    half.write_all(format!("GET /api/info HTTP/1.1\r\n{host}").as_bytes()).unwrap();
    // Half of a body.
    let mut body = TcpStream::connect(addr).unwrap();
    let head = format!(
        "POST /api/games HTTP/1.1\r\n{host}Content-Type: application/json\r\nContent-Length: \
         100\r\n\r\n{{\"board\""
    );
    body.write_all(head.as_bytes()).unwrap();
    // A whole request, then the connection kept alive and left idle.
    let mut kept = TcpStream::connect(addr).unwrap();
    kept.write_all(format!("GET /api/info HTTP/1.1\r\n{host}\r\n").as_bytes()).unwrap();
    for (name, stream) in
        [("idle", &mut idle), ("half headers", &mut half), ("kept alive", &mut kept)]
    {
        let (closed, _) = closed_within(stream, NEVER.as_secs());
        assert!(closed, "{name}: still open");
    }
    let (closed, answer) = closed_within(&mut body, NEVER.as_secs());
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains(r#"{"error":"the request body did not arrive"#), "{answer}");
    assert!(closed);
    stop.send(()).unwrap();
    stopped.recv_timeout(NEVER).expect("the server stops");
}

#[cfg(unix)]
#[test]
fn a_stop_ends_the_server_with_requests_and_connections_open() {
    let dir = temp_dir("stop");
    let program = stub_program(&dir, "genmove");
    let spec = format!("cmd:{}", program.display());
    let settings = ServeSettings {
        players: vec![spec.parse().unwrap()],
        limits: quick(),
        // A program that would be waited for an hour.
        programs: ProgramLimits::with_answer_time(HOUR),
        ..ServeSettings::default()
    };
    let (addr, stop, stopped) = serve(settings);
    let call = |method: &str, path: &str, body: &str| {
        let mut s = TcpStream::connect(addr).unwrap();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        s.write_all(req.as_bytes()).unwrap();
        s
    };
    let mut s = call("POST", "/api/games", &json!({"opponent": spec, "colour": "P1"}).to_string());
    let (_, answer) = closed_within(&mut s, NEVER.as_secs());
    let game: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let id = game["id"].as_str().unwrap();
    // The bot thinks forever; a connection waits idle.
    let _thinking = call("POST", &format!("/api/games/{id}/bot"), "");
    let _idle = TcpStream::connect(addr).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop.send(()).unwrap();
    // Within three times its grace of 0.3 s, or later on a busy machine: only a server that
    // waits for the program takes a minute.
    let took = stopped.recv_timeout(NEVER).expect("the server stops");
    assert!(took < NEVER, "the server took {took:?} to stop");
    assert!(
        all_gone(&pids(&dir), NEVER.as_secs()),
        "a program outlived the server: {:?}",
        pids(&dir)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
