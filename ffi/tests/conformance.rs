//! The C runner of `tests/conformance/` (`tests/c/conformance.c`): every suite the Rust core's
//! runner (`core/tests/conformance/`) runs, run through the C API with the conventions of the
//! conformance README. The runner prints each suite's files and cases passed and fails naming
//! every failing file and case; a suite directory it has no runner for fails too, unless its
//! `UNCOVERED` list names it. Needs Debian's cJSON (`libcjson-dev`), installed when missing.

mod common;

use common::{conformance_dir, conformance_runner, run_ok};
use std::process::Command;

#[test]
fn every_conformance_case_passes_through_the_c_api() {
    let exe = conformance_runner("sitefile-c-conformance");
    let run = run_ok(
        Command::new(&exe).arg(conformance_dir()),
        "sitefile C conformance: all cases passed",
    );
    print!("{}", String::from_utf8_lossy(&run.stdout));
}
