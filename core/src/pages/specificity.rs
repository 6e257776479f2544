//! Page precedence: more specific path patterns are tried first.

/// The sort key of a path pattern, compared descending: patterns without wildcards first, then
/// more literal segments, then more parameter segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Specificity {
    /// No segment holds `*`, `{`, `}` or `?`.
    pub no_wildcard: bool,
    /// Segments that are plain text.
    pub literals: usize,
    /// Segments that start with `:` or `$`.
    pub params: usize,
}

impl Specificity {
    /// The specificity of a path pattern.
    pub fn of(pattern: &str) -> Specificity {
        let mut s = Specificity {
            no_wildcard: true,
            literals: 0,
            params: 0,
        };
        for segment in pattern.split('/').filter(|s| !s.is_empty()) {
            if segment.contains(['*', '{', '}', '?']) {
                s.no_wildcard = false;
            } else if segment.starts_with([':', '$']) {
                s.params += 1;
            } else {
                s.literals += 1;
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_as_the_reference() {
        assert!(Specificity::of("/s") > Specificity::of("/:slug"));
        assert!(Specificity::of("/:slug/p") > Specificity::of("/*"));
        assert!(Specificity::of("/") > Specificity::of("/*"));
        assert!(Specificity::of("/") > Specificity::of("/{x/}?*"));
        assert!(Specificity::of("/a/b/*") > Specificity::of("/a/*"));
    }
}
