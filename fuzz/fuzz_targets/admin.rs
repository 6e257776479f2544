//! Admin requests (method, path, query, headers, body as HTTP-like text) through
//! `Site::admin_head`, `Site::handle_admin` and the job the outcome names: never a panic, the
//! revision changed only by an accepted reload, no CR, LF or NUL in a response header. See
//! `sitefile_fuzz::admin`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| sitefile_fuzz::admin::run(data));
