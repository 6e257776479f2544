//! The edge exchange: one visitor request through the edge cache, as a state machine the host
//! drives the way it drives a [`Resolution`](crate::resolve::Resolution). The core decides every
//! step — look up a stored copy, serve it (`HIT`, `STALE` with a background refresh), ask the
//! origin as the leader of a key's flight or wait as a follower, stand a copy in for a failed
//! origin (`STALE-ERROR`), store, evict, respond; the host does the I/O each step names and
//! answers it, with the time. Bodies never enter the core: a step says which one to send.
//!
//! Its drivers (decisions EDGE-1, EDGE-14): `node/ts/worker.ts` (`drive`),
//! `server/src/serve/edge.rs` (with the streaming body and the waiters), and the C ABI's
//! `sitefile_edge_exchange_*`, which only converts. A multi-threaded host registers its waiters
//! after the step, so it asks [`EdgeExchange::followed_flight_landed`] before waiting.

use super::flights::{Flight, Landing, Seat};
use super::response_headers::{ResponseHeaders, STORED_AT_HEADER, SharedHeaders};
use super::{EdgeHints, OriginAnswer, OriginOutcome, Site};
use crate::edge::headers::{find, remove, set};
use crate::edge::{EdgeAction, EdgePlan, StoredState, UnknownProfile, stored_state};
use crate::errors::{ErrorCode, HasErrorCode};
use crate::request::Request;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;

/// Which body a [`ExchangeStep::Respond`] sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum BodySource {
    /// No body (a redirect).
    Empty,
    /// The body of the copy the host looked up.
    Stored,
    /// The body of the origin's answer, streamed.
    Origin,
}

/// A copy for the host to keep while it streams the origin's body: the body goes to the visitor
/// and into the store under `key`, up to the store's own per-entry cap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct StoreCopy {
    /// The cache key.
    pub key: String,
    /// The status stored.
    pub status: u16,
    /// The headers stored (the stored-at stamp included).
    pub headers: Vec<(String, String)>,
    /// Seconds the copy can still be served; past them a store may drop it.
    pub max_age: Option<u32>,
}

/// What the host does next for an exchange.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "step", rename_all = "camelCase")]
pub enum ExchangeStep {
    /// Look up the copy stored under `key`; answer [`ExchangeAnswer::Lookup`].
    Lookup {
        /// The cache key.
        key: String,
    },
    /// Forward the request to the origin with `headers` set on it (replacing its own); answer
    /// [`ExchangeAnswer::Origin`] with the answer's head, or [`ExchangeAnswer::OriginFailed`].
    /// `lead`: this request leads that flight — the host wakes its followers at
    /// [`ExchangeStep::Settle`], or when it gives the exchange up. `deadline_ms`: a stored copy
    /// can stand in, so past this many milliseconds answer `OriginFailed` instead of waiting.
    #[serde(rename_all = "camelCase")]
    AskOrigin {
        /// Headers to set on the forwarded request.
        headers: Vec<(String, String)>,
        /// The flight this request leads.
        lead: Option<u64>,
        /// How long to wait for the origin's head before giving up on it.
        deadline_ms: Option<u32>,
    },
    /// Another request for the key is at the origin: wait until the host settles `flight`, then
    /// answer [`ExchangeAnswer::Followed`] (or `OriginFailed` past `deadline_ms`).
    #[serde(rename_all = "camelCase")]
    Follow {
        /// The flight to wait for.
        flight: u64,
        /// How long to wait before giving up on it (a stored copy can stand in).
        deadline_ms: Option<u32>,
    },
    /// Delete these keys from the store (the purge index had to forget them).
    Delete {
        /// The keys.
        keys: Vec<String>,
    },
    /// Start the background refresh [`EdgeExchange::take_refresh`] hands out, and drive it after
    /// (or beside) this one.
    Refresh,
    /// Answer the visitor. With `store`, keep the body as it streams and answer
    /// [`ExchangeAnswer::Kept`]; a body not sent (`stored` or `empty`) is discarded.
    Respond {
        /// The status.
        status: u16,
        /// The headers.
        #[cfg_attr(feature = "ts", ts(as = "Vec<(String, String)>"))]
        headers: ResponseHeaders,
        /// Which body.
        body: BodySource,
        /// The copy to store as the body streams.
        store: Option<StoreCopy>,
    },
    /// The flight this request led has settled: wake its followers.
    Settle {
        /// The flight.
        flight: u64,
    },
    /// The origin failed and no stored copy may stand in: the host answers its own error (a
    /// `502`, or the origin's thrown error).
    Fail {
        /// What went wrong.
        message: String,
    },
    /// Nothing more to do.
    Done,
}

