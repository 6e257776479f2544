//! Secrets: credentials encrypted at rest and API keys stored as hashes.

mod api_key;
mod vault;

pub use api_key::{generate_api_key, hash_api_key, hashes_equal, is_api_key};
pub use vault::{Vault, VaultError};

/// Fills a buffer with operating-system randomness.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).expect("the operating system random source is available");
    buf
}
