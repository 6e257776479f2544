//! What the `admin` and `edge` fuzz targets share: the text form of their inputs, the sites they
//! run against, the property checks, and the generator of the seeds in `seeds/`.
//!
//! Inputs are text shaped like an HTTP request (a request line, header lines, a blank line, the
//! rest), so a seed is readable, can be written by hand or from real content, and the fuzzer's
//! mutations stay close to what a host hands the core. Header fields are filtered to those a
//! real host can produce (an HTTP token for the name, a value with no control character but
//! tab), the way hyper, Node and workerd refuse the others before any binding sees them; the
//! method, path, query and body are kept as they come.
//!
//! Each target's `run` panics when a property does not hold; `cargo test` in `fuzz/` runs every
//! seed through it on the stable toolchain.

pub mod admin;
pub mod edge;
pub mod seeds;
pub mod sites;

/// A request's head and the bytes after it, read from fuzzer input.
#[derive(Debug, Default, Clone)]
pub struct Head {
    /// The method (the request line's first word).
    pub method: String,
    /// The request target (its second word), path and query together.
    pub target: String,
    /// The header fields a host could hand over, in order.
    pub headers: Vec<(String, String)>,
}

/// At most this many header fields are read (hosts cap them too; hyper at 100).
pub const MAX_HEADERS: usize = 64;

/// Splits `data` at the first blank line: the head's lines (lossy UTF-8, `\r` dropped at line
/// ends) and the bytes after the blank line.
pub fn split_head(data: &[u8]) -> (Vec<String>, &[u8]) {
    let mut lines = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let end = rest.iter().position(|&b| b == b'\n');
        let (line, after) = match end {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = after;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            return (lines, rest);
        }
        lines.push(String::from_utf8_lossy(line).into_owned());
    }
    (lines, rest)
}

/// Reads a request line (`METHOD target [version]`) and header lines (`name: value`).
pub fn parse_head(lines: &[String]) -> Head {
    let mut head = Head::default();
    let Some((request_line, fields)) = lines.split_first() else {
        return head;
    };
    let mut words = request_line.split(' ');
    head.method = words.next().unwrap_or_default().to_string();
    head.target = words.next().unwrap_or_default().to_string();
    head.headers = header_fields(fields);
    head
}

/// Header lines as fields, keeping only those a host could produce.
pub fn header_fields(lines: &[String]) -> Vec<(String, String)> {
    lines
        .iter()
        .filter_map(|line| {
            let (name, value) = line.split_once(':')?;
            let value = value.trim_matches([' ', '\t']);
            valid_field(name, value).then(|| (name.to_string(), value.to_string()))
        })
        .take(MAX_HEADERS)
        .collect()
}

/// Whether `name` is an HTTP token (RFC 9110 §5.6.2).
pub fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c))
}

/// Whether `name: value` is a field a host hands over: a token name, a value with no control
/// character but tab.
pub fn valid_field(name: &str, value: &str) -> bool {
    is_token(name) && !value.chars().any(|c| c.is_ascii_control() && c != '\t')
}

/// Panics when a header name or value holds CR, LF or NUL (a response split or smuggled).
pub fn check_headers(headers: &[(String, String)], what: &str) {
    for (name, value) in headers {
        let bad = |s: &str| s.contains(['\r', '\n', '\0']);
        assert!(
            !bad(name) && !bad(value),
            "{what}: header {name:?}: {value:?} holds CR, LF or NUL"
        );
        assert!(!name.is_empty(), "{what}: a header with an empty name");
    }
}
