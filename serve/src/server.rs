//! The HTTP side: routes, the games of every browser, and errors as 4xx answers with a message.
//!
//! | route | what |
//! |---|---|
//! | `GET /` , `/app.js`, `/style.css` | the page (built into the program) |
//! | `GET /api/info` | version, boards, the players offered, limits |
//! | `POST /api/games` | a new game: `{"board":37,"blitz":false,"opponent":"random","colour":"P0"}` (`colour` `P0`, `P1` or `watch`; `opponent_b`: the second engine of a watched game) |
//! | `GET /api/games/{id}` | the game's [`GameView`] |
//! | `POST /api/games/{id}/play` | `{"move":"Wd4,a1"}`: a whole move or one hop |
//! | `POST /api/games/{id}/engine` | the engine to move plays its turn |
//! | `POST /api/games/{id}/undo`, `/resign` | |
//! | `POST /api/analyze` | `{"position":TEXT,"simulations":N,"player":SPEC}`: an [`Analysis`] |
//! | `POST /api/record?game=K` | a record (SGF, or JSON lines of this project) as the body: its frames |
//!
//! Every answer is JSON; an error is `{"error": "..."}` with a 4xx status (5xx only when an
//! engine fails).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::{Deserialize, Serialize};
use zertz_arena::analysis::Analysis;
use zertz_arena::{Models, PlayerSpec};
use zertz_env::{Board, MarbleSet, Player, Position, Variant};

use crate::records::{self, RecordView};
use crate::session::{GameSession, GameView, Seats, SessionError};

/// Most simulations the page may ask of a search (`mcts:N`, `uniform:N`, analysis) that was not
/// offered on the command line: a browser cannot tie up the machine for minutes.
pub const MAX_PAGE_SIMULATIONS: u32 = 20_000;
/// Games kept at once; past it the one left alone longest is dropped.
pub const MAX_GAMES: usize = 1000;
/// Games with a program (`cmd:`, a process for each game) kept at once; past it the one left
/// alone longest is dropped and its processes end.
pub const MAX_PROGRAM_GAMES: usize = 16;
/// Largest request body (a record file).
pub const MAX_BODY_BYTES: usize = 4 << 20;

/// What the server offers.
#[derive(Clone, Debug)]
pub struct ServeSettings {
    /// Players offered besides the built-in ones (`random`, `greedy`, `mcts:N`, `uniform:N`): the
    /// only networks (`nn:`) and programs (`cmd:`) a page may name. The first is the default
    /// opponent.
    pub players: Vec<PlayerSpec>,
    /// Their networks, loaded.
    pub models: Models,
    /// The boards each network plays (its metadata's), by model file: a game or an analysis on
    /// another board is refused with a message. A network missing here plays every board.
    pub model_boards: BTreeMap<String, Vec<usize>>,
    /// Seed of the engines (each game gets its own from it).
    pub seed: u64,
}

/// An error answer: a status and a message.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
}

impl ApiError {
    fn bad(message: impl Into<String>) -> ApiError {
        ApiError { status: StatusCode::BAD_REQUEST, message: message.into() }
    }
}

impl From<SessionError> for ApiError {
    fn from(e: SessionError) -> ApiError {
        let status = match e {
            SessionError::Engine(_) => StatusCode::INTERNAL_SERVER_ERROR,
            SessionError::NotYourTurn(_) | SessionError::Over => StatusCode::CONFLICT,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError { status, message: e.to_string() }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        #[derive(Serialize)]
        struct Body {
            error: String,
        }
        (self.status, axum::Json(Body { error: self.message })).into_response()
    }
}

type Answer<T> = Result<axum::Json<T>, ApiError>;

struct Entry {
    session: Arc<Mutex<GameSession>>,
    used: Instant,
    /// Whether an engine of the game is a program (`cmd:`).
    programs: bool,
}

/// The state every request shares.
struct App {
    settings: ServeSettings,
    games: Mutex<HashMap<String, Entry>>,
    counter: AtomicU64,
}

impl App {
    fn next_seed(&self) -> u64 {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        zertz_env::SplitMix64(self.settings.seed ^ n.wrapping_mul(0xA24B_AED4_963E_E407)).next_u64()
    }

