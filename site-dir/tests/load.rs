//! Loading a site directory from disk, as the command line and the benchmarks do.

use sitefile_core::{ErrorCode, HasErrorCode, LoadProblem};
use sitefile_site_dir::{SiteError, Source, blocks_dir, load, load_directory};
use std::path::PathBuf;

/// A fresh temporary directory for one test.
fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sitefile-site-dir-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_blocks_directory_wins_over_the_bundle() {
    let root = temp("prefer");
    let blocks = root.join(".platform/blocks");
    std::fs::create_dir_all(&blocks).unwrap();
    std::fs::write(blocks.join("A.json"), r#"{"from":"dir"}"#).unwrap();
    std::fs::write(blocks.join("notes.txt"), "not a block").unwrap();
    std::fs::write(
        root.join(".platform/blocks.gen.json"),
        "{\n\"A\":{\"from\":\"bundle\"}\n}\n",
    )
    .unwrap();
    assert_eq!(blocks_dir(&root), Some(blocks.clone()));
    let site = load(&root).unwrap();
    assert_eq!(site.source, Source::Directory(blocks.clone()));
    assert_eq!(site.snapshot.len(), 1);
    assert!(site.problems.is_empty());

    std::fs::remove_dir_all(&blocks).unwrap();
    let site = load(&root).unwrap();
    assert!(matches!(site.source, Source::Bundle(_)));
    assert_eq!(site.snapshot.len(), 1);

    assert!(matches!(load(&temp("empty")), Err(SiteError::NotFound(_))));
}

#[test]
fn invalid_files_are_reported_not_fatal() {
    let dir = temp("invalid");
    std::fs::write(dir.join("A.json"), "{}").unwrap();
    std::fs::write(dir.join("B.json"), "{").unwrap();
    let (snapshot, problems) = load_directory(&dir).unwrap();
    assert_eq!(snapshot.len(), 1);
    assert!(
        matches!(&problems[..], [LoadProblem::InvalidJson { file, .. }] if file == "B.json"),
        "{problems:?}"
    );
}

#[cfg(unix)]
#[test]
fn symlinks_and_non_utf8_names_are_skipped_and_named() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let dir = temp("skipped");
    let blocks = dir.join("blocks");
    std::fs::create_dir_all(&blocks).unwrap();
    std::fs::write(blocks.join("A.json"), "{}").unwrap();
    std::fs::write(dir.join("target.json"), "{}").unwrap();
    std::os::unix::fs::symlink(dir.join("target.json"), blocks.join("Link.json")).unwrap();
    std::os::unix::fs::symlink(dir.join("missing.json"), blocks.join("Dangling.json")).unwrap();
    std::fs::write(blocks.join(OsStr::from_bytes(b"N\xffo.json")), "{}").unwrap();
    // Neither a symlink nor a non-UTF-8 name matters when it is not a `.json` file.
    std::os::unix::fs::symlink(dir.join("target.json"), blocks.join("link.txt")).unwrap();

    let (snapshot, problems) = load_directory(&blocks).unwrap();
    assert_eq!(snapshot.len(), 1, "only A");
    assert_eq!(
        problems,
        vec![
            LoadProblem::Symlink {
                file: "Dangling.json".into()
            },
            LoadProblem::Symlink {
                file: "Link.json".into()
            },
            LoadProblem::NonUtf8Name {
                file: "N\u{fffd}o.json".into()
            },
        ]
    );
}

#[test]
fn errors_carry_the_cores_stable_codes() {
    let empty = load(&temp("codes-empty")).unwrap_err();
    assert_eq!(empty.code(), ErrorCode::NotFound);
    let root = temp("codes-bundle");
    std::fs::create_dir_all(root.join(".platform")).unwrap();
    std::fs::write(root.join(".platform/blocks.gen.json"), "[1, 2]").unwrap();
    let bundle = load(&root).unwrap_err();
    assert!(matches!(bundle, SiteError::Bundle { .. }), "{bundle}");
    assert_eq!(bundle.code(), ErrorCode::InvalidJson);
    let unreadable = root.join("not-a-dir.json");
    std::fs::write(&unreadable, "{}").unwrap();
    let io = load_directory(&unreadable).unwrap_err();
    assert_eq!(io.code(), ErrorCode::Io, "{io}");
}
