//! The edge cache in front of the origin, driven by the core's edge plan the way the Node worker
//! entry drives it (`node/ts/worker.ts`): the core decides the key, bypass, redirects, headers,
//! what to store and how a stored copy ages; this module moves bytes between the visitor, the
//! origin and the store (memory or Redis), keeps the clock, runs stale-while-revalidate refreshes in the
//! background and collapses concurrent misses for one key into one origin request.

use super::origin::{Origin, OriginRequest, Reply};
use super::store::{Store, Stored};
use axum::body::Bytes;
use sitefile_core::edge::{EdgeAction, EdgePlan, PurgeScope, StoredState};
use sitefile_core::site::{EdgeHints, OriginAnswer, OriginOutcome};
use sitefile_core::{Request, Site};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::OnceCell;

/// The edge's clock: seconds since the Unix epoch.
pub type Clock = Box<dyn Fn() -> f64 + Send + Sync>;

/// One origin request in flight for a key: the stored copy it gave, if it gave one.
type Flight = Arc<OnceCell<Option<Stored>>>;

/// An origin answer once the core decided: what the origin said (for stale-if-error), the copy
/// stored from it, and the visitor's response.
struct Answer {
    origin: OriginAnswer,
    stored: Option<Stored>,
    reply: Reply,
}

/// The edge cache of one site in front of one origin.
pub struct Edge {
    site: Arc<Site>,
    origin: Origin,
    store: Box<dyn Store>,
    inflight: Mutex<HashMap<String, Flight>>,
    clock: Clock,
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
            inflight: Mutex::new(HashMap::new()),
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

    /// Answers `request` (the core's form of `onward`, the request to forward): a redirect, or
    /// the origin's answer through the cache or around it. `Err` when the origin failed and no
    /// stored copy may stand in for it.
    pub async fn handle(
        self: &Arc<Self>,
        request: &Request,
        mut onward: OriginRequest,
    ) -> Result<Reply, String> {
        // A CSP nonce from the thread's CSPRNG (seeded from the OS): no system call per request.
        let hints = EdgeHints {
            nonce: Some(rand::random()),
            ..EdgeHints::default()
        };
        let plan = self
            .site
            .edge_plan_with(request, &hints)
            .map_err(|e| e.to_string())?;
        if let EdgeAction::Redirect(redirect) = &plan.action {
            return Ok(Reply {
                status: redirect.status,
                headers: plan.headers.clone(),
                body: Bytes::new(),
            });
        }
        for (name, value) in &plan.origin_headers {
            onward
                .headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            onward.headers.push((name.clone(), value.clone()));
        }
        match plan.key.as_ref() {
            Some(key) if plan.action != EdgeAction::Bypass => {
                let key = key.as_str().to_string();
                self.through_cache(&plan, &key, &onward).await
            }
            _ => Ok(self.ask_origin(&plan, false, &onward).await?.reply),
        }
    }

    /// Serves a stored copy when the core says it may (fresh, or stale and refreshed in the
    /// background), else asks the origin — and when the origin fails, a stored copy the core
    /// says may stand in for it.
    async fn through_cache(
        self: &Arc<Self>,
        plan: &EdgePlan,
        key: &str,
        request: &OriginRequest,
    ) -> Result<Reply, String> {
        let now = (self.clock)();
        let stored = self.store.get(key, now).await;
        let age = stored
            .as_ref()
            .map_or(0, |s| (now - s.stored_at).max(0.0) as u64);
        if let Some(stored) = &stored {
            let copy = self.site.stored_copy(plan, age, None);
            match copy.state {
                StoredState::Hit => return Ok(served(stored, copy.headers)),
                StoredState::Stale => {
                    let (edge, plan, key, request) =
                        (self.clone(), plan.clone(), key.to_string(), request.clone());
                    tokio::spawn(async move {
                        if let Err(why) = edge.collapsed(&plan, &key, &request).await {
                            tracing::warn!("revalidating {key} failed: {why}");
                        }
                    });
                    return Ok(served(stored, copy.headers));
                }
                StoredState::StaleError | StoredState::Miss => {}
            }
        }
        let answer = self.collapsed(plan, key, request).await;
        if let Some(stored) = &stored {
            let outcome = match &answer {
                Ok(answer) => answer.origin.outcome(),
                Err(_) => OriginOutcome {
                    status: None,
                    degraded: false,
                },
            };
            let copy = self.site.stored_copy(plan, age, Some(&outcome));
            if copy.state == StoredState::StaleError {
                return Ok(served(stored, copy.headers));
            }
        }
        answer.map(|a| a.reply)
    }

