//! Memory held by a loaded site against its JSON size (prints figures; not a timing). A counting
//! allocator measures the bytes still allocated once loading is done, so buffers freed during the
//! load are not counted. It then resolves and serialises every corpus URL of the site once,
//! bypassing the page and layout caches, drops the pages, and reports what the content holds
//! more than after loading (what writing pages leaves behind: the serialised JSON kept for
//! large static subtrees, and whatever else a request fills).

// Counting needs a global allocator, which is an `unsafe` trait.
#![allow(unsafe_code)]

use sitefile_benches::{load_site, request, site_files, urls};
use sitefile_core::NoHost;
use sitefile_core::resolve::{RequestOptions, ResolveConfig, Runtime};
use sitefile_core::value::Value;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator unchanged; only a counter is updated.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        // SAFETY: same layout as requested by the caller.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let urls = urls();
    for site in [
        "lojaintegradar",
        "otica-isabela",
        "dryzunstore",
        "abracasa",
        "fossil",
        "bolovo-store",
    ] {
        let json_bytes: usize = site_files(site).iter().map(|(_, b)| b.len()).sum();
        let before = LIVE.load(Ordering::Relaxed);
        let snapshot = load_site(site);
        let held = LIVE.load(Ordering::Relaxed) - before;
        println!(
            "{site}: json {:.2} MB, held after load {:.2} MB ({:.2}x)",
            json_bytes as f64 / 1e6,
            held as f64 / 1e6,
            held as f64 / json_bytes as f64,
        );
        let runtime = Runtime::new(snapshot, ResolveConfig::by_convention());
        let options = RequestOptions {
            bypass_caches: true,
            ..RequestOptions::default()
        };
        let loaded = LIVE.load(Ordering::Relaxed);
        let mut written = 0usize;
        for url in urls.get(site).map(Vec::as_slice).unwrap_or_default() {
            let page = runtime
                .resolve_page_with(request(url), options.clone(), &NoHost)
                .run(|_| Ok(Value::Null));
            written += page.to_json_bytes().len();
        }
        let after = LIVE.load(Ordering::Relaxed).saturating_sub(loaded);
        println!(
            "{site}: serialised every url once ({:.2} MB of pages), then held {:.3} MB more",
            written as f64 / 1e6,
            after as f64 / 1e6,
        );
        drop(runtime);
    }
}
