//! The page cache: the synchronous pass of a page (everything but loader results) kept per
//! revision, page and the request facets the page turned out to depend on. A page whose
//! matchers read only the device class, the host or the time is resolved once per device, host
//! and span of time in which its time rules answer alike; pages that read cookies, query,
//! location, cohorts or host callbacks are never cached here.

use super::first_pass::FirstPass;
use crate::device::Device;
use crate::effects::TimeWindow;
use crate::request::Request;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// Most cached variants kept for one revision; the cache starts over when full.
const MAX_VARIANTS: usize = 4096;

/// Facets a cached page may depend on.
const CACHEABLE_FACETS: &[&str] = &["device", "host", "time"];

#[derive(Debug)]
struct Variant {
    device: Option<Device>,
    host: Option<String>,
    /// The instants its time rules answer alike at.
    steady: TimeWindow,
    pass: Arc<FirstPass>,
}

impl Variant {
    fn fits(&self, request: &Request) -> bool {
        self.steady.holds(request.now.timestamp_millis())
            && self.device.is_none_or(|d| d == request.device())
            && self
                .host
                .as_deref()
                .is_none_or(|h| Some(h) == request.url().host_str())
    }
}

#[derive(Debug, Default)]
struct Inner {
    revision: String,
    count: usize,
    pages: FxHashMap<String, Vec<Variant>>,
}

/// First passes by (page, params), for the current revision only.
#[derive(Debug, Default)]
pub struct PageCache {
    inner: Mutex<Inner>,
}

impl PageCache {
    /// The cached first pass of `page` that fits `request`.
    pub(crate) fn get(
        &self,
        revision: &str,
        page: &str,
        request: &Request,
    ) -> Option<Arc<FirstPass>> {
        let inner = self.inner.lock();
        if inner.revision != revision {
            return None;
        }
        inner
            .pages
            .get(page)?
            .iter()
            .find(|v| v.fits(request))
            .map(|v| v.pass.clone())
    }

    /// Whether [`PageCache::put`] keeps `pass`: the page depends on no facet beyond the device
    /// class, host and time.
    pub(crate) fn keeps(pass: &FirstPass) -> bool {
        pass.effects
            .varies
            .iter()
            .all(|f| CACHEABLE_FACETS.contains(&f.as_str()))
    }

    /// Keeps `pass` when [`PageCache::keeps`] it.
    pub(crate) fn put(&self, revision: &str, page: String, request: &Request, pass: &FirstPass) {
        if !PageCache::keeps(pass) {
            return;
        }
        let varies = &pass.effects.varies;
        let has = |facet: &str| varies.iter().any(|f| f == facet);
        let variant = Variant {
            device: has("device").then(|| request.device()),
            host: has("host").then(|| request.url().host_str().unwrap_or_default().to_string()),
            steady: pass.effects.steady,
            pass: Arc::new(pass.clone()),
        };
        let mut inner = self.inner.lock();
        if inner.revision != revision || inner.count >= MAX_VARIANTS {
            *inner = Inner {
                revision: revision.to_string(),
                ..Inner::default()
            };
        }
        inner.count += 1;
        inner.pages.entry(page).or_default().push(variant);
    }

    /// Drops everything.
    pub fn clear(&self) {
        *self.inner.lock() = Inner::default();
    }
}

#[cfg(test)]
mod tests {
    use crate::content::Snapshot;
    use crate::request::Request;
    use crate::resolve::{ResolveConfig, ResolvedPage, Runtime};
    use crate::value::Value;

    fn runtime(json: &str) -> Runtime {
        let v = Value::from_json_str(json).unwrap();
        let blocks = v.as_object().unwrap().entries().to_vec();
        Runtime::new(
            Snapshot::from_blocks(blocks),
            ResolveConfig::by_convention(),
        )
    }

    fn resolve(runtime: &Runtime, ua: &str, now: &str) -> ResolvedPage {
        let request = Request::new("https://s.example/")
            .unwrap()
            .with_header("user-agent", ua)
            .with_now(now.parse().unwrap());
        runtime.resolve_page(request).run(|_| Ok(Value::Null))
    }

    fn title(runtime: &Runtime, ua: &str, now: &str) -> Option<String> {
        resolve(runtime, ua, now)
            .sections
            .first()
            .and_then(|s| s.props.get("t").and_then(Value::as_str).map(str::to_string))
    }

    const PHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148";
    const DESK: &str = "Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0";
    const NOW: &str = "2026-01-01T00:00:00Z";