impl ExchangeStep {
    fn kind(&self) -> &'static str {
        match self {
            ExchangeStep::Lookup { .. } => "lookup",
            ExchangeStep::AskOrigin { .. } => "askOrigin",
            ExchangeStep::Follow { .. } => "follow",
            ExchangeStep::Delete { .. } => "delete",
            ExchangeStep::Refresh => "refresh",
            ExchangeStep::Respond { .. } => "respond",
            ExchangeStep::Settle { .. } => "settle",
            ExchangeStep::Fail { .. } => "fail",
            ExchangeStep::Done => "done",
        }
    }
}

/// A stored copy's head as the host's store gave it back.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct StoredHead {
    /// The stored status.
    pub status: u16,
    /// The stored headers, the stored-at stamp among them: shared with the store (a response
    /// that serves the copy sends from this list, not a copy of it).
    #[serde(default)]
    pub headers: SharedHeaders,
}

/// The host's answer to the step it was handed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "answer", rename_all = "camelCase")]
pub enum ExchangeAnswer {
    /// To `lookup`: the stored copy's head, or none.
    Lookup {
        /// The copy.
        copy: Option<StoredHead>,
    },
    /// To `askOrigin`: the origin's status and headers (its body stays with the host).
    Origin(OriginAnswer),
    /// To `askOrigin` or `follow`: the origin could not be reached, failed, or missed the
    /// step's deadline.
    OriginFailed {
        /// Why, for the host's log.
        #[serde(default)]
        reason: Option<String>,
    },
    /// To `follow`: the host settled the flight.
    Followed,
    /// To a `respond` with `store`: whether the store kept the whole copy.
    Kept {
        /// Whether it did.
        kept: bool,
    },
}

impl ExchangeAnswer {
    fn kind(&self) -> &'static str {
        match self {
            ExchangeAnswer::Lookup { .. } => "lookup",
            ExchangeAnswer::Origin(_) => "origin",
            ExchangeAnswer::OriginFailed { .. } => "originFailed",
            ExchangeAnswer::Followed => "followed",
            ExchangeAnswer::Kept { .. } => "kept",
        }
    }
}

/// An answer with the time it was given: the JSON form bindings pass
/// (`{"answer": "lookup", "copy": null, "nowMs": 1767225600000}`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimedAnswer {
    /// The host's clock, in milliseconds since the epoch.
    pub now_ms: f64,
    /// The answer.
    #[serde(flatten)]
    pub answer: ExchangeAnswer,
}

/// The host drove an exchange out of order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExchangeError {
    /// An answer to a step the exchange did not hand out (`UNKNOWN_CALL`).
    #[error("the edge exchange is at step {step}; the answer {answer} does not fit it")]
    Unexpected {
        /// The step handed out.
        step: &'static str,
        /// The answer given.
        answer: &'static str,
    },
    /// An answer after the exchange was done (`FINISHED`).
    #[error("the edge exchange is done")]
    Finished,
}

impl HasErrorCode for ExchangeError {
    fn code(&self) -> ErrorCode {
        match self {
            ExchangeError::Unexpected { .. } => ErrorCode::UnknownCall,
            ExchangeError::Finished => ErrorCode::Finished,
        }
    }
}

/// A copy the exchange looked up and may still serve (its body is with the host).
struct Held {
    status: u16,
    headers: SharedHeaders,
    age_secs: u64,
}

