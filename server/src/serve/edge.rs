//! The edge cache in front of the origin: a driver of the core's edge exchange
//! ([`EdgeExchange`]), which decides every step — look up, serve HIT or STALE, refresh in the
//! background, collapse concurrent misses, stand a copy in for a failed origin, store, evict,
//! respond. This module does the I/O each step names: the store (memory or Redis), the origin,
//! the clock, the waiting of collapsed followers, and the bytes, streamed — an origin answer goes
//! to the visitor as it arrives, and into the store at the same time up to [`MAX_STORED_BYTES`].

use super::header_text;
use super::origin::{Opened, Origin, OriginRequest};
use super::store::{Store, Stored};
use axum::body::{Body, Bytes};
use axum::http::HeaderMap;
use http_body::{Body as HttpBody, Frame, SizeHint};
use sitefile_core::{
    BodySource, EdgeExchange, EdgeHints, ExchangeAnswer, ExchangeStep, OriginAnswer, PurgeScope,
    Request, ResponseHeaders, Site, StoreCopy, StoredHead,
};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::watch;

/// The edge's clock: seconds since the Unix epoch.
pub type Clock = Box<dyn Fn() -> f64 + Send + Sync>;

/// The most bytes of one origin answer kept in the store as it streams to the visitor: past it
/// the copy is given up (the visitor still gets every byte).
pub const MAX_STORED_BYTES: usize = 8 * 1024 * 1024;

/// A response as the edge answers it: a stored copy, the origin's answer streaming, or no body.
pub struct EdgeReply {
    /// The status code.
    pub status: u16,
    /// The headers, in order.
    pub headers: HeaderMap,
    /// The body.
    pub body: Body,
}

/// The edge cache of one site in front of one origin.
pub struct Edge {
    site: Arc<Site>,
    origin: Origin,
    store: Box<dyn Store>,
    /// The flights this server leads, by the core's flight id: followers watch for `true`, or
    /// for the sender to go (a leader given up).
    flights: Mutex<HashMap<u64, watch::Sender<bool>>>,
    clock: Clock,
}

/// The lead of a flight: settled once, or given up when dropped — either way its followers wake.
struct Leading {
    edge: Arc<Edge>,
    flight: u64,
}

impl Drop for Leading {
    fn drop(&mut self) {
        self.edge.settle(self.flight);
    }
}

impl Edge {
    /// The edge of `site` in front of `origin`, keeping copies in `store`, with the wall clock.
    pub fn new(site: Arc<Site>, origin: Origin, store: Box<dyn Store>) -> Edge {
        Edge::with_clock(site, origin, store, Box::new(wall_clock))
    }

    /// [`Edge::new`] with another clock.
    pub fn with_clock(
        site: Arc<Site>,
        origin: Origin,
        store: Box<dyn Store>,
        clock: Clock,
    ) -> Edge {
        Edge {
            site,
            origin,
            store,
            flights: Mutex::new(HashMap::new()),
            clock,
        }
    }

    /// The origin.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// Deletes stored copies: the keys the core's purge index named, and in a shared storage
    /// whatever else the purge `targets` reach.
    pub async fn purge(&self, keys: &[String], targets: &[String]) {
        self.store.delete(keys).await;
        let scopes: Vec<PurgeScope> = targets
            .iter()
            .filter_map(|t| self.site.purge_scope(t))
            .collect();
        self.store.purge(&scopes).await;
    }

    /// Answers `request` (the core's form of `onward`, the request to forward) through the
    /// core's edge exchange. `Err` when the origin failed and no stored copy may stand in.
    pub async fn handle(
        self: &Arc<Self>,
        request: &Request,
        onward: OriginRequest,
    ) -> Result<EdgeReply, String> {
        // A CSP nonce from the thread's CSPRNG (seeded from the OS): no system call per request.
        let hints = EdgeHints {
            nonce: Some(rand::random()),
            ..EdgeHints::default()
        };
        let exchange = self
            .site
            .edge_exchange(request, &hints, true)
            .map_err(|e| e.to_string())?;
        self.drive(exchange, onward).await
    }

