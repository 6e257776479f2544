//! Arbitrary bytes as the matcher override header and query parameter: parsing never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sitefile_core::Request;
use sitefile_core::matchers::Overrides;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let middle = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(i, _)| i);
    let (header, query) = text.split_at(middle);
    let Ok(request) = Request::new(&format!(
        "https://s.example/?x-platform-matchers-override={query}"
    )) else {
        return;
    };
    let _ = Overrides::from_request(&request).get(query);
    let with_header = request.with_header("x-platform-matchers-override", header);
    let _ = Overrides::from_request(&with_header).get(header);
});