/// One request through the edge. Created by [`Site::edge_exchange`]; `next_step` hands out steps,
/// `answer` takes the host's answer to the ones that ask for one.
pub struct EdgeExchange {
    site: Arc<Site>,
    plan: EdgePlan,
    /// The cache key when the cache is used.
    key: Option<String>,
    /// A background refresh: it never follows and never stands a copy in.
    refresh: bool,
    queue: VecDeque<ExchangeStep>,
    /// The step handed out that waits for an answer.
    awaiting: Option<ExchangeStep>,
    held: Option<Held>,
    lead: Option<Arc<Flight>>,
    following: Option<Arc<Flight>>,
    /// This exchange followed a flight already: it never follows again.
    followed: bool,
    pending_refresh: bool,
    done: bool,
}

impl Site {
    /// The exchange of one request through the edge: `hints` as for [`Site::edge_plan_with`];
    /// `cache`: the host has a store (without one, every request goes to the origin).
    pub fn edge_exchange(
        self: &Arc<Self>,
        request: &Request,
        hints: &EdgeHints,
        cache: bool,
    ) -> Result<EdgeExchange, UnknownProfile> {
        let plan = self.edge_plan_with(request, hints)?;
        let key = plan
            .key
            .as_ref()
            .filter(|_| cache && plan.action != EdgeAction::Bypass)
            .map(|k| k.as_str().to_string());
        let mut exchange = EdgeExchange::starting(self.clone(), plan, key, false);
        if let EdgeAction::Redirect(redirect) = &exchange.plan.action {
            let (status, headers) = (redirect.status, exchange.plan.headers.clone());
            exchange.respond(status, headers, BodySource::Empty, None);
        } else if let Some(key) = exchange.key.clone() {
            exchange.queue.push_back(ExchangeStep::Lookup { key });
        } else {
            exchange.head_for_origin();
        }
        Ok(exchange)
    }

    /// How many origin requests lead a flight now (misses other requests for their key wait
    /// for): zero once every exchange settled or was given up.
    pub fn edge_flights_in_air(&self) -> usize {
        self.flights.in_air()
    }
}

impl EdgeExchange {
    /// An exchange with no step handed out yet.
    fn starting(site: Arc<Site>, plan: EdgePlan, key: Option<String>, refresh: bool) -> Self {
        EdgeExchange {
            site,
            plan,
            key,
            refresh,
            queue: VecDeque::new(),
            awaiting: None,
            held: None,
            lead: None,
            following: None,
            followed: false,
            pending_refresh: false,
            done: false,
        }
    }

    /// The edge plan the exchange follows.
    pub fn plan(&self) -> &EdgePlan {
        &self.plan
    }

    /// The next step. While a step waits for its answer it is handed out again.
    pub fn next_step(&mut self) -> ExchangeStep {
        if let Some(step) = &self.awaiting {
            return step.clone();
        }
        let Some(step) = self.queue.pop_front() else {
            self.done = true;
            return ExchangeStep::Done;
        };
        let asks = match &step {
            ExchangeStep::Lookup { .. }
            | ExchangeStep::AskOrigin { .. }
            | ExchangeStep::Follow { .. } => true,
            ExchangeStep::Respond { store, .. } => store.is_some(),
            _ => false,
        };
        if asks {
            self.awaiting = Some(step.clone());
        }
        step
    }

