//! The C API through its public header: the programs of `tests/c/`, compiled with the system C
//! compiler (`cc`, `-Wall -Wextra -Werror`) against `include/sitefile.h` and the built
//! `libsitefile` shared library. No C compiler is a failure, not a skip.

mod common;

use common::{compile, crate_dir, root, run_ok};
use std::process::Command;

#[test]
fn the_c_program_drives_the_public_api() {
    let exe = compile(&crate_dir().join("tests/c/api.c"), "sitefile-c-api", &[]);
    run_ok(
        Command::new(&exe).arg(root().join("examples/storefront")),
        "sitefile C API: all checks passed",
    );
}

#[test]
fn the_c_host_callbacks_answer_and_fail_as_the_core_reports() {
    let exe = compile(&crate_dir().join("tests/c/host.c"), "sitefile-c-host", &[]);
    run_ok(
        Command::new(&exe).arg(crate_dir().join("tests/c/host-content.json")),
        "sitefile C host callbacks: all checks passed",
    );
}

#[test]
fn the_c_program_drives_the_admin_protocol_and_the_edge() {
    let exe = compile(
        &crate_dir().join("tests/c/admin.c"),
        "sitefile-c-admin",
        &[],
    );
    run_ok(
        &mut Command::new(&exe),
        "sitefile C admin and edge: all checks passed",
    );
}

#[test]
fn threads_resolve_one_site_while_it_reloads_and_never_mix_revisions() {
    let exe = compile(
        &crate_dir().join("tests/c/threads.c"),
        "sitefile-c-threads",
        &["-pthread"],
    );
    run_ok(
        Command::new(&exe).arg("200"),
        "none mixed; all checks passed",
    );
}
