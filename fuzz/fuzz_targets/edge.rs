//! Visitor requests and origin answers (HTTP-like text) through the edge plan, the after-origin
//! decision and the edge exchange: never a panic, no CR, LF or NUL in a header the core
//! produces, a redirect's `Location` on the site, every exchange done within a bounded number
//! of steps. See `sitefile_fuzz::edge`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sitefile_fuzz::edge::run(data));