    /// Does what each step of `exchange` names until it responds; the steps after a response
    /// whose body is being stored go on once the body has streamed.
    fn drive(
        self: &Arc<Self>,
        exchange: EdgeExchange,
        onward: OriginRequest,
    ) -> Pin<Box<dyn Future<Output = Result<EdgeReply, String>> + Send + '_>> {
        // Boxed: a background refresh drives an exchange of its own from inside this one.
        Box::pin(self.drive_steps(exchange, onward))
    }

    async fn drive_steps(
        self: &Arc<Self>,
        mut exchange: EdgeExchange,
        onward: OriginRequest,
    ) -> Result<EdgeReply, String> {
        let mut stored: Option<Arc<Stored>> = None;
        let mut opened: Option<Opened> = None;
        let mut failure: Option<String> = None;
        let mut leading: Option<Leading> = None;
        let mut reply = None;
        loop {
            let answer = match exchange.next_step() {
                ExchangeStep::Lookup { key } => {
                    stored = self.store.get(&key, (self.clock)()).await;
                    let copy = stored.as_ref().map(|s| StoredHead {
                        status: s.status,
                        headers: s.headers.clone(),
                    });
                    Some(ExchangeAnswer::Lookup { copy })
                }
                ExchangeStep::AskOrigin {
                    headers,
                    lead,
                    deadline_ms,
                } => {
                    leading = lead.map(|flight| self.lead(flight));
                    match self.ask(&onward, headers, deadline_ms).await {
                        Ok(answer) => {
                            let head = OriginAnswer {
                                status: answer.status,
                                headers: answer.headers.clone(),
                            };
                            opened = Some(answer);
                            Some(ExchangeAnswer::Origin(head))
                        }
                        Err(why) => {
                            failure = Some(why.clone());
                            Some(ExchangeAnswer::OriginFailed { reason: Some(why) })
                        }
                    }
                }
                ExchangeStep::Follow {
                    flight,
                    deadline_ms,
                } => {
                    let settled = self.flight(flight).subscribe();
                    if exchange.followed_flight_landed() {
                        self.settle(flight);
                    }
                    Some(follow(settled, deadline_ms).await)
                }
                ExchangeStep::Delete { keys } => {
                    self.store.delete(&keys).await;
                    None
                }
                ExchangeStep::Refresh => {
                    if let Some(refresh) = exchange.take_refresh() {
                        let (edge, onward) = (self.clone(), onward.clone());
                        tokio::spawn(async move {
                            match edge.drive(refresh, onward).await {
                                // Reading the body to its end is what stores the copy.
                                Ok(reply) => drain(reply.body).await,
                                Err(why) => tracing::warn!("revalidating failed: {why}"),
                            }
                        });
                    }
                    None
                }
                ExchangeStep::Respond {
                    status,
                    headers,
                    body,
                    store,
                } => {
                    let headers = http_headers(&headers, stored.as_deref());
                    let body = match body {
                        BodySource::Empty => Body::empty(),
                        BodySource::Stored => {
                            Body::from(stored.take().map_or_else(Bytes::new, |s| s.body.clone()))
                        }
                        BodySource::Origin => match (opened.take(), store) {
                            (None, _) => Body::empty(),
                            (Some(answer), None) => Body::new(answer.body),
                            (Some(answer), Some(copy)) => {
                                let mut keeping =
                                    Keeping::new(self, exchange, copy, leading.take());
                                // A declared length over the cap: given up before the first byte.
                                if answer.body.size_hint().lower() > MAX_STORED_BYTES as u64 {
                                    keeping.bytes = None;
                                }
                                let body = Body::new(Kept {
                                    body: answer.body,
                                    keeping: Some(keeping),
                                });
                                return Ok(EdgeReply {
                                    status,
                                    headers,
                                    body,
                                });
                            }
                        },
                    };
                    reply = Some(EdgeReply {
                        status,
                        headers,
                        body,
                    });
                    None
                }
                ExchangeStep::Settle { flight } => {
                    if leading.as_ref().is_some_and(|l| l.flight == flight) {
                        leading = None;
                    } else {
                        self.settle(flight);
                    }
                    None
                }
                ExchangeStep::Fail { message } => return Err(failure.unwrap_or(message)),
                ExchangeStep::Done => {
                    return reply.ok_or_else(|| "the edge exchange gave no response".to_string());
                }
            };
            if let Some(answer) = answer {
                exchange
                    .answer(answer, self.now_ms())
                    .map_err(|e| e.to_string())?;
            }
        }
    }

    /// Asks the origin with `headers` set on the request, giving up past `deadline_ms`.
    async fn ask(
        &self,
        onward: &OriginRequest,
        headers: Vec<(String, String)>,
        deadline_ms: Option<u32>,
    ) -> Result<Opened, String> {
        let mut request = onward.clone();
        for (name, value) in headers {
            request
                .headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
            request.headers.push((name, value));
        }
        let Some(ms) = deadline_ms else {
            return self.origin.open(&request).await;
        };
        tokio::time::timeout(Duration::from_millis(ms.into()), self.origin.open(&request))
            .await
            .unwrap_or_else(|_| Err(format!("the origin did not answer within {ms} ms")))
    }

    /// The waiters of `flight`, registered by whichever of its leader and followers comes first.
    fn flight(&self, flight: u64) -> watch::Sender<bool> {
        self.lock_flights()
            .entry(flight)
            .or_insert_with(|| watch::channel(false).0)
            .clone()
    }

    /// Registers the lead of `flight`.
    fn lead(self: &Arc<Self>, flight: u64) -> Leading {
        self.flight(flight);
        Leading {
            edge: self.clone(),
            flight,
        }
    }

    /// Wakes the followers of `flight`.
    fn settle(&self, flight: u64) {
        if let Some(sender) = self.lock_flights().remove(&flight) {
            sender.send_replace(true);
        }
    }

    fn now_ms(&self) -> f64 {
        ((self.clock)() * 1000.0).floor()
    }

    fn lock_flights(&self) -> std::sync::MutexGuard<'_, HashMap<u64, watch::Sender<bool>>> {
        self.flights.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Waits for a flight to settle (at most `deadline_ms`): `followed`, or `originFailed` when the
