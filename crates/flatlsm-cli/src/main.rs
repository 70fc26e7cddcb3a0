//! The `flatlsm` command-line tool.
fn main() {}