    /// A spec the page names, if the page may use it: a built-in player with at most
    /// [`MAX_PAGE_SIMULATIONS`], or one of the offered players.
    fn spec(&self, text: &str) -> Result<PlayerSpec, ApiError> {
        let spec: PlayerSpec = text
            .parse()
            .map_err(|e: zertz_arena::players::SpecError| ApiError::bad(e.to_string()))?;
        if self.settings.players.contains(&spec) {
            return Ok(spec);
        }
        match spec {
            PlayerSpec::Random | PlayerSpec::Greedy => Ok(spec),
            PlayerSpec::Mcts(n) | PlayerSpec::Uniform(n) if n <= MAX_PAGE_SIMULATIONS => Ok(spec),
            PlayerSpec::Mcts(_) | PlayerSpec::Uniform(_) => Err(ApiError::bad(format!(
                "player {spec}: at most {MAX_PAGE_SIMULATIONS} simulations from the page"
            ))),
            other => Err(ApiError::bad(format!(
                "player {other} is not offered by this server (start it with --player {other})"
            ))),
        }
    }

    /// Refuses a network's player on a board its network was not trained for.
    fn check_board(&self, spec: &PlayerSpec, board: Board) -> Result<(), ApiError> {
        let Some(model) = spec.model() else { return Ok(()) };
        match self.settings.model_boards.get(model) {
            Some(boards) if !boards.contains(&board.rings()) => Err(ApiError::bad(format!(
                "player {spec}: the network plays the {} boards, not {}",
                boards.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "),
                board.rings()
            ))),
            _ => Ok(()),
        }
    }

    fn session(&self, id: &str) -> Result<Arc<Mutex<GameSession>>, ApiError> {
        let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
        match games.get_mut(id) {
            Some(e) => {
                e.used = Instant::now();
                Ok(e.session.clone())
            }
            None => Err(ApiError {
                status: StatusCode::NOT_FOUND,
                message: format!("no game {id:?} (it ended long ago, or the server restarted)"),
            }),
        }
    }

    /// Keeps a new game; drops the one left alone longest past [`MAX_GAMES`], and past
    /// [`MAX_PROGRAM_GAMES`] games with a program (`cmd:`, a process each) the oldest of those.
    fn insert(&self, session: GameSession) -> String {
        let id = format!("{:016x}", self.next_seed());
        let programs = session.runs_programs();
        let mut dropped = Vec::new();
        {
            let mut games = self.games.lock().unwrap_or_else(PoisonError::into_inner);
            let oldest = |games: &HashMap<String, Entry>, programs_only: bool| {
                games
                    .iter()
                    .filter(|(_, e)| !programs_only || e.programs)
                    .min_by_key(|(_, e)| e.used)
                    .map(|(k, _)| k.clone())
            };
            if programs && games.values().filter(|e| e.programs).count() >= MAX_PROGRAM_GAMES {
                if let Some(k) = oldest(&games, true) {
                    dropped.extend(games.remove(&k));
                }
            }
            if games.len() >= MAX_GAMES {
                if let Some(k) = oldest(&games, false) {
                    dropped.extend(games.remove(&k));
                }
            }
            let session = Arc::new(Mutex::new(session));
            games.insert(id.clone(), Entry { session, used: Instant::now(), programs });
        }
        if !dropped.is_empty() {
            // A program's player waits for its process to end: not on the async threads.
            tokio::task::spawn_blocking(move || drop(dropped));
        }
        id
    }
}

/// A game's view with its id.
#[derive(Serialize)]
struct IdView {
    id: String,
    #[serde(flatten)]
    view: GameView,
}

fn view(id: &str, session: &GameSession) -> axum::Json<IdView> {
    axum::Json(IdView { id: id.to_string(), view: session.view() })
}

/// Reads a JSON body into `T`, with the reason in the error.
fn body<T: for<'de> Deserialize<'de>>(bytes: &Bytes) -> Result<T, ApiError> {
    serde_json::from_slice(bytes).map_err(|e| ApiError::bad(format!("bad request body: {e}")))
}

/// Runs `f` on the game `id` on a blocking thread (an engine may think for seconds).
async fn with_game<F>(app: Arc<App>, id: String, f: F) -> Answer<IdView>
where
    F: FnOnce(&mut GameSession) -> Result<(), SessionError> + Send + 'static,
{
    let session = app.session(&id)?;
    tokio::task::spawn_blocking(move || {
        let mut s = session.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut s)?;
        Ok(view(&id, &s))
    })
    .await
    .map_err(|e| blocking_failed("the request", &e))?
}

