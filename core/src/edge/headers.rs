//! Response header lists (`(name, value)` pairs, names compared ignoring ASCII case) as the edge
//! policy builds and edits them.

use crate::draft::DraftDecision;

/// A list of response headers.
pub type HeaderList = Vec<(String, String)>;

/// The value of header `name`.
pub(crate) fn find<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Removes every `name` header.
pub(crate) fn remove(headers: &mut HeaderList, name: &str) {
    headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
}

/// Sets `name` to `value`, replacing an earlier value.
pub(crate) fn set(headers: &mut HeaderList, name: &str, value: impl Into<String>) {
    let value = value.into();
    match headers
        .iter_mut()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
    {
        Some(slot) => slot.1 = value,
        None => headers.push((name.to_string(), value)),
    }
}

/// Adds each comma-separated token of `tokens` to `Vary` unless it is there already.
pub(crate) fn add_vary(headers: &mut HeaderList, tokens: &str) {
    for token in tokens.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match headers
            .iter_mut()
            .find(|(n, _)| n.eq_ignore_ascii_case("vary"))
        {
            Some((_, v)) if v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)) => {}
            Some((_, v)) => *v = format!("{v}, {token}"),
            None => headers.push(("Vary".into(), token.into())),
        }
    }
}

/// Adds a request's draft headers to a response's `headers`: the decision's response headers
/// (`Vary` merged, the others replacing theirs) and its `Set-Cookie`.
pub(crate) fn add_draft_headers(headers: &mut HeaderList, draft: &DraftDecision) {
    for (name, value) in draft.response_headers() {
        if name.eq_ignore_ascii_case("vary") {
            add_vary(headers, &value);
        } else {
            set(headers, &name, value);
        }
    }
    if let Some(cookie) = draft.set_cookie() {
        headers.push(("Set-Cookie".into(), cookie));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_replaces_and_vary_merges_tokens() {
        let mut h: HeaderList = vec![("vary".into(), "Accept-Encoding".into())];
        set(&mut h, "Cache-Control", "no-store");
        set(&mut h, "cache-control", "private");
        add_vary(&mut h, "accept-encoding, Cookie");
        add_vary(&mut h, "Cookie");
        assert_eq!(find(&h, "CACHE-CONTROL"), Some("private"));
        assert_eq!(find(&h, "Vary"), Some("Accept-Encoding, Cookie"));
        remove(&mut h, "VARY");
        assert_eq!(h.len(), 1);
    }
}
