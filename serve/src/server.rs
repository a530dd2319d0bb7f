//! The HTTP side: routes, the games of every browser, and errors as 4xx answers with a message.
//!
//! | route | what |
//! |---|---|
//! | `GET /` , `/app.js`, `/style.css` | the page (built into the program) |
//! | `GET /api/info` | version, boards, the players offered, limits |
//! | `POST /api/games` | a new game: `{"board":37,"blitz":false,"opponent":"random","colour":"P0"}` (`colour` `P0`, `P1` or `watch`; `opponent_b`: the second bot of a watched game) |
//! | `GET /api/games/{id}` | the game's [`GameView`] |
//! | `POST /api/games/{id}/play` | `{"move":"Wd4,a1"}`: a whole move or one hop |
//! | `POST /api/games/{id}/bot` | the bot to move plays its turn |
//! | `POST /api/games/{id}/undo`, `/resign` | |
//! | `POST /api/analyze` | `{"position":TEXT,"simulations":N,"player":SPEC}`: an [`Analysis`] |
//! | `POST /api/record?game=K` | a record (SGF, or JSON lines of this project) as the body (`Content-Type: application/octet-stream`): its frames |
//!
//! Every `POST` says `Content-Type: application/json` (a record: `application/octet-stream`);
//! every answer is JSON; an error is `{"error": "..."}` with a 4xx status, 503 when the server is
//! at a limit (searches at once, games, programs: try again later), 500 only when a bot
//! fails. What every request passes first (same site, `Host`, `Content-Type`, time and size of
//! the body, the browser's cookie) is in [`crate::guard`]; the games of each browser and their
//! quotas in [`crate::games`]; the searches at once in [`crate::searches`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Router};
use serde::{Deserialize, Serialize};
use zertz_arena::PlayerSpec;
use zertz_arena::analysis::Analysis;
use zertz_arena::players::DEFAULT_SIMULATIONS;
use zertz_env::{Board, Player, Position, Variant};

use crate::games::{Games, Locked};
use crate::guard::{ApiError, Client, Guard, Site, guard};
use crate::records::{self, RecordView};
use crate::searches::Searches;
use crate::session::{BotSettings, GameSession, GameView, Seats, SessionError};
use crate::settings::{
    MAX_BODY_BYTES, MAX_PAGE_DEPTH, MAX_PAGE_MOVE_TIME, MAX_PAGE_SIMULATIONS, ServeSettings,
};

impl From<SessionError> for ApiError {
    fn from(e: SessionError) -> ApiError {
        let status = match e {
            SessionError::Bot(_) => StatusCode::INTERNAL_SERVER_ERROR,
            SessionError::NotYourTurn(_) | SessionError::Over => StatusCode::CONFLICT,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError::new(status, e.to_string())
    }
}

type Answer<T> = Result<axum::Json<T>, ApiError>;

/// The state every request shares.
#[derive(Debug)]
pub(crate) struct App {
    settings: ServeSettings,
    /// What sessions build their bots with (the programs' stop flag included).
    bots: BotSettings,
    pub(crate) games: Games,
    searches: Searches,
    counter: AtomicU64,
    /// Set when the server stops: every wait for a program's answer ends at once.
    pub(crate) stop: Arc<AtomicBool>,
}

impl App {
    pub(crate) fn new(settings: ServeSettings) -> App {
        let stop = settings.programs.stop.clone().unwrap_or_default();
        let mut programs = settings.programs.clone();
        programs.stop = Some(stop.clone());
        let bots = BotSettings {
            models: settings.models.clone(),
            max_tree_bytes: settings.limits.tree_bytes,
            programs,
        };
        App {
            games: Games::new(&settings.limits),
            searches: Searches::new(&settings.limits),
            bots,
            settings,
            counter: AtomicU64::new(1),
            stop,
        }
    }

    /// The seed of a new game's (or analysis's) bots.
    fn next_seed(&self) -> u64 {
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        zertz_env::SplitMix64(self.settings.seed ^ n.wrapping_mul(0xA24B_AED4_963E_E407)).next_u64()
    }

