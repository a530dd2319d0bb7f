//! The connections ([`serve`]): HTTP/1.1 by hyper, each connection held to the time limit on
//! headers ([`Limits::header_timeout`], which also closes a kept-alive connection left idle), and
//! a graceful stop that gives open requests [`Limits::shutdown_grace`] and then stops waiting.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

use crate::settings::Limits;

/// How long to wait before accepting again after an error (too many open files, say).
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// Serves `router` on `listener` until `stop` resolves; then lets the open requests end for
/// [`Limits::shutdown_grace`] and returns, whether they have or not (the runtime ends the rest).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &Limits,
    stop: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    let mut stop = std::pin::pin!(stop);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(_) => {
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        let service = TowerToHyperService::new(router.clone());
        let connection = http.serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = watched.await;
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(limits.shutdown_grace, graceful.shutdown()).await;
}
