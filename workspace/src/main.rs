//! Standalone workspace server (work in progress).
fn main() {}
