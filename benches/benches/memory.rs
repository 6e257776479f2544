//! Memory held by a loaded site against its JSON size (prints figures; not a timing). A counting
//! allocator measures the bytes still allocated once loading is done, so buffers freed during the
//! load are not counted.

use sitefile_benches::{load_site, site_files};
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
        drop(snapshot);
    }
}