    /// A spec the page names, if the page may use it: a built-in player with at most
    /// [`MAX_PAGE_SIMULATIONS`], [`MAX_PAGE_DEPTH`] or [`MAX_PAGE_MOVE_TIME`], or one of the
    /// offered players.
    fn spec(&self, text: &str) -> Result<PlayerSpec, ApiError> {
        let spec: PlayerSpec = text
            .parse()
            .map_err(|e: zertz_arena::players::SpecError| ApiError::bad(e.to_string()))?;
        if self.settings.players.contains(&spec) {
            return Ok(spec);
        }
        if let Some(time) = spec.own_time() {
            if time > MAX_PAGE_MOVE_TIME {
                return Err(ApiError::bad(format!(
                    "player {spec}: at most {} s per move from the page",
                    MAX_PAGE_MOVE_TIME.as_secs()
                )));
            }
            // A built-in search, or an offered player, at a time of the page's.
            if self.settings.players.contains(spec.untimed()) {
                return Ok(spec);
            }
            return match spec.untimed() {
                PlayerSpec::Mcts(_) | PlayerSpec::Uniform(_) | PlayerSpec::AlphaBeta(_) => Ok(spec),
                other => Err(ApiError::bad(format!(
                    "player {other} is not offered by this server (start it with --player {other})"
                ))),
            };
        }
        match spec {
            PlayerSpec::Random | PlayerSpec::Greedy | PlayerSpec::AlphaBeta(None) => Ok(spec),
            PlayerSpec::AlphaBeta(Some(d)) if d <= MAX_PAGE_DEPTH => Ok(spec),
            PlayerSpec::AlphaBeta(_) => Err(ApiError::bad(format!(
                "player {spec}: at most depth {MAX_PAGE_DEPTH} from the page; give deeper searches \
                 a time, {spec}:time=SECONDS"
            ))),
            PlayerSpec::Mcts(n) | PlayerSpec::Uniform(n) if n <= MAX_PAGE_SIMULATIONS => Ok(spec),
            PlayerSpec::Mcts(_) | PlayerSpec::Uniform(_) => Err(ApiError::bad(format!(
                "player {spec}: at most {MAX_PAGE_SIMULATIONS} simulations from the page"
            ))),
            other => Err(ApiError::bad(format!(
                "player {other} is not offered by this server (start it with --player {other})"
            ))),
        }
    }

    /// Whether `spec` plays `variant`: a network's player where its network was trained for the
    /// board and marble set, every other player everywhere.
    fn plays(&self, spec: &PlayerSpec, variant: Variant) -> bool {
        let Some(model) = spec.model() else { return true };
        self.settings.model_plays.get(model).is_none_or(|p| p.plays(variant))
    }

    /// Refuses a network's player on a board or marble set its network was not trained for.
    fn check_variant(&self, spec: &PlayerSpec, variant: Variant) -> Result<(), ApiError> {
        let plays = spec.model().and_then(|m| self.settings.model_plays.get(m));
        match plays {
            Some(p) if !p.plays(variant) => Err(ApiError::bad(format!(
                "player {spec}: the network plays {}, not {} rings with the {} marbles",
                p.describe(),
                variant.board.rings(),
                variant.marbles.name()
            ))),
            _ => Ok(()),
        }
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

/// Runs `f` on the blocking threads (a bot may think for seconds, a program's player waits
/// for its process); a task that panicked (a bug) is a 500 answer naming `what`.
async fn blocking<T, F>(what: &str, f: F) -> Result<T, ApiError>
where
    F: FnOnce() -> Result<T, ApiError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) if e.is_cancelled() => Err(ApiError::busy("the server is stopping")),
        Err(e) => {
            Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("{what} failed: {e}")))
        }
    }
}

/// Runs `f` on the game `id`, locked (409 while another request has it), on a blocking thread;
/// the game's view.
async fn with_game<F>(locked: Locked, id: String, f: F) -> Answer<IdView>
where
    F: FnOnce(&mut GameSession) -> Result<(), SessionError> + Send + 'static,
{
    let mut locked = locked;
    blocking("the request", move || {
        f(&mut locked.session)?;
        Ok(view(&id, &locked.session))
    })
    .await
}

#[derive(Serialize)]
struct Info {
    version: &'static str,
    boards: Vec<usize>,
    players: Vec<String>,
    /// Players the page suggests besides the offered ones (each one the page may ask for).
    suggested: Vec<String>,
    default_opponent: String,
    max_page_simulations: u32,
}

/// The players the page suggests besides the offered ones: one of each built-in kind, at
/// their defaults, and alpha-beta at a few seconds a move (within the page's time).
fn suggested() -> Vec<String> {
    let long = MAX_PAGE_MOVE_TIME.min(std::time::Duration::from_secs(3));
    [
        PlayerSpec::Random,
        PlayerSpec::Greedy,
        PlayerSpec::Mcts(DEFAULT_SIMULATIONS),
        PlayerSpec::Uniform(DEFAULT_SIMULATIONS),
        PlayerSpec::AlphaBeta(None),
        PlayerSpec::Timed { spec: Box::new(PlayerSpec::AlphaBeta(None)), time: long },
    ]
    .iter()
    .map(ToString::to_string)
    .collect()
}