/// A blocking task that panicked (a bug): a 500 answer naming what failed.
fn blocking_failed(what: &str, e: &tokio::task::JoinError) -> ApiError {
    ApiError { status: StatusCode::INTERNAL_SERVER_ERROR, message: format!("{what} failed: {e}") }
}

#[derive(Serialize)]
struct Info {
    version: &'static str,
    boards: Vec<usize>,
    players: Vec<String>,
    default_opponent: String,
    max_page_simulations: u32,
}

async fn info(State(app): State<Arc<App>>) -> axum::Json<Info> {
    let players: Vec<String> = app.settings.players.iter().map(ToString::to_string).collect();
    axum::Json(Info {
        version: env!("CARGO_PKG_VERSION"),
        boards: Board::ALL.iter().map(|b| b.rings()).collect(),
        default_opponent: players.first().cloned().unwrap_or_else(|| "random".into()),
        players,
        max_page_simulations: MAX_PAGE_SIMULATIONS,
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewGame {
    #[serde(default = "default_board")]
    board: usize,
    #[serde(default)]
    blitz: bool,
    opponent: Option<String>,
    opponent_b: Option<String>,
    #[serde(default = "default_colour")]
    colour: String,
}

fn default_board() -> usize {
    37
}

fn default_colour() -> String {
    "P0".into()
}

async fn new_game(State(app): State<Arc<App>>, bytes: Bytes) -> Answer<IdView> {
    let req: NewGame = body(&bytes)?;
    let board = Board::from_rings(req.board).ok_or_else(|| {
        ApiError::bad(format!("no {}-ring board: 37, 40, 43, 44, 48 or 61", req.board))
    })?;
    let set = if req.blitz { MarbleSet::Blitz } else { MarbleSet::Standard };
    let default = app.settings.players.first().cloned().unwrap_or(PlayerSpec::Random);
    let opponent = match &req.opponent {
        Some(t) if !t.trim().is_empty() => app.spec(t)?,
        _ => default,
    };
    let seats = match req.colour.to_ascii_uppercase().as_str() {
        "P0" => Seats::against(opponent, Player::P0),
        "P1" => Seats::against(opponent, Player::P1),
        "WATCH" => {
            let second = match &req.opponent_b {
                Some(t) if !t.trim().is_empty() => app.spec(t)?,
                _ => opponent.clone(),
            };
            Seats::watch(opponent, second)
        }
        other => return Err(ApiError::bad(format!("colour {other:?}: P0, P1 or watch"))),
    };
    for spec in seats.0.iter().flatten() {
        app.check_board(spec, board)?;
    }
    let seed = app.next_seed();
    let models = app.settings.models.clone();
    // Building a player may start a program (cmd:): off the async threads.
    let session = tokio::task::spawn_blocking(move || {
        GameSession::new(Variant::new(board, set), seats, seed, &models)
    })
    .await
    .map_err(|e| blocking_failed("starting the game", &e))??;
    let v = session.view();
    let id = app.insert(session);
    Ok(axum::Json(IdView { id, view: v }))
}

async fn get_game(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    with_game(app, id, |_| Ok(())).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayRequest {
    #[serde(rename = "move")]
    text: String,
}

async fn play(State(app): State<Arc<App>>, Path(id): Path<String>, bytes: Bytes) -> Answer<IdView> {
    let req: PlayRequest = body(&bytes)?;
    with_game(app, id, move |s| s.play(&req.text)).await
}

async fn engine(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    with_game(app, id, GameSession::engine_turn).await
}

async fn undo(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    with_game(app, id, GameSession::undo).await
}

async fn resign(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    with_game(app, id, GameSession::resign).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnalyzeRequest {
    position: String,
    #[serde(default = "default_analysis_simulations")]
    simulations: u32,
    player: Option<String>,
}

fn default_analysis_simulations() -> u32 {
    800
}

async fn analyze(State(app): State<Arc<App>>, bytes: Bytes) -> Answer<Analysis> {
    let req: AnalyzeRequest = body(&bytes)?;
    let pos = Position::from_text(&req.position)
        .map_err(|e| ApiError::bad(format!("bad position: {e}")))?;
    if pos.is_over() {
        return Err(ApiError::bad("the game is over in this position"));
    }
    if req.simulations == 0 || req.simulations > MAX_PAGE_SIMULATIONS {
        return Err(ApiError::bad(format!("simulations must be from 1 to {MAX_PAGE_SIMULATIONS}")));
    }
    // The named player's search, else the first offered network's, else rollouts.
    let spec = match &req.player {
        Some(t) if !t.trim().is_empty() => app.spec(t)?,
        _ => app
            .settings
            .players
            .iter()
            .find(|s| s.network().is_some())
            .cloned()
            .unwrap_or(PlayerSpec::Mcts(req.simulations)),
    };
    app.check_board(&spec, pos.board())?;
    let models = app.settings.models.clone();
    let sims = req.simulations;
    let seed = app.next_seed();
    tokio::task::spawn_blocking(move || {
        let analyzer = spec.analyzer(seed, &models).map_err(|e| ApiError::bad(e.to_string()))?;
        analyzer.analyze(&pos, sims).map(axum::Json).map_err(|e| ApiError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            message: format!("analysis by {spec} failed: {e}"),
        })
    })
    .await
    .map_err(|e| blocking_failed("the analysis", &e))?
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecordQuery {
    #[serde(default)]
    game: usize,
}

async fn record(Query(q): Query<RecordQuery>, bytes: Bytes) -> Answer<RecordView> {
    let text =
        std::str::from_utf8(&bytes).map_err(|_| ApiError::bad("the record is not UTF-8 text"))?;
    records::read(text, q.game).map(axum::Json).map_err(|e| ApiError::bad(e.to_string()))
}

fn asset(kind: &'static str, text: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-cache")], text).into_response()
}

async fn fallback() -> ApiError {
    ApiError { status: StatusCode::NOT_FOUND, message: "no such page".into() }
}

/// The routes of the server.
pub fn router(settings: ServeSettings) -> Router {
    let app =
        Arc::new(App { settings, games: Mutex::new(HashMap::new()), counter: AtomicU64::new(1) });
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", crate::assets::INDEX) }))
        .route(
            "/app.js",
            get(|| async { asset("text/javascript; charset=utf-8", crate::assets::APP) }),
        )
        .route(
            "/style.css",
            get(|| async { asset("text/css; charset=utf-8", crate::assets::STYLE) }),
        )
        .route("/favicon.svg", get(|| async { asset("image/svg+xml", crate::assets::ICON) }))
        .route("/api/info", get(info))
        .route("/api/games", post(new_game))
        .route("/api/games/{id}", get(get_game))
        .route("/api/games/{id}/play", post(play))
        .route("/api/games/{id}/engine", post(engine))
        .route("/api/games/{id}/undo", post(undo))
        .route("/api/games/{id}/resign", post(resign))
        .route("/api/analyze", post(analyze))
        .route("/api/record", post(record))
        .fallback(fallback)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .with_state(app)
}
