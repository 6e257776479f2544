//! Proxy overhead benchmark (work in progress).
fn main() {}
