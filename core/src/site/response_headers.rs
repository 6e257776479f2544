//! A response's headers as the edge exchange hands them out. A stored copy served again sends
//! the copy's own headers with a few laid over them (`X-Cache`, `Age`): the copy's list is shared
//! with the store, not copied, so a cache hit costs no allocation per stored header. Serialised,
//! it is the plain list of `[name, value]` pairs every binding reads.

use serde::ser::{Serialize, SerializeSeq, Serializer};
use std::sync::Arc;

/// The header a stored copy carries its storing time in (milliseconds since the epoch). The core
/// writes it into every copy it has the host store, reads a copy's age from it, and never lets
/// it reach a visitor; an origin's own copy of it is dropped.
pub const STORED_AT_HEADER: &str = "x-sitefile-stored-at";

/// A list of header pairs shared between a store and the responses that serve from it.
pub type SharedHeaders = Arc<[(String, String)]>;

/// The headers of a [`ExchangeStep::Respond`](super::ExchangeStep::Respond): a stored copy's
/// (when one is served), but the stored-at stamp and the names this response sets itself, then
/// the response's own, in that order. Names compare ignoring ASCII case.
#[derive(Debug, Clone, Default)]
pub struct ResponseHeaders {
    stored: Option<SharedHeaders>,
    own: Vec<(String, String)>,
}

impl ResponseHeaders {
    /// The stored copy's headers with `own` laid over them (each name once).
    pub(crate) fn over_stored(stored: SharedHeaders, own: Vec<(String, String)>) -> Self {
        ResponseHeaders {
            stored: Some(stored),
            own,
        }
    }

    /// The stored copy's headers this response sends from (all but those
    /// [`ResponseHeaders::sends_stored`] refuses), when it serves one.
    pub fn stored(&self) -> Option<&SharedHeaders> {
        self.stored.as_ref()
    }

    /// Whether the stored header `name` is sent: not the stored-at stamp, and not a name the
    /// response sets itself.
    pub fn sends_stored(&self, name: &str) -> bool {
        !name.eq_ignore_ascii_case(STORED_AT_HEADER)
            && !self.own.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    }

    /// The headers the response sets itself, sent after the stored ones.
    pub fn own(&self) -> &[(String, String)] {
        &self.own
    }

    /// Every header sent, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.stored
            .iter()
            .flat_map(|stored| stored.iter())
            .filter(|(name, _)| self.sends_stored(name))
            .chain(self.own.iter())
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// Every header sent, as owned pairs.
    pub fn to_vec(&self) -> Vec<(String, String)> {
        self.iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect()
    }
}

impl From<Vec<(String, String)>> for ResponseHeaders {
    fn from(own: Vec<(String, String)>) -> Self {
        ResponseHeaders { stored: None, own }
    }
}

/// Equal when the same headers are sent in the same order, however they are held.
impl PartialEq for ResponseHeaders {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for ResponseHeaders {}

impl Serialize for ResponseHeaders {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for pair in self.iter() {
            seq.serialize_element(&pair)?;
        }
        seq.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_stored_copy_is_sent_without_its_stamp_and_under_the_names_set_over_it() {
        let stored: SharedHeaders = pairs(&[
            ("content-type", "text/html"),
            ("X-Sitefile-Stored-At", "1000"),
            ("Age", "9"),
            ("x-cache", "MISS"),
        ])
        .into();
        let headers =
            ResponseHeaders::over_stored(stored, pairs(&[("X-Cache", "HIT"), ("age", "3")]));
        let expected = pairs(&[
            ("content-type", "text/html"),
            ("X-Cache", "HIT"),
            ("age", "3"),
        ]);
        assert_eq!(headers.to_vec(), expected);
        assert_eq!(headers, ResponseHeaders::from(expected));
        assert!(!headers.sends_stored("x-sitefile-stored-at"));
        assert_eq!(
            serde_json::to_string(&headers).unwrap(),
            r#"[["content-type","text/html"],["X-Cache","HIT"],["age","3"]]"#
        );
    }
}