    /// The host's answer to the step handed out, at `now_ms` (milliseconds since the epoch).
    pub fn answer(&mut self, answer: ExchangeAnswer, now_ms: f64) -> Result<(), ExchangeError> {
        if self.done {
            return Err(ExchangeError::Finished);
        }
        let Some(step) = self.awaiting.take() else {
            return Err(ExchangeError::Unexpected {
                step: self.queue.front().map_or("done", ExchangeStep::kind),
                answer: answer.kind(),
            });
        };
        match (&step, answer) {
            (ExchangeStep::Lookup { .. }, ExchangeAnswer::Lookup { copy }) => {
                self.looked_up(copy, now_ms)
            }
            (ExchangeStep::AskOrigin { .. }, ExchangeAnswer::Origin(origin)) => {
                self.origin_answered(origin, now_ms)
            }
            (
                ExchangeStep::AskOrigin { .. } | ExchangeStep::Follow { .. },
                ExchangeAnswer::OriginFailed { reason },
            ) => self.origin_failed(reason),
            (ExchangeStep::Follow { .. }, ExchangeAnswer::Followed) => self.followed_flight(),
            (ExchangeStep::Respond { .. }, ExchangeAnswer::Kept { kept }) => {
                let landing = if kept {
                    Landing::Stored
                } else {
                    Landing::NotStored
                };
                self.settle(landing);
            }
            (step, answer) => {
                let error = ExchangeError::Unexpected {
                    step: step.kind(),
                    answer: answer.kind(),
                };
                self.awaiting = Some(step.clone());
                return Err(error);
            }
        }
        Ok(())
    }

    /// Whether the flight a [`ExchangeStep::Follow`] waits for has landed already: a host that
    /// registers its waiters after the step (another thread's leader may have settled in
    /// between) asks this before it waits, so it never waits for a settle that came and went.
    pub fn followed_flight_landed(&self) -> bool {
        self.following
            .as_ref()
            .is_none_or(|flight| flight.landing() != Landing::Pending)
    }

    /// The background refresh a [`ExchangeStep::Refresh`] announced: an exchange of its own that
    /// asks the origin (unless another request for the key is already there) and stores the
    /// answer. `None` when none was announced, or it was taken.
    pub fn take_refresh(&mut self) -> Option<EdgeExchange> {
        if !std::mem::take(&mut self.pending_refresh) {
            return None;
        }
        let mut refresh =
            EdgeExchange::starting(self.site.clone(), self.plan.clone(), self.key.clone(), true);
        refresh.head_for_origin();
        Some(refresh)
    }

    fn looked_up(&mut self, copy: Option<StoredHead>, now_ms: f64) {
        let held = copy.and_then(|copy| {
            let at = find(&copy.headers, STORED_AT_HEADER)?
                .trim()
                .parse::<f64>()
                .ok()?;
            let age_secs = ((now_ms - at) / 1000.0).floor().max(0.0) as u64;
            Some(Held {
                status: copy.status,
                headers: copy.headers,
                age_secs,
            })
        });
        if let Some(held) = held {
            let copy = self.site.stored_copy(&self.plan, held.age_secs, None);
            match copy.state {
                StoredState::Hit => return self.serve(held, copy.headers),
                StoredState::Stale => {
                    if !self.followed {
                        self.pending_refresh = true;
                        self.queue.push_back(ExchangeStep::Refresh);
                    }
                    return self.serve(held, copy.headers);
                }
                StoredState::StaleError | StoredState::Miss => self.held = Some(held),
            }
        }
        self.head_for_origin();
    }

    /// Boards the key's flight (or not: without a key, or once followed) and asks the origin or
    /// waits for the flight.
    fn head_for_origin(&mut self) {
        let deadline_ms = self.stand_in_deadline();
        if let (Some(key), false) = (&self.key, self.followed) {
            match self.site.flights.board(key) {
                Seat::Follower(_) if self.refresh => return,
                Seat::Follower(flight) => {
                    self.queue.push_back(ExchangeStep::Follow {
                        flight: flight.id,
                        deadline_ms,
                    });
                    self.following = Some(flight);
                    return;
                }
                Seat::Leader(flight) => self.lead = Some(flight),
            }
        }
        self.queue.push_back(ExchangeStep::AskOrigin {
            headers: self.plan.origin_headers.clone(),
            lead: self.lead.as_ref().map(|f| f.id),
            deadline_ms,
        });
    }

    /// The deadline for the origin while a held copy could stand in for its failure.
    fn stand_in_deadline(&self) -> Option<u32> {
        let held = self.held.as_ref()?;
        let policy = self.site.policy();
        let window = &policy.options().profiles.get(self.plan.profile).edge;
        (stored_state(held.age_secs, window, true) == StoredState::StaleError)
            .then_some(policy.options().stale_if_error_deadline_ms)
    }

