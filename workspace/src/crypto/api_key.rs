//! API key values: random, shown once, stored only as a SHA-256 hash.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Prefix of every key value, so leaked keys are easy to recognise.
const KEY_PREFIX: &str = "sfk_";

/// A new key value: `sfk_` + base64url of 32 random bytes.
pub fn generate_api_key() -> String {
    let bytes: [u8; 32] = super::random_bytes();
    format!("{KEY_PREFIX}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether `value` has the shape of one of this service's API keys (its prefix): such a
/// value is never sent to an authorization server for introspection.
pub fn is_api_key(value: &str) -> bool {
    value.starts_with(KEY_PREFIX)
}

/// The stored form of a key value: hex SHA-256.
pub fn hash_api_key(value: &str) -> String {
    let digest = Sha256::digest(value.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Compares two hashes in constant time.
pub fn hashes_equal(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_random_and_hashed() {
        let (a, b) = (generate_api_key(), generate_api_key());
        assert_ne!(a, b);
        assert!(a.starts_with(KEY_PREFIX));
        assert_eq!(hash_api_key(&a).len(), 64);
        assert!(hashes_equal(&hash_api_key(&a), &hash_api_key(&a)));
        assert!(!hashes_equal(&hash_api_key(&a), &hash_api_key(&b)));
    }
}
