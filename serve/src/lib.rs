//! The web board of zertz (`zertz serve`): play against any player with the mouse or the
//! keyboard, watch two engines play, step through a record, and see a network's analysis of the
//! shown position, in a browser.
//!
//! - [`session`]: one game (a person and an engine, or two engines), undo and resignation, and
//!   the view the page draws; no HTTP.
//! - [`records`]: SGF and JSON-lines records read into frames to step through.
//! - [`server`]: the routes (axum), the games of every browser, errors as 4xx answers.
//! - [`run`]: binds an address and serves until Ctrl-C.
//!
//! The page (HTML, JavaScript, CSS, an SVG icon) is built into the program ([`assets`]): no build
//! step, nothing fetched from elsewhere. Its elements that tests use are stable: every ring is an
//! element with `data-cell="d4"`, `data-marble` and `data-removed`; `#move`, `#moves`, `#status`,
//! `#new-game`, `#board`, `#blitz`, `#opponent`, `#colour`, `#undo` (see the README).

pub mod assets;
pub mod records;
pub mod server;
pub mod session;

use std::net::SocketAddr;

pub use server::{ServeSettings, router};

/// Why the server could not run.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
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
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let addr = format!("{host}:{port}");
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|source| ServeError::Bind { addr: addr.clone(), source })?;
        ready(listener.local_addr()?);
        axum::serve(listener, router(settings)).with_graceful_shutdown(stop()).await?;
        Ok(())
    })
}

/// Resolves on Ctrl-C or SIGTERM.
async fn stop() {
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
