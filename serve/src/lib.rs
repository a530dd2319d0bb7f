//! The web board of zertz (`zertz serve`): play against any player with the mouse or the
//! keyboard, watch two bots play, step through a record, and see a network's analysis of the
//! shown position, in a browser.
//!
//! - [`session`]: one game (a person and a bot, or two bots), undo and resignation, and
//!   the view the page draws; no HTTP.
//! - [`records`]: SGF and JSON-lines records read into frames to step through.
//! - [`server`]: the routes (axum) and their handlers.
//! - [`guard`]: what every request passes first: same site, `Host`, `Content-Type`, the body's
//!   time and size, the browser's cookie; every error as JSON.
//! - [`games`]: the games of every browser, each browser's quota, the programs' processes.
//! - [`searches`]: how many searches run at once, how many wait.
//! - [`settings`]: what the server offers and its limits, with their defaults.
//! - [`listener`]: the connections, their time limits and the graceful stop.
//! - [`run`]: binds an address and serves until Ctrl-C or SIGTERM.
//!
//! The page (HTML, JavaScript, CSS, an SVG icon) is built into the program ([`assets`]): no build
//! step, nothing fetched from elsewhere. Its elements that tests use are stable: every ring is an
//! element with `data-cell="d4"`, `data-marble` and `data-removed`; `#move`, `#moves`, `#status`,
//! `#new-game`, `#board`, `#blitz`, `#opponent`, `#colour`, `#undo` (see docs/web.md).

pub mod assets;
pub mod games;
pub mod guard;
pub mod listener;
pub mod records;
pub mod searches;
pub mod server;
pub mod session;
pub mod settings;
pub mod token;
pub mod view;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

pub use guard::Site;
pub use server::router;
pub use settings::{Limits, NetworkPlays, ServeSettings};

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A limit that allows nothing.
    #[error("bad server limit: {0}")]
    Limit(String),
    /// The address cannot be listened on (taken, or not this machine's).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime or the connection loop failed.
    #[error("the server failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Serves the page and its API on `host:port` (port 0: any free port) until Ctrl-C or SIGTERM;
/// `ready` is told the address once it listens.
pub fn run(
    host: &str,
    port: u16,
    settings: ServeSettings,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    run_until(host, port, settings, ready, stop_signal())
}

/// [`run`] until `stop` resolves. Then the server stops accepting, gives open requests
/// [`Limits::shutdown_grace`] to end, stops the programs' waits, drops every game (their
/// programs end), and returns within three times the grace at most, whatever still runs (the
/// runtime does not wait for a blocking task past the grace).
pub fn run_until(
    host: &str,
    port: u16,
    settings: ServeSettings,
    ready: impl FnOnce(SocketAddr),
    stop: impl Future<Output = ()> + Send,
) -> Result<(), ServeError> {
    settings.limits.check().map_err(ServeError::Limit)?;
    let limits = settings.limits.clone();
    let grace = limits.shutdown_grace;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let served = runtime.block_on(async move {
        // An IPv6 address is written in brackets before its port.
        let addr = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|source| ServeError::Bind { addr: addr.clone(), source })?;
        let local = listener.local_addr()?;
        let app = Arc::new(server::App::new(settings));
        let routes = server::routes(app.clone(), Site::new(host, local.port()));
        ready(local);
        listener::serve(listener, routes, &limits, stop).await;
        // Requests still open wait for programs: they end now, and so do the games.
        app.stop.store(true, Ordering::SeqCst);
        let games = app.games.take_all();
        let _ = tokio::time::timeout(limits.shutdown_grace, games.drop_off_thread()).await;
        Ok::<(), ServeError>(())
    });
    // Blocking tasks still running (a bot thinking) are not waited for past the grace.
    runtime.shutdown_timeout(grace);
    served
}

/// Resolves on Ctrl-C or SIGTERM.
async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
