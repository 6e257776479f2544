//! Giving memory back after a spike. mimalloc keeps pages it freed for reuse and, by default,
//! returns them to the system a second later and only when the thread that owns them calls into
//! the allocator again: a server that read and parsed a 60 MiB reload once kept about 100 MiB more for good,
//! until its next spike on another thread took more. Purging at once gives it back as soon as it
//! is freed; on the edge hit benchmark it costs nothing measurable (decision SERVE-24).

// mimalloc's options are set through its C API; each call says why it is sound.
#![allow(unsafe_code)]

/// mimalloc's `mi_option_purge_delay` (its position in `mi_option_t` in `mimalloc.h`, the same
/// in mimalloc 2 and 3; libmimalloc-sys names no constant for it).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Has the allocator return freed memory to the system at once (a purge delay of 0 ms).
pub fn give_back_at_once() {
    // SAFETY: `mi_option_set` takes no pointers; options may be set at any time.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_is_the_purge_delay() {
        // SAFETY: reading an option takes no pointers.
        let default = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
        assert_eq!(default, 1000, "mimalloc 3's purge delay default, in ms");
        give_back_at_once();
        // SAFETY: as above.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 0);
    }
}
