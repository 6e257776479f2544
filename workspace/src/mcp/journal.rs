//! The replay buffer of a session's GET stream: every message relayed on it gets an event id
//! (1, 2, ... per session) and is kept, the last [`JournalBounds::events`] of them within
//! [`JournalBounds::bytes`], so a client reconnecting with `Last-Event-ID` gets what it missed.

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::Value;

/// How much of a session's stream is kept for replay.
#[derive(Clone, Copy, Debug)]
pub struct JournalBounds {
    /// Most events kept.
    pub events: usize,
    /// Most bytes (of the events' JSON) kept; a larger event is not kept at all.
    pub bytes: usize,
}

#[derive(Default)]
struct Kept {
    /// The id of the last event numbered (0: none yet).
    last: u64,
    /// The kept events, oldest first, with their size.
    events: VecDeque<(u64, Value, usize)>,
    bytes: usize,
}

/// The numbered, bounded history of one session's GET stream.
pub struct Journal {
    bounds: JournalBounds,
    kept: Mutex<Kept>,
}

/// Why a `Last-Event-ID` cannot be resumed from.
#[derive(Debug, PartialEq, Eq)]
pub enum Unresumable {
    /// Not an id this session's stream ever sent.
    Unknown,
    /// Some events after it are no longer kept.
    Gone,
}

impl Journal {
    /// An empty journal with these bounds.
    pub fn new(bounds: JournalBounds) -> Self {
        Self {
            bounds,
            kept: Mutex::new(Kept::default()),
        }
    }

    /// The bounds of this journal.
    pub fn bounds(&self) -> JournalBounds {
        self.bounds
    }

    /// Numbers `message` and keeps it; its event id.
    pub fn record(&self, message: &Value) -> u64 {
        let size = message.to_string().len();
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.last += 1;
        let id = kept.last;
        if size > self.bounds.bytes {
            // Not kept: a resume from before it is answered `Gone`.
            kept.events.clear();
            kept.bytes = 0;
            return id;
        }
        kept.events.push_back((id, message.clone(), size));
        kept.bytes += size;
        while kept.events.len() > self.bounds.events.max(1) || kept.bytes > self.bounds.bytes {
            if let Some((_, _, size)) = kept.events.pop_front() {
                kept.bytes -= size;
            }
        }
        id
    }

    /// The events after `last_event_id` (a `Last-Event-ID` header), oldest first.
    pub fn after(&self, last_event_id: &str) -> Result<Vec<(u64, Value)>, Unresumable> {
        let last: u64 = last_event_id
            .trim()
            .parse()
            .map_err(|_| Unresumable::Unknown)?;
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if last > kept.last {
            return Err(Unresumable::Unknown);
        }
        // The oldest event still needed is `last + 1`; it must be kept unless none came since.
        let oldest = kept.events.front().map_or(kept.last + 1, |(id, _, _)| *id);
        if last + 1 < oldest {
            return Err(Unresumable::Gone);
        }
        Ok(kept
            .events
            .iter()
            .filter(|(id, _, _)| *id > last)
            .map(|(id, message, _)| (*id, message.clone()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replays_what_is_kept_and_refuses_what_is_gone() {
        let journal = Journal::new(JournalBounds {
            events: 2,
            bytes: 1024,
        });
        assert_eq!(journal.after("0"), Ok(vec![]));
        assert_eq!(journal.after("1"), Err(Unresumable::Unknown));
        for n in 1..=3 {
            assert_eq!(journal.record(&json!(n)), n);
        }
        assert_eq!(journal.after("1"), Ok(vec![(2, json!(2)), (3, json!(3))]));
        assert_eq!(journal.after("3"), Ok(vec![]));
        assert_eq!(journal.after("0"), Err(Unresumable::Gone));
        assert_eq!(journal.after("4"), Err(Unresumable::Unknown));
        assert_eq!(journal.after("x"), Err(Unresumable::Unknown));
        // An event over the byte bound is numbered but not kept.
        assert_eq!(journal.record(&json!("x".repeat(2000))), 4);
        assert_eq!(journal.after("3"), Err(Unresumable::Gone));
        assert_eq!(journal.after("4"), Ok(vec![]));
    }
}
