//! Content: the flat map of JSON blocks, its immutable snapshots, revisions and reloads.

mod block;
mod block_name;
mod bundle;
mod canonical;
mod files;
mod reload;
mod revision;
mod snapshot;
mod store;

pub use block::Block;
pub use block_name::{decode_block_name, encode_block_name};
pub use bundle::{load_bundle, parse_bundle, write_bundle};
pub use files::{LoadProblem, blocks_from_files};
pub use reload::{ReloadError, ReloadMode, ReloadOutcome, ReloadResponse, plan_reload};
pub use revision::block_digest;
pub use snapshot::Snapshot;
pub use store::{ContentStore, Observer, ReloadRefused};
