//! The property checks the targets rely on do catch what they are for.

use sitefile_fuzz::check_headers;
use sitefile_fuzz::edge::check_location;
use url::Url;

fn page() -> Url {
    Url::parse("https://shop.example/a/b?c=1").expect("a URL")
}

#[test]
fn locations_on_the_site_pass() {
    for location in [
        "/",
        "/new?keep=1",
        "/%2F%2Fevil.example",
        "https://shop.example/@evil.example",
        "http://shop.example/x#y",
    ] {
        check_location(location, &page());
    }
}

#[test]
fn locations_off_the_site_are_caught() {
    for location in [
        "//evil.example",
        "/\\evil.example",
        "/\t/evil.example",
        "https://evil.example/",
        "https://shop.example.evil.example/",
        "https://shop.example@evil.example/",
        "javascript:alert(1)",
    ] {
        let caught = std::panic::catch_unwind(|| check_location(location, &page())).is_err();
        assert!(caught, "{location:?} passed");
    }
}

#[test]
fn split_headers_are_caught() {
    for (name, value) in [
        ("X-A", "1\r\nSet-Cookie: s=1"),
        ("X-A", "1\n"),
        ("X-A", "\0"),
        ("X-A\r\n", "1"),
    ] {
        let headers = vec![(name.to_string(), value.to_string())];
        let caught = std::panic::catch_unwind(|| check_headers(&headers, "test")).is_err();
        assert!(caught, "{name:?}: {value:?} passed");
    }
    check_headers(&[("X-Note".into(), "caf\u{e9}\tau lait".into())], "test");
}
