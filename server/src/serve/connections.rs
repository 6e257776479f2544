//! Accepting and bounding `sitefile serve`'s connections: the limits every server of the binary
//! has ([`ConnectionLimits`]: a head timeout, a body timeout, a connection cap, a shutdown
//! deadline) and fairness under connection pressure.
//!
//! Fairness: a slot held by a connection that is only *waiting for a request head* — a new
//! connection that sent nothing yet, one trickling its head in (slowloris), or an idle
//! keep-alive one between requests — is reclaimable. When every slot is taken and a new
//! connection is waiting to be served, the connection that has waited longest for its head is
//! closed to make room, once it has waited [`PRESSURE_HEADER_TIMEOUT_VAR`] (1000 ms by
//! default): the head timeout shrinks under pressure (Envoy's overload manager `reduce_timeouts`),
//! applied on demand and oldest first (nginx reusing its idle connections when
//! `worker_connections` run out). Connections inside a request (head read, answer not yet sent)
//! are never closed for room: the cap still bounds real work, and those wait in the backlog.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use sitefile_workspace::http::ConnectionLimits;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore, watch};
use tokio::time::Instant;
use tower::ServiceExt;
use tower_http::timeout::RequestBodyTimeout;

/// The variable for how long a connection may wait for a request head while every connection
/// slot is taken and a new connection needs one (milliseconds; 0 closes the longest waiting
/// one at once).
pub const PRESSURE_HEADER_TIMEOUT_VAR: &str = "PLATFORM_PRESSURE_HEADER_TIMEOUT_MS";

/// [`PRESSURE_HEADER_TIMEOUT_VAR`]'s default: a real client's head follows its connection
/// within a round trip, and an idle keep-alive connection closed is one the client reopens.
pub const DEFAULT_PRESSURE_HEADER_TIMEOUT: Duration = Duration::from_millis(1000);

/// The shortest pause of the accept loop between two looks for a reclaimable slot.
const RECHECK_FLOOR: Duration = Duration::from_millis(20);