    /// [`Edge::ask_origin`], one origin request per key at a time. A request that finds one in
    /// flight waits for it and shares its answer when it was stored — the stored copy, never
    /// the first visitor's own headers (its cookies); otherwise it asks the origin itself.
    async fn collapsed(
        &self,
        plan: &EdgePlan,
        key: &str,
        request: &OriginRequest,
    ) -> Result<Answer, String> {
        let flight = self
            .lock_inflight()
            .entry(key.to_string())
            .or_default()
            .clone();
        let mut own = None;
        let leader = &mut own;
        let shared = flight
            .get_or_init(|| async move {
                let answer = self.ask_origin(plan, true, request).await;
                let stored = answer.as_ref().ok().and_then(|a| a.stored.clone());
                *leader = Some(answer);
                stored
            })
            .await
            .clone();
        {
            let mut inflight = self.lock_inflight();
            if inflight.get(key).is_some_and(|f| Arc::ptr_eq(f, &flight)) {
                inflight.remove(key);
            }
        }
        match (own, shared) {
            (Some(answer), _) => answer,
            (None, Some(stored)) => Ok(Answer {
                origin: OriginAnswer {
                    status: stored.status,
                    headers: stored.headers.clone(),
                },
                reply: served(&stored, Vec::new()),
                stored: Some(stored),
            }),
            (None, None) => self.ask_origin(plan, true, request).await,
        }
    }

    /// Asks the origin, has the core decide, deletes the keys the purge index evicted and
    /// (when `store`) stores what the core says to store under the plan's key.
    async fn ask_origin(
        &self,
        plan: &EdgePlan,
        store: bool,
        request: &OriginRequest,
    ) -> Result<Answer, String> {
        let reply = self.origin.forward(request).await?;
        let origin = OriginAnswer {
            status: reply.status,
            headers: reply.headers,
        };
        let decision = self.site.after_origin(plan, &origin);
        self.store.delete(&decision.evict).await;
        let key = plan.key.as_ref().filter(|_| store);
        let stored = match (key, decision.store) {
            (Some(key), Some(headers)) => {
                let copy = Stored {
                    status: decision.status,
                    headers,
                    body: reply.body.clone(),
                    stored_at: (self.clock)(),
                };
                self.store
                    .put(key, copy.clone(), decision.store_max_age)
                    .await;
                Some(copy)
            }
            _ => None,
        };
        Ok(Answer {
            origin,
            stored,
            reply: Reply {
                status: decision.status,
                headers: decision.plan.headers,
                body: reply.body,
            },
        })
    }

    fn lock_inflight(&self) -> std::sync::MutexGuard<'_, HashMap<String, Flight>> {
        self.inflight.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A stored copy as served: its headers with the core's (`X-Cache`, `X-Cache-Age`, …) set over
/// them.
fn served(stored: &Stored, added: Vec<(String, String)>) -> Reply {
    let mut headers = stored.headers.clone();
    for (name, value) in added {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(&name));
        headers.push((name, value));
    }
    Reply {
        status: stored.status,
        headers,
        body: stored.body.clone(),
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
    use sitefile_core::edge::WorkerOptions;
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

        async fn get(&self, path: &str) -> Result<Reply, String> {
            let request = Request::new(&format!("http://shop.test{path}")).unwrap();
            let onward = OriginRequest {
                method: Method::GET,
                target: path.to_string(),
                host: None,
                headers: Vec::new(),
                body: Bytes::new(),
            };
            self.edge.handle(&request, onward).await
        }
    }

    fn header<'a>(reply: &'a Reply, name: &str) -> Option<&'a str> {
        reply
            .headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
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
