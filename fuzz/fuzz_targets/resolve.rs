//! Arbitrary bytes as a content map: loading and resolving a few URLs must never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sitefile_core::Request;
use sitefile_core::content::{Snapshot, load_bundle};
use sitefile_core::resolve::{ResolveConfig, Runtime};
use sitefile_core::value::Value;

fuzz_target!(|data: &[u8]| {
    let snapshot = match Value::from_slice(data) {
        Ok(Value::Object(map)) => Snapshot::from_blocks(map.entries().to_vec()),
        _ => match load_bundle(data.to_vec()) {
            Ok(snapshot) => snapshot,
            Err(_) => return,
        },
    };
    let _ = snapshot.revision();
    let runtime = Runtime::new(snapshot, ResolveConfig::by_convention());
    for url in [
        "https://s.example/",
        "https://s.example/a/b?q=1",
        "https://s.example/x/p",
    ] {
        let request = Request::new(url)
            .expect("fixed URLs parse")
            .with_header("user-agent", "Mozilla/5.0 (iPhone) Mobile");
        let _ = runtime
            .resolve_page(request)
            .run(|call| Ok(call.props.clone()));
    }
});
