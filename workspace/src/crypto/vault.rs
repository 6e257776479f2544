//! AES-256-GCM encryption of credentials, bound to the row and column they live in.

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

/// Version prefix of the stored format: `v1:` + base64url(nonce ‖ ciphertext ‖ tag).
const PREFIX: &str = "v1:";

/// Encryption or decryption failed (wrong key, tampered value, unknown format).
#[derive(Debug, thiserror::Error)]
#[error("credential could not be decrypted")]
pub struct VaultError;

/// Encrypts and decrypts credentials with one 256-bit key.
#[derive(Clone)]
pub struct Vault {
    cipher: Aes256Gcm,
}

impl Vault {
    /// A vault over a 32-byte key.
    pub fn new(key: &[u8; 32]) -> Self {
        let cipher = Aes256Gcm::new(key.into());
        Self { cipher }
    }

    /// Encrypts `plaintext` with a fresh random 96-bit nonce; `context` is authenticated
    /// (for example `connections:<id>:token`) so a value cannot be moved to another row.
    pub fn encrypt(&self, plaintext: &[u8], context: &str) -> String {
        let nonce_bytes: [u8; 12] = super::random_bytes();
        let nonce = Nonce::from(nonce_bytes);
        let sealed = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext,
                    aad: context.as_bytes(),
                },
            )
            .expect("AES-GCM encryption of an in-memory buffer cannot fail");
        let mut out = Vec::with_capacity(12 + sealed.len());
        out.extend_from_slice(&nonce_bytes);
        out.extend_from_slice(&sealed);
        format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(out))
    }

    /// Decrypts a value produced by [`Vault::encrypt`] with the same `context`.
    pub fn decrypt(&self, stored: &str, context: &str) -> Result<Vec<u8>, VaultError> {
        let encoded = stored.strip_prefix(PREFIX).ok_or(VaultError)?;
        let bytes = URL_SAFE_NO_PAD.decode(encoded).map_err(|_| VaultError)?;
        if bytes.len() < 12 + 16 {
            return Err(VaultError);
        }
        let (nonce, sealed) = bytes.split_at(12);
        let nonce = Nonce::try_from(nonce).map_err(|_| VaultError)?;
        self.cipher
            .decrypt(
                &nonce,
                Payload {
                    msg: sealed,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| VaultError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_random_nonce_and_tamper() {
        let vault = Vault::new(&[7u8; 32]);
        let a = vault.encrypt(b"secret", "c:1:token");
        let b = vault.encrypt(b"secret", "c:1:token");
        assert_ne!(a, b, "a fresh nonce per value");
        assert!(!a.contains("secret"));
        assert_eq!(vault.decrypt(&a, "c:1:token").unwrap(), b"secret");
        assert!(vault.decrypt(&a, "c:2:token").is_err(), "bound to its row");
        assert!(Vault::new(&[8u8; 32]).decrypt(&a, "c:1:token").is_err());
        let mut tampered = a.clone();
        tampered.pop();
        tampered.push(if a.ends_with('A') { 'B' } else { 'A' });
        assert!(vault.decrypt(&tampered, "c:1:token").is_err());
    }
}
