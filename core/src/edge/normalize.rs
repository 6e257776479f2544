//! URL normalisation for cache keys and purges: tracking parameters stripped, the remaining
//! parameters sorted by name (stable, so repeated names keep their relative order).

use url::form_urlencoded;

/// Tracking parameters removed from cache keys; names compare case-insensitively.
pub const TRACKING_PARAMS: [&str; 19] = [
    "utm_source",
    "utm_medium",
    "utm_campaign",
    "utm_term",
    "utm_content",
    "utmi_campaign",
    "utmi_page",
    "utmi_part",
    "fbclid",
    "gclid",
    "gclsrc",
    "dclid",
    "msclkid",
    "twclid",
    "li_fat_id",
    "mc_cid",
    "mc_eid",
    "ttclid",
    "srsltid",
];

/// Whether `name` is a tracking parameter (built in, or one of `extra`), ignoring case.
pub fn is_tracking_param(name: &str, extra: &[String]) -> bool {
    builtin_tracking(name) || extra.iter().any(|t| t.eq_ignore_ascii_case(name))
}

fn builtin_tracking(name: &str) -> bool {
    let mut buf = [0u8; 13];
    let Some(lower) = buf.get_mut(..name.len()) else {
        return false;
    };
    for (dst, src) in lower.iter_mut().zip(name.bytes()) {
        *dst = src.to_ascii_lowercase();
    }
    TRACKING_PARAMS.iter().any(|t| t.as_bytes() == lower)
}

/// The normalised query (without `?`): pairs decoded, tracking parameters dropped when `strip`,
/// sorted by name keeping the order of repeated names, re-encoded as
/// `application/x-www-form-urlencoded`. Empty when nothing remains.
pub fn normalize_query(query: Option<&str>, strip: bool, extra: &[String]) -> String {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return String::new();
    };
    if let Some(fast) = normalize_canonical(query, strip, extra) {
        return fast;
    }
    let mut pairs: Vec<(std::borrow::Cow<'_, str>, std::borrow::Cow<'_, str>)> =
        form_urlencoded::parse(query.as_bytes())
            .filter(|(k, _)| !(strip && is_tracking_param(k, extra)))
            .collect();
    if pairs.is_empty() {
        return String::new();
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = form_urlencoded::Serializer::new(String::with_capacity(query.len()));
    for (k, v) in &pairs {
        out.append_pair(k, v);
    }
    out.finish()
}

/// Whether a raw `name=value` pair is already in the serializer's canonical form (decoding and
/// re-encoding it gives it back): one `=`, and only `A-Za-z0-9*-._+` around it.
fn is_canonical_pair(pair: &str) -> bool {
    let mut eq = 0;
    pair.bytes().all(|b| match b {
        b'=' => {
            eq += 1;
            eq == 1
        }
        b'+' | b'*' | b'-' | b'.' | b'_' => true,
        _ => b.is_ascii_alphanumeric(),
    }) && eq == 1
}

/// The fast path of [`normalize_query`] for queries whose pairs are all canonical already:
/// filter and sort the raw pairs without decoding. `None` sends the query to the slow path.
fn normalize_canonical(query: &str, strip: bool, extra: &[String]) -> Option<String> {
    let mut pairs: Vec<(&str, &str)> = Vec::with_capacity(8);
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if !is_canonical_pair(pair) {
            return None;
        }
        let name = pair.split('=').next().unwrap_or("");
        // A `+` in a name decodes to a space; leave such names to the slow path.
        if name.contains('+') {
            return None;
        }
        if !(strip && is_tracking_param(name, extra)) {
            pairs.push((name, pair));
        }
    }
    pairs.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = String::with_capacity(query.len());
    for (i, (_, pair)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(pair);
    }
    Some(out)
}