/// deadline passed first.
async fn follow(mut settled: watch::Receiver<bool>, deadline_ms: Option<u32>) -> ExchangeAnswer {
    // An error: the sender is gone, which only a settle does.
    let settled = async move { settled.wait_for(|settled| *settled).await.map(|_| ()) };
    match deadline_ms {
        None => {
            let _ = settled.await;
            ExchangeAnswer::Followed
        }
        Some(ms) => match tokio::time::timeout(Duration::from_millis(ms.into()), settled).await {
            Ok(_) => ExchangeAnswer::Followed,
            Err(_) => ExchangeAnswer::OriginFailed {
                reason: Some(format!("the request at the origin took over {ms} ms")),
            },
        },
    }
}

/// A copy being kept as it streams: the exchange waits for [`ExchangeAnswer::Kept`].
struct Keeping {
    edge: Arc<Edge>,
    exchange: EdgeExchange,
    copy: StoreCopy,
    leading: Option<Leading>,
    /// The bytes so far; `None` once past [`MAX_STORED_BYTES`].
    bytes: Option<Vec<u8>>,
}

impl Keeping {
    fn new(
        edge: &Arc<Edge>,
        exchange: EdgeExchange,
        copy: StoreCopy,
        leading: Option<Leading>,
    ) -> Keeping {
        Keeping {
            edge: edge.clone(),
            exchange,
            copy,
            leading,
            bytes: Some(Vec::new()),
        }
    }

    fn take(&mut self, chunk: &[u8]) {
        if let Some(bytes) = &mut self.bytes {
            if bytes.len() + chunk.len() > MAX_STORED_BYTES {
                self.bytes = None;
            } else {
                bytes.extend_from_slice(chunk);
            }
        }
    }

    /// Stores the copy when the body streamed whole (`complete`) within the cap, answers the
    /// exchange, and runs its last steps (waking collapsed followers) — in a task of its own.
    fn finish(mut self, complete: bool) {
        let bytes = self.bytes.take().filter(|_| complete);
        // Outside a runtime (the server shutting down) the exchange is dropped: its flight lands
        // as given up, and the `Leading` wakes its followers.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let key = self.exchange.plan().key.clone();
            let kept = match (bytes, key) {
                (Some(bytes), Some(key)) => {
                    let copy = Stored::new(
                        self.copy.status,
                        std::mem::take(&mut self.copy.headers),
                        Bytes::from(bytes),
                        (self.edge.clock)(),
                    );
                    self.edge.store.put(&key, copy, self.copy.max_age).await;
                    true
                }
                _ => false,
            };
            let now = self.edge.now_ms();
            if let Err(e) = self.exchange.answer(ExchangeAnswer::Kept { kept }, now) {
                tracing::warn!("the edge exchange refused the kept answer: {e}");
            }
            // What remains: settling the flight this request led, then done.
            while let ExchangeStep::Settle { .. } = self.exchange.next_step() {
                self.leading.take();
            }
        });
    }
}