    fn followed_flight(&mut self) {
        self.followed = true;
        let landing = self
            .following
            .take()
            .map_or(Landing::NotStored, |f| f.landing());
        match (landing, self.key.clone()) {
            (Landing::Stored, Some(key)) => {
                self.held = None;
                self.queue.push_back(ExchangeStep::Lookup { key });
            }
            (Landing::Failed, _) if self.stand_in(None) => {}
            _ => self.head_for_origin(),
        }
    }

    fn origin_answered(&mut self, mut origin: OriginAnswer, now_ms: f64) {
        remove(&mut origin.headers, STORED_AT_HEADER);
        if self.stand_in(Some(origin.outcome())) {
            return;
        }
        let decision = self.site.after_origin(&self.plan, &origin);
        if !decision.evict.is_empty() {
            self.queue.push_back(ExchangeStep::Delete {
                keys: decision.evict,
            });
        }
        let store = match (&self.key, decision.store) {
            (Some(key), Some(mut headers)) => {
                headers.push((STORED_AT_HEADER.to_string(), format!("{}", now_ms.floor())));
                Some(StoreCopy {
                    key: key.clone(),
                    status: decision.status,
                    headers,
                    max_age: decision.store_max_age,
                })
            }
            _ => None,
        };
        if store.is_none() {
            self.settle(Landing::NotStored);
        }
        let headers = decision.plan.headers;
        self.respond(decision.status, headers, BodySource::Origin, store);
    }

    fn origin_failed(&mut self, reason: Option<String>) {
        self.following = None;
        if self.stand_in(Some(OriginOutcome {
            status: None,
            degraded: false,
        })) {
            return;
        }
        self.settle(Landing::Failed);
        let why = reason.map_or(String::new(), |r| format!(": {r}"));
        self.queue.push_back(ExchangeStep::Fail {
            message: format!("the origin did not answer{why}, and no stored copy may stand in"),
        });
    }

    /// Serves the held copy as `STALE-ERROR` when the origin's `outcome` (`None`: the flight
    /// this request followed failed) lets it stand in; whether it did.
    fn stand_in(&mut self, outcome: Option<OriginOutcome>) -> bool {
        let Some(held) = self.held.take() else {
            return false;
        };
        let outcome = outcome.unwrap_or(OriginOutcome {
            status: None,
            degraded: false,
        });
        let copy = self
            .site
            .stored_copy(&self.plan, held.age_secs, Some(&outcome));
        if copy.state != StoredState::StaleError {
            self.held = Some(held);
            return false;
        }
        let landing = if outcome.status.is_some() {
            Landing::NotStored
        } else {
            Landing::Failed
        };
        self.settle(landing);
        self.serve(held, copy.headers);
        true
    }

    /// Serves a held copy: its headers without the stamp, `added` set over them.
    fn serve(&mut self, held: Held, added: Vec<(String, String)>) {
        let mut own = Vec::with_capacity(added.len());
        for (name, value) in added {
            set(&mut own, &name, value);
        }
        let headers = ResponseHeaders::over_stored(held.headers, own);
        self.respond(held.status, headers, BodySource::Stored, None);
    }

    fn respond(
        &mut self,
        status: u16,
        headers: impl Into<ResponseHeaders>,
        body: BodySource,
        store: Option<StoreCopy>,
    ) {
        self.queue.push_back(ExchangeStep::Respond {
            status,
            headers: headers.into(),
            body,
            store,
        });
    }

    /// Lands the flight this request leads, if it leads one, and has the host wake its followers.
    fn settle(&mut self, landing: Landing) {
        if let Some(flight) = self.lead.take() {
            self.site.flights.land(&flight, landing);
            self.queue
                .push_back(ExchangeStep::Settle { flight: flight.id });
        }
    }
}