/// Splits a purge target (`/path?query`, or an absolute URL) into its path and normalised query.
/// Returns `None` when the target cannot be read as a URL path.
pub fn normalize_target(target: &str, strip: bool, extra: &[String]) -> Option<(String, String)> {
    let base = url::Url::parse("http://localhost/").ok()?;
    let target = target.trim();
    if target.is_empty() {
        return None;
    }
    let url = if target.contains("://") {
        url::Url::parse(target).ok()?
    } else {
        let relative = if target.starts_with('/') {
            target.to_string()
        } else {
            format!("/{target}")
        };
        base.join(&relative).ok()?
    };
    Some((
        url.path().to_string(),
        normalize_query(url.query(), strip, extra),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn strips_tracking_params_case_insensitively() {
        let q = normalize_query(
            Some("utm_source=x&UTM_Medium=y&a=1&fbclid=z&gclid=1&srsltid=2"),
            true,
            &[],
        );
        assert_eq!(q, "a=1");
        let q = normalize_query(Some("utm_source=x&a=1"), false, &[]);
        assert_eq!(q, "a=1&utm_source=x", "query kept when stripping is off");
        let q = normalize_query(Some("ref=x&a=1"), true, &["REF".to_string()]);
        assert_eq!(q, "a=1", "registered extra params are stripped too");
        assert_eq!(normalize_query(Some("utm_campaign=a"), true, &[]), "");
        assert_eq!(normalize_query(Some(""), true, &[]), "");
        assert_eq!(normalize_query(None, true, &[]), "");
    }

    #[test]
    fn parameter_order_does_not_matter_but_repeats_keep_order() {
        assert_eq!(
            normalize_query(Some("b=2&a=1"), true, &[]),
            normalize_query(Some("a=1&b=2"), true, &[])
        );
        assert_ne!(
            normalize_query(Some("a=1&a=2"), true, &[]),
            normalize_query(Some("a=2&a=1"), true, &[])
        );
        assert_eq!(
            normalize_query(Some("q=a%20b"), true, &[]),
            normalize_query(Some("q=a+b"), true, &[])
        );
    }

    #[test]
    fn purge_targets() {
        assert_eq!(
            normalize_target("/p?b=1&a=2&utm_source=x", true, &[]),
            Some(("/p".into(), "a=2&b=1".into()))
        );
        assert_eq!(
            normalize_target("https://shop.com/x/", true, &[]),
            Some(("/x/".into(), String::new()))
        );
        assert_eq!(
            normalize_target("x", true, &[]),
            Some(("/x".into(), String::new()))
        );
        assert_eq!(normalize_target("  ", true, &[]), None);
    }

    proptest! {
        #[test]
        fn never_keeps_a_tracking_param(
            params in proptest::collection::vec(("[a-zA-Z_]{1,10}", "[a-z0-9 &=%+]{0,6}"), 0..8),
            tracking in proptest::collection::vec((0usize..19, any::<bool>(), "[a-z0-9]{0,4}"), 0..4),
        ) {
            let mut ser = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &params { ser.append_pair(k, v); }
            for (i, upper, v) in &tracking {
                let name = if *upper { TRACKING_PARAMS[*i].to_ascii_uppercase() } else { TRACKING_PARAMS[*i].to_string() };
                ser.append_pair(&name, v);
            }
            let raw = ser.finish();
            let out = normalize_query(Some(&raw), true, &[]);
            for (k, _) in form_urlencoded::parse(out.as_bytes()) {
                prop_assert!(!is_tracking_param(&k, &[]));
            }
            let kept = params.iter().filter(|(k, _)| !is_tracking_param(k, &[])).count();
            prop_assert_eq!(form_urlencoded::parse(out.as_bytes()).count(), kept);
        }

        #[test]
        fn normalisation_is_idempotent_and_order_insensitive(
            params in proptest::collection::vec(("[a-z]{1,4}", "[a-zA-Z0-9 ~%]{0,6}"), 0..8),
        ) {
            let mut ser = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &params { ser.append_pair(k, v); }
            let raw = ser.finish();
            let once = normalize_query(Some(&raw), true, &[]);
            prop_assert_eq!(normalize_query(Some(&once), true, &[]), once.clone());
            // Reversing distinct names gives the same key.
            let mut seen = std::collections::HashSet::new();
            let distinct: Vec<_> = params.iter().filter(|(k, _)| seen.insert(k.clone())).collect();
            let mut a = form_urlencoded::Serializer::new(String::new());
            let mut b = form_urlencoded::Serializer::new(String::new());
            for (k, v) in &distinct { a.append_pair(k, v); }
            for (k, v) in distinct.iter().rev() { b.append_pair(k, v); }
            prop_assert_eq!(normalize_query(Some(&a.finish()), true, &[]), normalize_query(Some(&b.finish()), true, &[]));
        }

        #[test]
        fn fast_path_agrees_with_full_decoding(
            params in proptest::collection::vec(("[a-zA-Z0-9_.+*%-]{0,5}", "[a-zA-Z0-9_.+*%= -]{0,5}"), 0..6),
            flags in proptest::collection::vec("[a-z]{1,3}", 0..2),
        ) {
            let mut raw: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
            raw.extend(flags);
            let raw = raw.join("&");
            let slow = {
                let mut pairs: Vec<(String, String)> = form_urlencoded::parse(raw.as_bytes())
                    .filter(|(k, _)| !is_tracking_param(k, &[]))
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                pairs.sort_by(|a, b| a.0.cmp(&b.0));
                let mut ser = form_urlencoded::Serializer::new(String::new());
                for (k, v) in &pairs { ser.append_pair(k, v); }
                ser.finish()
            };
            prop_assert_eq!(normalize_query(Some(&raw), true, &[]), slow);
        }

        #[test]
        fn never_panics(q in ".*") {
            let _ = normalize_query(Some(&q), true, &[]);
            let _ = normalize_target(&q, true, &[]);
        }
    }
}