async fn info(State(app): State<Arc<App>>) -> axum::Json<Info> {
    let players: Vec<String> = app.settings.players.iter().map(ToString::to_string).collect();
    axum::Json(Info {
        version: env!("CARGO_PKG_VERSION"),
        boards: Board::ALL.iter().map(|b| b.rings()).collect(),
        default_opponent: players.first().cloned().unwrap_or_else(|| "random".into()),
        players,
        suggested: suggested(),
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

async fn new_game(
    State(app): State<Arc<App>>,
    Extension(client): Extension<Client>,
    bytes: Bytes,
) -> Answer<IdView> {
    let req: NewGame = body(&bytes)?;
    let board = Board::parse_rings(req.board as u64).map_err(|e| ApiError::bad(e.to_string()))?;
    let variant = Variant::of_blitz(board, req.blitz);
    // The first offered player that plays this board and marble set, else rollout MCTS.
    let default = app
        .settings
        .players
        .iter()
        .find(|s| app.plays(s, variant))
        .cloned()
        .unwrap_or(PlayerSpec::Mcts(DEFAULT_SIMULATIONS));
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
        app.check_variant(spec, variant)?;
    }
    app.games.check_room(&client)?;
    let programs = seats.0.iter().flatten().filter(|s| s.command().is_some()).count();
    let reserved = app.games.reserve_programs(&client, programs).await?;
    let seed = app.next_seed();
    let shared = app.clone();
    // Building a player may start a program (cmd:): off the async threads, and kept from there,
    // so that a game whose request went away is kept (or dropped) all the same.
    blocking("starting the game", move || {
        let session = GameSession::new(variant, seats, seed, &shared.bots)?;
        let v = session.view();
        match shared.games.insert(&client, session, reserved) {
            Ok((id, dropped)) => {
                drop(dropped);
                Ok(axum::Json(IdView { id, view: v }))
            }
            Err((error, dropped)) => {
                drop(dropped);
                Err(error)
            }
        }
    })
    .await
}

async fn get_game(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    let locked = app.games.lock(&id)?;
    with_game(locked, id, |_| Ok(())).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PlayRequest {
    #[serde(rename = "move")]
    text: String,
}

async fn play(State(app): State<Arc<App>>, Path(id): Path<String>, bytes: Bytes) -> Answer<IdView> {
    let req: PlayRequest = body(&bytes)?;
    let locked = app.games.lock(&id)?;
    with_game(locked, id, move |s| s.play(&req.text)).await
}

/// The bot to move plays its turn; one that searches here waits for a search slot first.
async fn bot(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    let locked = app.games.lock(&id)?;
    let slot =
        if locked.session.search_to_move() { Some(app.searches.slot().await?) } else { None };
    with_game(locked, id, move |s| {
        let _slot = slot;
        s.bot_turn()
    })
    .await
}

async fn undo(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    let locked = app.games.lock(&id)?;
    with_game(locked, id, GameSession::undo).await
}

async fn resign(State(app): State<Arc<App>>, Path(id): Path<String>) -> Answer<IdView> {
    let locked = app.games.lock(&id)?;
    with_game(locked, id, GameSession::resign).await
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
    // The named player's search, else that of the first offered network that plays this board
    // and marble set, else rollouts.
    let spec = match &req.player {
        Some(t) if !t.trim().is_empty() => app.spec(t)?,
        _ => app
            .settings
            .players
            .iter()
            .find(|s| s.network().is_some() && app.plays(s, pos.variant()))
            .cloned()
            .unwrap_or(PlayerSpec::Mcts(req.simulations)),
    };
    app.check_variant(&spec, pos.variant())?;
    let models = app.settings.models.clone();
    let (sims, tree_bytes) = (req.simulations, app.settings.limits.tree_bytes);
    let seed = app.next_seed();
    let slot = app.searches.slot().await?;
    blocking("the analysis", move || {
        let _slot = slot;
        let analyzer = spec.analyzer(seed, &models).map_err(|e| ApiError::bad(e.to_string()))?;
        analyzer.analyze_within(&pos, sims, tree_bytes).map(axum::Json).map_err(|e| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("analysis by {spec} failed: {e}"),
            )
        })
    })
    .await
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
    ApiError::new(StatusCode::NOT_FOUND, "no such page")
}

/// The routes of a server reached at `site`, behind [`guard`] (see [`crate::guard`]).
pub fn router(settings: ServeSettings, site: Site) -> Router {
    routes(Arc::new(App::new(settings)), site)
}

/// The routes over `app`.
pub(crate) fn routes(app: Arc<App>, site: Site) -> Router {
    let checks = Arc::new(Guard { site, limits: app.settings.limits.clone() });
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
        .route("/api/games/{id}/bot", post(bot))
        .route("/api/games/{id}/undo", post(undo))
        .route("/api/games/{id}/resign", post(resign))
        .route("/api/analyze", post(analyze))
        .route("/api/record", post(record))
        .fallback(fallback)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(checks, guard))
        .with_state(app)
}