impl Drop for EdgeExchange {
    /// An exchange given up while leading a flight lands it as failed, so the next miss for the
    /// key asks the origin again instead of following a flight nobody flies.
    fn drop(&mut self) {
        if let Some(flight) = self.lead.take() {
            self.site.flights.land(&flight, Landing::Failed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SiteSetup;
    use crate::content::Snapshot;

    fn site() -> Arc<Site> {
        let vars = [("BUILD_HASH".to_string(), "b1".to_string())].into();
        let setup = SiteSetup::new(Default::default(), Default::default(), vars);
        Arc::new(Site::new(Snapshot::empty(), setup).expect("a site"))
    }

    fn exchange(site: &Arc<Site>) -> EdgeExchange {
        let request = Request::new("https://shop.example/camisetas").expect("a request");
        site.edge_exchange(&request, &EdgeHints::default(), true)
            .expect("an exchange")
    }

    #[test]
    fn a_step_waiting_for_its_answer_is_handed_out_again_and_a_wrong_answer_is_refused() {
        let site = site();
        let mut ex = exchange(&site);
        let lookup = ex.next_step();
        assert!(matches!(lookup, ExchangeStep::Lookup { .. }));
        assert_eq!(ex.next_step(), lookup);
        let wrong = ex.answer(ExchangeAnswer::Followed, 0.0).unwrap_err();
        assert_eq!(wrong.code(), ErrorCode::UnknownCall);
        assert_eq!(ex.next_step(), lookup, "a refused answer changes nothing");
        ex.answer(ExchangeAnswer::Lookup { copy: None }, 0.0)
            .expect("the lookup's answer");
        assert!(matches!(ex.next_step(), ExchangeStep::AskOrigin { .. }));
    }

    #[test]
    fn an_answer_after_done_is_finished_and_one_without_a_step_unknown() {
        let site = site();
        let mut ex = exchange(&site);
        ex.next_step();
        ex.answer(ExchangeAnswer::Lookup { copy: None }, 0.0)
            .expect("the lookup's answer");
        ex.next_step();
        let origin = OriginAnswer {
            status: 200,
            headers: vec![("content-type".into(), "text/html".into())],
        };
        ex.answer(ExchangeAnswer::Origin(origin), 0.0)
            .expect("the origin's answer");
        assert!(matches!(ex.next_step(), ExchangeStep::Respond { .. }));
        let early = ex.answer(ExchangeAnswer::Followed, 0.0).unwrap_err();
        assert_eq!(early.code(), ErrorCode::UnknownCall);
        ex.answer(ExchangeAnswer::Kept { kept: true }, 0.0)
            .expect("kept");
        assert!(matches!(ex.next_step(), ExchangeStep::Settle { .. }));
        assert_eq!(ex.next_step(), ExchangeStep::Done);
        let late = ex.answer(ExchangeAnswer::Followed, 0.0).unwrap_err();
        assert_eq!(late.code(), ErrorCode::Finished);
    }

    #[test]
    fn a_leader_given_up_lands_its_flight_and_its_followers_do_not_wait() {
        let site = site();
        let mut leader = exchange(&site);
        leader.next_step();
        leader
            .answer(ExchangeAnswer::Lookup { copy: None }, 0.0)
            .expect("the lookup's answer");
        let ExchangeStep::AskOrigin { lead: Some(_), .. } = leader.next_step() else {
            panic!("the first miss leads");
        };
        let mut follower = exchange(&site);
        follower.next_step();
        follower
            .answer(ExchangeAnswer::Lookup { copy: None }, 0.0)
            .expect("the lookup's answer");
        assert!(matches!(follower.next_step(), ExchangeStep::Follow { .. }));
        assert!(!follower.followed_flight_landed());
        drop(leader);
        assert_eq!(site.edge_flights_in_air(), 0);
        assert!(follower.followed_flight_landed());
        follower
            .answer(ExchangeAnswer::Followed, 0.0)
            .expect("followed");
        let ExchangeStep::AskOrigin { lead: None, .. } = follower.next_step() else {
            panic!("a follower whose leader failed asks the origin itself, leading nothing");
        };
    }
}
