//! Serving a router on a listener with the limits a public socket needs ([`ConnectionLimits`]),
//! and fairness under connection pressure. The one accept loop of every server of the
//! `sitefile` binary (`sitefile serve`, `sitefile workspace serve`). HTTP/1.1 only. Connections
//! are accepted here and served on the connection [`Workers`], one thread per core.
//!
//! Limits: at most [`ConnectionLimits::max_connections`] connections are served at once; a
//! connection that has not sent a complete request head within
//! [`ConnectionLimits::header_timeout`] — a new one, a slow one, or an idle keep-alive one
//! between requests — is closed; a request body that sends nothing for
//! [`ConnectionLimits::body_timeout`] fails ([`is_body_timeout`]); a stopping server lets open
//! requests finish for at most [`ConnectionLimits::shutdown_timeout`].
//!
//! Fairness: a slot held by a connection that is only *waiting for a request head* — a new
//! connection that sent nothing yet, one trickling its head in (slowloris), or an idle
//! keep-alive one between requests — is reclaimable. When every slot is taken and a new
//! connection is waiting to be served, the connection that has waited longest for its head is
//! closed to make room, once it has waited [`ConnectionLimits::pressure_header_timeout`]
//! (`PLATFORM_PRESSURE_HEADER_TIMEOUT_MS`, 1000 ms by default): the head timeout shrinks under
//! pressure (Envoy's overload manager `reduce_timeouts`), applied on demand and oldest first
//! (nginx reusing its idle connections when `worker_connections` run out). Connections inside a
//! request (head read, answer not yet sent) are never closed for room: the cap still bounds
//! real work, and newcomers wait in the backlog.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;
use tower_http::timeout::RequestBodyTimeout;

use super::ConnectionLimits;
use super::progress::{Guarded, Watched};
use super::slots::{Slots, Tracked};
use super::workers::Workers;

/// Serves `router` on `listener` under `limits` and the fairness rule until `shutdown`
/// resolves, then stops accepting and lets the open connections finish their requests for at
/// most [`ConnectionLimits::shutdown_timeout`].
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &ConnectionLimits,
    shutdown: impl Future<Output = ()>,
) {
    let service = RequestBodyTimeout::new(router, limits.body_timeout);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let slots = Arc::new(Slots::new(
        limits.max_connections,
        limits.pressure_header_timeout,
    ));
    let (stopping, stop) = watch::channel(false);
    let workers = Workers::start();
    tokio::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            biased;
            () = &mut shutdown => break,
            accepted = accept(&listener) => match accepted {
                Some(stream) => stream,
                None => continue,
            },
        };
        let slot = tokio::select! {
            biased;
            () = &mut shutdown => break,
            slot = slots.take() => slot,
        };
        let (tracked, occupied) = slots.opened(slot);
        let (builder, service, stop) = (builder.clone(), service.clone(), stop.clone());
        workers.hand(
            stream,
            Box::new(move |stream| {
                Box::pin(async move {
                    serve_connection(builder, stream, service, tracked, stop).await;
                    drop(occupied);
                })
            }),
        );
    }
    drop(listener);
    let _ = stopping.send(true);
    let drained = tokio::time::timeout(
        limits.shutdown_timeout,
        slots.drained(limits.max_connections),
    )
    .await;
    if drained.is_err() {
        tracing::warn!("connections still open at the shutdown deadline were dropped");
    }
}

/// The next connection, with `TCP_NODELAY` set (stream events are not held back for the
/// peer's ACK); `None` when accepting failed (logged; the caller tries again).
async fn accept(listener: &TcpListener) -> Option<TcpStream> {
    match listener.accept().await {
        Ok((stream, _)) => {
            // Answers and stream events go out when written, not held for the peer's ACK.
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "TCP_NODELAY not set");
            }
            Some(stream)
        }
        Err(error) => {
            // Out of descriptors or a connection reset before it was accepted: pause briefly
            // so a persistent failure does not spin.
            tracing::warn!(%error, "accept failed");
            tokio::time::sleep(Duration::from_millis(50)).await;
            None
        }
    }
}

/// One connection served until it ends, is closed for room, or the server stops (then its
/// request in progress may finish).
async fn serve_connection(
    builder: http1::Builder,
    stream: TcpStream,
    service: RequestBodyTimeout<Router>,
    tracked: Arc<Tracked>,
    mut stop: watch::Receiver<bool>,
) {
    let on_request = tracked.clone();
    let handler = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        on_request.busy();
        let answered = service.clone().oneshot(request);
        let tracked = on_request.clone();
        async move {
            let response = answered.await?;
            Ok::<_, Infallible>(response.map(|body| Body::new(Guarded::new(body, tracked))))
        }
    });
    let io = TokioIo::new(Watched::new(stream, tracked.clone()));
    let connection = builder.serve_connection(io, handler);
    tokio::pin!(connection);
    let mut stopping = *stop.borrow_and_update();
    if stopping {
        connection.as_mut().graceful_shutdown();
    }
    let mut evicted = false;
    loop {
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "connection ended with an error");
                }
                break;
            }
            () = tracked.evict.notified(), if !evicted => {
                if tracked.since().is_none() {
                    // A request began since it was chosen: it keeps its slot.
                    tracked.evicted.store(false, Ordering::Release);
                    continue;
                }
                evicted = true;
                // Closes a silent or idle connection at once (an answer still being written
                // is finished first); a head in progress is dropped with the connection.
                connection.as_mut().graceful_shutdown();
                if tracked.head_begun.load(Ordering::Acquire) {
                    break;
                }
            }
            _ = stop.changed(), if !stopping => {
                stopping = true;
                connection.as_mut().graceful_shutdown();
            }
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