    #[test]
    fn device_variants_are_cached_apart() {
        let rt = runtime(
            r#"{"pages-home":{"path":"/","sections":[{"__resolveType":"website/flags/multivariate.ts","variants":[
                {"rule":{"__resolveType":"website/matchers/device.ts","mobile":true},"value":{"__resolveType":"site/sections/H.tsx","t":"m"}},
                {"rule":{"__resolveType":"website/matchers/always.ts"},"value":{"__resolveType":"site/sections/H.tsx","t":"d"}}]}]}}"#,
        );
        for _ in 0..2 {
            assert_eq!(title(&rt, DESK, NOW).as_deref(), Some("d"));
            assert_eq!(title(&rt, PHONE, NOW).as_deref(), Some("m"));
        }
        let inner = rt.caches_for_tests().pages.inner.lock();
        assert_eq!(inner.count, 2, "one variant per device class");
    }

    #[test]
    fn time_dependent_pages_are_cached_for_the_span_their_rules_answer_alike() {
        // A sale from June 1st (date: strictly after) to June 30th (cron: up to and including).
        let rt = runtime(
            r#"{"pages-home":{"path":"/","sections":[{"__resolveType":"website/flags/multivariate.ts","variants":[
                {"rule":{"__resolveType":"website/matchers/date.ts","start":"2026-06-01T00:00:00Z"},"value":{"__resolveType":"website/flags/multivariate.ts","variants":[
                    {"rule":{"__resolveType":"website/matchers/cron.ts","end":"2026-06-30T00:00:00Z"},"value":{"__resolveType":"site/sections/H.tsx","t":"sale"}},
                    {"rule":{"__resolveType":"website/matchers/always.ts"},"value":{"__resolveType":"site/sections/H.tsx","t":"after"}}]}},
                {"rule":{"__resolveType":"website/matchers/always.ts"},"value":{"__resolveType":"site/sections/H.tsx","t":"before"}}]}]}}"#,
        );
        let at = |now: &str| title(&rt, DESK, now);
        let variants = || rt.caches_for_tests().pages.inner.lock().count;
        assert_eq!(at("2026-05-01T00:00:00Z").as_deref(), Some("before"));
        assert_eq!(
            at("2026-06-01T00:00:00Z").as_deref(),
            Some("before"),
            "strictly after"
        );
        assert_eq!(variants(), 1, "the same span: served from the cache");
        assert_eq!(at("2026-06-01T00:00:00.001Z").as_deref(), Some("sale"));
        assert_eq!(at("2026-06-15T00:00:00Z").as_deref(), Some("sale"));
        assert_eq!(
            at("2026-06-30T00:00:00Z").as_deref(),
            Some("sale"),
            "inclusive"
        );
        assert_eq!(variants(), 2);
        assert_eq!(at("2026-06-30T00:00:00.001Z").as_deref(), Some("after"));
        assert_eq!(at("2026-05-31T23:59:59Z").as_deref(), Some("before"));
        assert_eq!(at("2026-06-20T00:00:00Z").as_deref(), Some("sale"));
        assert_eq!(variants(), 3, "one variant per span");
    }

    #[test]
    fn a_cached_page_makes_the_same_sections_and_warnings() {
        let rt = runtime(
            r#"{"pages-home":{"path":"/","sections":[
                {"__resolveType":"site/sections/H.tsx","t":"1","inner":{"__resolveType":"site/sections/I.tsx","u":2}},
                {"__resolveType":"site/components/Plain.tsx","t":"x"}]}}"#,
        );
        let page = || resolve(&rt, DESK, NOW);
        let first = page();
        assert_eq!(rt.caches_for_tests().pages.inner.lock().count, 1);
        let cached = page();
        assert_eq!(cached, first);
        assert_eq!(first.sections.len(), 1);
        assert_eq!(
            first.sections[0].props.to_canonical_string(),
            r#"{"inner":{"Component":"site/sections/I.tsx","props":{"u":2}},"t":"1"}"#
        );
        assert_eq!(
            cached.effects.warnings,
            vec!["no component registered for site/components/Plain.tsx; section dropped"]
        );
    }

    #[test]
    fn a_cached_page_keeps_the_json_of_its_large_sections_and_writes_the_same_bytes() {
        let items: Vec<String> = (0..20).map(|i| format!(r#""é \"{i}\"""#)).collect();
        let rt = runtime(&format!(
            r#"{{"pages-home":{{"path":"/","sections":[
                {{"__resolveType":"site/sections/H.tsx","t":"1"}},
                {{"__resolveType":"site/sections/L.tsx","items":[{}],"inner":{{"__resolveType":"site/sections/I.tsx","u":2}}}}]}}}}"#,
            items.join(",")
        ));
        let page = || resolve(&rt, DESK, NOW);
        let expected = serde_json::to_vec(&page()).unwrap();
        for _ in 0..2 {
            let cached = page();
            assert!(cached.sections[1].props.has_json_room(), "a large section");
            assert!(!cached.sections[0].props.has_json_room(), "a small one");
            assert_eq!(cached.to_json_bytes(), expected);
        }
    }

    #[test]
    fn reload_invalidates() {
        let rt = runtime(
            r#"{"pages-home":{"path":"/","sections":[{"__resolveType":"site/sections/H.tsx","t":"1"}]}}"#,
        );
        assert_eq!(title(&rt, DESK, NOW).as_deref(), Some("1"));
        rt.reload(
            br#"{"blocks":{"pages-home":{"path":"/","sections":[{"__resolveType":"site/sections/H.tsx","t":"2"}]}}}"#,
            NOW.parse().unwrap(),
        )
        .unwrap();
        assert_eq!(title(&rt, DESK, NOW).as_deref(), Some("2"));
    }
}
