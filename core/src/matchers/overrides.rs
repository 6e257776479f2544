//! Forcing variants for testing: the `x-platform-matchers-override` header or query parameter.

use crate::request::Request;

/// Name of the override header and of the query parameter.
pub const OVERRIDE_HEADER: &str = "x-platform-matchers-override";

/// Most pairs read from one request; the rest are ignored.
const MAX_PAIRS: usize = 256;

/// The forced matcher values of one request.
///
/// A non-empty header wins outright (the query is then ignored) and is split on single spaces;
/// the query parameter is repeated, one URL-decoded pair per occurrence, so only there can a
/// name contain a space. A pair is `<name>=<value>` split at the first `=`; a pair without `=`,
/// or with an empty name, is ignored; only the value `1` forces true, any other forces false.
/// Names are saved matcher block names or inline rule ids `<blockId>@<path>`. A later pair for
/// the same name wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    forced: Vec<(String, bool)>,
}

impl Overrides {
    /// Parses the overrides a request carries.
    pub fn from_request(req: &Request) -> Overrides {
        let forced = match req.header(OVERRIDE_HEADER).filter(|h| !h.is_empty()) {
            Some(header) => header.split(' ').filter_map(pair).take(MAX_PAIRS).collect(),
            None => req
                .url()
                .query_pairs()
                .filter(|(k, _)| k == OVERRIDE_HEADER)
                .filter_map(|(_, v)| pair(&v))
                .take(MAX_PAIRS)
                .collect(),
        };
        Overrides { forced }
    }

    /// Whether the request forces nothing. Any forced value disables sticky random decisions.
    pub fn is_empty(&self) -> bool {
        self.forced.is_empty()
    }

    /// The forced value for a saved matcher name or inline rule id.
    pub fn get(&self, name: &str) -> Option<bool> {
        self.forced
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| *v)
    }
}

fn pair(text: &str) -> Option<(String, bool)> {
    let (name, value) = text.split_once('=')?;
    (!name.is_empty()).then(|| (name.to_string(), value == "1"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matchers::test_support::request;

    #[test]
    fn header_pairs_split_on_spaces() {
        let o = Overrides::from_request(
            &request("/").with_header(OVERRIDE_HEADER, "A=1 B=0 C=true D==1 =1 E  F=1 A=0x"),
        );
        assert_eq!(o.get("A"), Some(false), "later pair wins; only 1 is true");
        assert_eq!(o.get("B"), Some(false));
        assert_eq!(o.get("C"), Some(false));
        assert_eq!(o.get("D"), Some(false), "split at the first =");
        assert_eq!(o.get("E"), None);
        assert_eq!(o.get("F"), Some(true));
        assert_eq!(o.get(""), None);
        assert!(!o.is_empty());
    }

    #[test]
    fn query_pairs_repeat_and_decode() {
        let o = Overrides::from_request(&request(
            "/?x-platform-matchers-override=Hero%20Test%3D1&x-platform-matchers-override=B=0&x-platform-matchers-override=C+D=1",
        ));
        assert_eq!(o.get("Hero Test"), Some(true));
        assert_eq!(o.get("B"), Some(false));
        assert_eq!(o.get("C D"), Some(true));
    }

    #[test]
    fn header_wins_over_query() {
        let req = request("/?x-platform-matchers-override=Q=1").with_header(OVERRIDE_HEADER, "H=1");
        let o = Overrides::from_request(&req);
        assert_eq!(o.get("H"), Some(true));
        assert_eq!(o.get("Q"), None);
        let empty_header =
            request("/?x-platform-matchers-override=Q=1").with_header(OVERRIDE_HEADER, "");
        assert_eq!(Overrides::from_request(&empty_header).get("Q"), Some(true));
    }

    #[test]
    fn nothing_forced_without_carrier() {
        assert!(Overrides::from_request(&request("/?a=1")).is_empty());
        assert!(
            Overrides::from_request(&request("/").with_header(OVERRIDE_HEADER, "junk")).is_empty()
        );
    }
}