/// An origin body streaming to the visitor while it is kept.
struct Kept {
    body: reqwest::Body,
    keeping: Option<Keeping>,
}

impl HttpBody for Kept {
    type Data = Bytes;
    type Error = reqwest::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, reqwest::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(keeping), Some(data)) = (&mut self.keeping, frame.data_ref()) {
                    keeping.take(data);
                }
            }
            Poll::Ready(None) => {
                if let Some(keeping) = self.keeping.take() {
                    keeping.finish(true);
                }
            }
            Poll::Ready(Some(Err(_))) => {
                if let Some(keeping) = self.keeping.take() {
                    keeping.finish(false);
                }
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

impl Drop for Kept {
    /// The visitor went away before the end: the rest is read for the store all the same (up
    /// to the cap), so collapsed followers and later visitors still get the copy.
    fn drop(&mut self) {
        let Some(mut keeping) = self.keeping.take() else {
            return;
        };
        let mut body = std::mem::replace(&mut self.body, reqwest::Body::from(Bytes::new()));
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            use http_body_util::BodyExt;
            loop {
                match body.frame().await {
                    None => return keeping.finish(true),
                    Some(Err(_)) => return keeping.finish(false),
                    Some(Ok(frame)) => {
                        if let Some(data) = frame.data_ref() {
                            keeping.take(data);
                        }
                        if keeping.bytes.is_none() {
                            return keeping.finish(false);
                        }
                    }
                }
            }
        });
    }
}

/// The response's headers as HTTP headers; those it sends from `stored`'s list are cloned from
/// the copy's converted ones.
fn http_headers(headers: &ResponseHeaders, stored: Option<&Stored>) -> HeaderMap {
    let mut map = HeaderMap::new();
    if let Some(list) = headers.stored() {
        let converted = stored
            .filter(|s| Arc::ptr_eq(&s.headers, list))
            .map(|s| &s.http_headers);
        map.reserve(list.len() + headers.own().len());
        for (at, (name, value)) in list.iter().enumerate() {
            if !headers.sends_stored(name) {
                continue;
            }
            let header = match converted.and_then(|c| c.get(at)) {
                Some(header) => header.clone(),
                None => header_text::header(name, value),
            };
            map.extend(header);
        }
    }
    map.extend(
        headers
            .own()
            .iter()
            .filter_map(|(name, value)| header_text::header(name, value)),
    );
    map
}

/// Reads `body` to its end, dropping the bytes.
async fn drain(body: Body) {
    use http_body_util::BodyExt;
    let mut body = body;
    while let Some(frame) = body.frame().await {
        if frame.is_err() {
            break;
        }
    }
}