/// [`PRESSURE_HEADER_TIMEOUT_VAR`] from `lookup` (a variable name to its non-empty value), or
/// its default; a value that is not a number is an error naming the variable.
pub fn pressure_header_timeout(
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Duration, String> {
    match lookup(PRESSURE_HEADER_TIMEOUT_VAR) {
        None => Ok(DEFAULT_PRESSURE_HEADER_TIMEOUT),
        Some(value) => value
            .trim()
            .parse::<u64>()
            .map(Duration::from_millis)
            .map_err(|_| format!("{PRESSURE_HEADER_TIMEOUT_VAR} is invalid: not a number")),
    }
}

/// What the accept loop knows of one open connection.
struct Tracked {
    id: u64,
    /// Since when it has been waiting for a request head; `None` while inside a request.
    waiting_since: Mutex<Option<Instant>>,
    /// Whether bytes of a head came in while waiting (a head in progress, maybe a slowloris).
    head_begun: AtomicBool,
    /// Whether it was chosen to make room (it is not chosen twice).
    evicted: AtomicBool,
    /// Tells the connection's task to close it.
    evict: Notify,
}

impl Tracked {
    fn new(id: u64) -> Tracked {
        Tracked {
            id,
            waiting_since: Mutex::new(Some(Instant::now())),
            head_begun: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            evict: Notify::new(),
        }
    }

    /// A request head was read: the connection is working, never closed for room.
    fn busy(&self) {
        *self.waiting_since.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.head_begun.store(false, Ordering::Release);
    }

    /// The answer was sent: the connection waits for its next head from now.
    fn waiting(&self) {
        self.head_begun.store(false, Ordering::Release);
        *self.waiting_since.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
    }

    fn since(&self) -> Option<Instant> {
        *self.waiting_since.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes arrived; while waiting, they are a head in progress.
    fn read_some(&self) {
        if self.since().is_some() {
            self.head_begun.store(true, Ordering::Release);
        }
    }
}

/// The open connections and their slots.
struct Slots {
    permits: Arc<Semaphore>,
    open: Mutex<HashMap<u64, Arc<Tracked>>>,
    next_id: AtomicU64,
    pressure_header_timeout: Duration,
}

impl Slots {
    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<Tracked>>> {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for a new connection: a free one, else the one of the connection that has waited
    /// longest for a head, once it has waited the pressure head timeout; else the first to free.
    async fn take(&self) -> OwnedSemaphorePermit {
        loop {
            if let Ok(permit) = self.permits.clone().try_acquire_owned() {
                return permit;
            }
            let recheck = self.reclaim().max(RECHECK_FLOOR);
            tokio::select! {
                permit = self.permits.clone().acquire_owned() => {
                    if let Ok(permit) = permit {
                        return permit;
                    }
                }
                () = tokio::time::sleep(recheck) => {}
            }
        }
    }

    /// Closes the connection that has waited longest for a head when it has waited long
    /// enough; how long until the next look is worth it.
    fn reclaim(&self) -> Duration {
        let now = Instant::now();
        let open = self.open();
        let oldest = open
            .values()
            .filter(|c| !c.evicted.load(Ordering::Acquire))
            .filter_map(|c| c.since().map(|since| (since, c)))
            .min_by_key(|(since, c)| (*since, c.id));
        let Some((since, connection)) = oldest else {
            return self.pressure_header_timeout;
        };
        let due = since + self.pressure_header_timeout;
        if due > now {
            return due - now;
        }
        connection.evicted.store(true, Ordering::Release);
        connection.evict.notify_one();
        tracing::debug!(
            waited_ms = (now - since).as_millis() as u64,
            "every connection slot is taken: closing the connection waiting longest for a request head"
        );
        // The slot frees as soon as its task sees the notice; look again if it does not.
        self.pressure_header_timeout
    }
}

/// Serves `router` on `listener` under `limits` and the fairness rule until `shutdown`
/// resolves, then stops accepting and lets the open connections finish their requests for at
/// most [`ConnectionLimits::shutdown_timeout`]. HTTP/1.1 only.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    limits: &ConnectionLimits,
    pressure_header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let service = RequestBodyTimeout::new(router, limits.body_timeout);
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let slots = Arc::new(Slots {
        permits: Arc::new(Semaphore::new(limits.max_connections)),
        open: Mutex::new(HashMap::new()),
        next_id: AtomicU64::new(0),
        pressure_header_timeout,
    });
    let (stopping, stop) = watch::channel(false);
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
        let tracked = Arc::new(Tracked::new(slots.next_id.fetch_add(1, Ordering::Relaxed)));
        slots.open().insert(tracked.id, tracked.clone());
        let connection = serve_connection(
            builder.clone(),
            stream,
            service.clone(),
            tracked,
            stop.clone(),
        );
        let slots = slots.clone();
        tokio::spawn(async move {
            let id = connection.await;
            slots.open().remove(&id);
            drop(slot);
        });
    }
    drop(listener);
    let _ = stopping.send(true);
    let all = u32::try_from(limits.max_connections).unwrap_or(u32::MAX);
    let drained = tokio::time::timeout(
        limits.shutdown_timeout,
        slots.permits.clone().acquire_many_owned(all),
    )
    .await;
    if drained.is_err() {
        tracing::warn!("connections still open at the shutdown deadline were dropped");
    }
}

/// The next connection; `None` when accepting failed (logged; the caller tries again).
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
/// request in progress may finish); its id.
async fn serve_connection(
    builder: http1::Builder,
    stream: TcpStream,
    service: RequestBodyTimeout<Router>,
    tracked: Arc<Tracked>,
    mut stop: watch::Receiver<bool>,
) -> u64 {
    let id = tracked.id;
    let on_request = tracked.clone();
    let handler = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
        on_request.busy();
        let answered = service.clone().oneshot(request);
        let tracked = on_request.clone();
        async move {
            let response = answered.await?;
            let answer_sent = AnswerSent(tracked);
            Ok::<_, Infallible>(response.map(|body| {
                Body::new(Guarded {
                    body,
                    _sent: answer_sent,
                })
            }))
        }
    });
    let io = TokioIo::new(Watched {
        stream,
        tracked: tracked.clone(),
    });
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
    id
}

/// Marks its connection waiting for the next head when dropped: hyper drops an answer's body
/// once it has written its end (or gave up on it).
struct AnswerSent(Arc<Tracked>);

impl Drop for AnswerSent {
    fn drop(&mut self) {
        self.0.waiting();
    }
}

/// An answer's body, and what its end means for its connection.
struct Guarded {
    body: Body,
    _sent: AnswerSent,
}

impl http_body::Body for Guarded {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket, noting the bytes that come while it waits for a head.
struct Watched {
    stream: TcpStream,
    tracked: Arc<Tracked>,
}

impl AsyncRead for Watched {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.tracked.read_some();
        }
        polled
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pressure_head_timeout_has_a_default_and_a_bad_value_names_its_variable() {
        assert_eq!(
            pressure_header_timeout(|_| None).unwrap(),
            DEFAULT_PRESSURE_HEADER_TIMEOUT
        );
        let set = |value: &'static str| move |_: &str| Some(value.to_string());
        assert_eq!(
            pressure_header_timeout(set("250")).unwrap(),
            Duration::from_millis(250)
        );
        assert_eq!(pressure_header_timeout(set("0")).unwrap(), Duration::ZERO);
        let error = pressure_header_timeout(set("soon")).unwrap_err();
        assert!(error.contains(PRESSURE_HEADER_TIMEOUT_VAR), "{error}");
    }
}
