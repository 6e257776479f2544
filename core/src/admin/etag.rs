//! Entity tags and `If-None-Match` (RFC 9110 §13.1.2: weak comparison over a list, `*`).

/// Whether any `If-None-Match` value matches `etag` (a quoted tag, strong or weak). Entries are
/// compared weakly (`W/` ignored on both sides); `*` matches; an unquoted entry is compared with
/// the tag's quoted content, for clients that send the bare revision.
pub(crate) fn if_none_match<'a>(values: impl IntoIterator<Item = &'a str>, etag: &str) -> bool {
    let wanted = opaque(etag);
    values
        .into_iter()
        .flat_map(entity_tags)
        .any(|tag| tag == "*" || opaque(tag) == wanted)
}

/// The tag without `W/` and quotes.
fn opaque(tag: &str) -> &str {
    let tag = tag.strip_prefix("W/").unwrap_or(tag);
    tag.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(tag)
}

/// Splits a header value into entity tags; commas inside quotes do not split.
fn entity_tags(value: &str) -> Vec<&str> {
    let mut tags = Vec::new();
    let mut start = None;
    let mut quoted = false;
    for (i, c) in value.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted => {
                if let Some(s) = start.take() {
                    tags.push(value[s..i].trim());
                }
                continue;
            }
            _ => {}
        }
        if start.is_none() && !c.is_whitespace() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        tags.push(value[s..].trim());
    }
    tags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weak_lists_star_and_bare_values_match() {
        let tag = "\"meta-1\"";
        assert!(if_none_match(["\"meta-1\""], tag));
        assert!(if_none_match(["W/\"meta-1\""], tag));
        assert!(if_none_match(["\"a\", W/\"meta-1\""], tag));
        assert!(if_none_match(["\"a\"", "\"meta-1\""], tag));
        assert!(if_none_match(["*"], tag));
        assert!(if_none_match(["meta-1"], tag));
        assert!(!if_none_match(["\"a,meta-1\""], tag));
        assert!(!if_none_match(["\"meta-2\", \"meta\""], tag));
        assert!(!if_none_match([""], tag));
        assert!(!if_none_match(Vec::<&str>::new(), tag));
    }
}