fn wall_clock() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    //! Stale-while-revalidate and stale-if-error need a copy to age by minutes: here the edge
    //! runs in process with a clock the test moves, in front of an origin on loopback.

    use super::*;
    use crate::open_site;
    use crate::serve::store::MemoryStore;
    use axum::http::Method;
    use sitefile_core::WorkerOptions;
    use std::path::Path;
    use std::sync::atomic::{AtomicU16, AtomicU64, AtomicUsize, Ordering};

    struct Fixture {
        edge: Arc<Edge>,
        hits: Arc<AtomicUsize>,
        status: Arc<AtomicU16>,
        now: Arc<AtomicU64>,
        _origin: tokio::task::JoinHandle<()>,
    }

    impl Fixture {
        async fn start() -> Fixture {
            let hits = Arc::new(AtomicUsize::new(0));
            let status = Arc::new(AtomicU16::new(200));
            let (h, s) = (hits.clone(), status.clone());
            // Status 0: the origin drops the connection without an answer.
            let router = axum::Router::new().fallback(move || {
                let n = h.fetch_add(1, Ordering::SeqCst) + 1;
                let status = s.load(Ordering::SeqCst);
                assert_ne!(status, 0, "the test origin is down");
                let status = axum::http::StatusCode::from_u16(status).unwrap();
                async move { (status, [("content-type", "text/html")], format!("copy {n}")) }
            });
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let base = format!("http://{}", listener.local_addr().unwrap());
            let origin = tokio::spawn(async move {
                axum::serve(listener, router).await.unwrap();
            });
            let dir = Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../examples/storefront"
            ));
            let site = open_site::open(dir, WorkerOptions::default()).unwrap().site;
            let now = Arc::new(AtomicU64::new(1_000_000));
            let clock = now.clone();
            let edge = Edge::with_clock(
                Arc::new(site),
                Origin::new(&base).unwrap(),
                Box::new(Mutex::new(MemoryStore::new(1 << 20))),
                Box::new(move || clock.load(Ordering::SeqCst) as f64),
            );
            Fixture {
                edge: Arc::new(edge),
                hits,
                status,
                now,
                _origin: origin,
            }
        }

        fn later(&self, secs: u64) {
            self.now.fetch_add(secs, Ordering::SeqCst);
        }

        async fn get(&self, path: &str) -> Result<Got, String> {
            let request = Request::new(&format!("http://shop.test{path}")).unwrap();
            let onward = OriginRequest {
                method: Method::GET,
                target: path.to_string(),
                host: None,
                headers: Vec::new(),
                body: Bytes::new(),
            };
            let reply = self.edge.handle(&request, onward).await?;
            let body = http_body_util::BodyExt::collect(reply.body)
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            // What the answer left running (keeping its copy) is done before the next request.
            for _ in 0..100 {
                if self.edge.site.edge_flights_in_air() == 0 {
                    break;
                }
                tokio::task::yield_now().await;
            }
            Ok(Got {
                status: reply.status,
                headers: reply.headers,
                body,
            })
        }
    }

    /// An answer read whole.
    struct Got {
        status: u16,
        headers: HeaderMap,
        body: Bytes,
    }

    fn header<'a>(reply: &'a Got, name: &str) -> Option<&'a str> {
        reply.headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[tokio::test]
    async fn a_stale_copy_is_served_and_refreshed_in_the_background() {
        let f = Fixture::start().await;
        let first = f.get("/camisetas").await.unwrap();
        assert_eq!(header(&first, "x-cache"), Some("MISS"));
        // The listing profile: fresh for 120 s at the edge, then stale for 900 s more.
        f.later(200);
        let stale = f.get("/camisetas").await.unwrap();
        assert_eq!(header(&stale, "x-cache"), Some("STALE"));
        assert_eq!(header(&stale, "x-cache-age"), Some("200"));
        assert_eq!(stale.body, "copy 1");
        let refreshed = loop {
            let reply = f.get("/camisetas").await.unwrap();
            if header(&reply, "x-cache") == Some("HIT") {
                break reply;
            }
            tokio::task::yield_now().await;
        };
        assert_ne!(refreshed.body, "copy 1", "the refresh was stored");
        assert!(f.hits.load(Ordering::SeqCst) >= 2);
    }

    #[tokio::test]
    async fn a_stale_copy_stands_in_for_a_failing_origin_within_stale_if_error() {
        let f = Fixture::start().await;
        f.get("/camisetas").await.unwrap();
        f.status.store(500, Ordering::SeqCst);
        // Past fresh + stale-while-revalidate (1020 s), within stale-if-error (3720 s).
        f.later(2000);
        let covered = f.get("/camisetas").await.unwrap();
        assert_eq!(header(&covered, "x-cache"), Some("STALE-ERROR"));
        assert_eq!(header(&covered, "x-cache-origin-status"), Some("500"));
        assert_eq!(covered.status, 200);
        assert_eq!(covered.body, "copy 1");
        f.later(10_000);
        let failed = f.get("/camisetas").await.unwrap();
        assert_eq!(
            failed.status, 500,
            "too old to stand in: the origin's answer"
        );
        assert_eq!(header(&failed, "x-cache"), Some("BYPASS"));

        f.status.store(200, Ordering::SeqCst);
        assert_eq!(
            header(&f.get("/camisetas").await.unwrap(), "x-cache"),
            Some("MISS")
        );
        f.status.store(0, Ordering::SeqCst);
        f.later(2000);
        let unreachable = f.get("/camisetas").await.unwrap();
        assert_eq!(header(&unreachable, "x-cache"), Some("STALE-ERROR"));
        assert_eq!(header(&unreachable, "x-cache-origin-status"), None);
        f.later(10_000);
        assert!(f.get("/camisetas").await.is_err(), "nothing to stand in");
    }
}
