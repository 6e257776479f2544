//! The `sitefile` command line.
fn main() {}
