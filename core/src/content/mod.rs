//! Content: the flat map of JSON blocks, its immutable snapshots, revisions and reloads.

mod block;
mod block_name;
mod bundle;
mod canonical;
pub mod fast_deploy;
mod files;
mod reload;
mod revision;
mod snapshot;
mod store;

#[cfg(feature = "internals")]
pub use block_name::decode_block_name;
#[cfg(feature = "internals")]
pub use bundle::{parse_bundle, write_bundle};
#[cfg(feature = "internals")]
pub use files::LoadedBlocks;
#[cfg(any(test, feature = "internals"))]
pub use files::blocks_from_files;
pub use files::{FileBytes, LoadProblem, read_blocks};
pub use reload::{ReloadError, ReloadOutcome, ReloadResponse, reload_body};
#[cfg(feature = "internals")]
pub use reload::{ReloadMode, plan_reload};
#[cfg(feature = "internals")]
pub use revision::block_digest;
pub use snapshot::{Snapshot, load_bundle};
#[cfg(feature = "internals")]
pub use store::Observer;
pub use store::{ContentStore, ReloadRefused};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Value;

    /// Content blocks keep their JSON (written by page after page); a value parsed the
    /// ordinary way, as a loader result or a request body is, does not.
    #[test]
    fn content_blocks_have_room_for_their_json_and_ordinary_values_do_not() {
        let items = (0..40).map(|i| format!(r#""s{i}""#)).collect::<Vec<_>>();
        let text = format!(r#"{{"list":[{}],"n":1}}"#, items.join(","));
        let plain = Value::from_json_str(&text).unwrap();
        assert!(!plain.has_json_room());
        assert!(!plain.get("list").unwrap().has_json_room());

        let files = vec![("big.json".to_string(), text.clone().into_bytes())];
        let (blocks, problems) = blocks_from_files(files);
        assert!(problems.is_empty());
        assert!(blocks[0].1.has_json_room(), "a directory file");
        assert!(blocks[0].1.get("list").unwrap().has_json_room());

        let snapshot = load_bundle(write_bundle(blocks.iter().map(|(k, v)| (&**k, v)))).unwrap();
        let block = snapshot.block("big").unwrap();
        assert!(block.get("list").unwrap().has_json_room(), "a bundle line");
        assert_eq!(block, &plain, "the same JSON either way");

        let body = format!(r#"{{"blocks":{{"big":{text}}}}}"#);
        let now = "2026-06-01T12:00:00Z".parse().unwrap();
        let reloaded = plan_reload(&snapshot, body.as_bytes(), now).unwrap();
        let block = reloaded.snapshot.block("big").unwrap();
        assert!(block.get("list").unwrap().has_json_room(), "a reload body");
    }
}
