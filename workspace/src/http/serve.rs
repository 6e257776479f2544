//! Serving a router on a listener with the limits a public socket needs: at most
//! [`ConnectionLimits::max_connections`] connections at once (further clients wait in the
//! listen backlog), a connection that has not sent a complete request head within
//! [`ConnectionLimits::header_timeout`] — a new one, a slow one, or an idle keep-alive one
//! between requests — is closed, and a request body that sends nothing for
//! [`ConnectionLimits::body_timeout`] fails. HTTP/1.1 only. Shared by every server of the
//! `sitefile` binary.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tower_http::timeout::RequestBodyTimeout;

use super::ConnectionLimits;

/// Serves `router` on `listener` under `config`'s connection limits until `shutdown`
/// resolves, then stops accepting and lets the open connections finish their requests for
/// at most [`ConnectionLimits::shutdown_timeout`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    config: &ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let service = TowerToHyperService::new(RequestBodyTimeout::new(router, config.body_timeout));
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(config.header_timeout)
        .keep_alive(true);
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            accepted = accept(&listener, &slots) => accepted,
        };
        let Some((stream, slot)) = accepted else {
            continue;
        };
        let connection =
            graceful.watch(builder.serve_connection(TokioIo::new(stream), service.clone()));
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection ended with an error");
            }
            drop(slot);
        });
    }
    drop(listener);
    if tokio::time::timeout(config.shutdown_timeout, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("connections still open at the shutdown deadline were dropped");
    }
}

/// The next connection once a slot is free; `None` when accepting failed (logged; the
/// caller tries again).
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> Option<(tokio::net::TcpStream, tokio::sync::OwnedSemaphorePermit)> {
    let slot = slots.clone().acquire_owned().await.ok()?;
    match listener.accept().await {
        Ok((stream, _)) => {
            // Answers and stream events go out when written, not held for the peer's ACK.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "TCP_NODELAY not set");
            }
            Some((stream, slot))
        }
        Err(error) => {
            // Out of descriptors or a connection reset before it was accepted: pause briefly
            // so a persistent failure does not spin.
            tracing::warn!(%error, "accept failed");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            None
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}

/// Whether reading a request body failed because the body stopped arriving for
/// [`ConnectionLimits::body_timeout`] (a server answers 408 Request Timeout then).
pub fn is_body_timeout(error: &(dyn std::error::Error + 'static)) -> bool {
    std::iter::successors(Some(error), |e| e.source())
        .any(|e| e.is::<tower_http::timeout::TimeoutError>())
}
