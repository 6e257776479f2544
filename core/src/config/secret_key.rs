//! Encrypted app credentials in existing content: AES-CBC with PKCS#7 under a fixed key and IV
//! from `PLATFORM_CRYPTO_KEY` (base64 of JSON `{"key": [bytes], "iv": [bytes]}`).

use aes::cipher::{BlockDecryptMut, KeyIvInit, block_padding::Pkcs7};
use base64::Engine;

/// Why a crypto key could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("PLATFORM_CRYPTO_KEY: {0}")]
pub struct SecretKeyError(String);

/// The AES key and IV that decrypt secrets. Equality is for comparing configurations, never
/// for authenticating anyone.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretKey {
    key: Vec<u8>,
    iv: [u8; 16],
}

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretKey(..)")
    }
}

impl SecretKey {
    /// Parses the `PLATFORM_CRYPTO_KEY` format. The key must be 16, 24 or 32 bytes, the IV 16.
    pub fn from_env_value(value: &str) -> Result<SecretKey, SecretKeyError> {
        #[derive(serde::Deserialize)]
        struct Raw {
            key: Vec<u8>,
            iv: Vec<u8>,
        }
        let json = base64::engine::general_purpose::STANDARD
            .decode(value.trim())
            .map_err(|e| SecretKeyError(format!("not base64: {e}")))?;
        let raw: Raw = serde_json::from_slice(&json)
            .map_err(|e| SecretKeyError(format!("not {{\"key\",\"iv\"}} JSON: {e}")))?;
        if ![16, 24, 32].contains(&raw.key.len()) {
            return Err(SecretKeyError(format!(
                "key must be 16, 24 or 32 bytes, got {}",
                raw.key.len()
            )));
        }
        let iv: [u8; 16] = raw.iv.try_into().map_err(|iv: Vec<u8>| {
            SecretKeyError(format!("iv must be 16 bytes, got {}", iv.len()))
        })?;
        Ok(SecretKey { key: raw.key, iv })
    }

    /// Decrypts a hex ciphertext to UTF-8; `None` when anything is wrong with it.
    pub fn decrypt_hex(&self, ciphertext_hex: &str) -> Option<String> {
        let mut data = hex::decode(ciphertext_hex.trim()).ok()?;
        let plain = match self.key.len() {
            16 => cbc::Decryptor::<aes::Aes128>::new_from_slices(&self.key, &self.iv)
                .ok()?
                .decrypt_padded_mut::<Pkcs7>(&mut data)
                .ok()?
                .to_vec(),
            24 => cbc::Decryptor::<aes::Aes192>::new_from_slices(&self.key, &self.iv)
                .ok()?
                .decrypt_padded_mut::<Pkcs7>(&mut data)
                .ok()?
                .to_vec(),
            _ => cbc::Decryptor::<aes::Aes256>::new_from_slices(&self.key, &self.iv)
                .ok()?
                .decrypt_padded_mut::<Pkcs7>(&mut data)
                .ok()?
                .to_vec(),
        };
        String::from_utf8(plain).ok()
    }
}

impl crate::errors::HasErrorCode for SecretKeyError {
    fn code(&self) -> crate::errors::ErrorCode {
        crate::errors::ErrorCode::InvalidConfig
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::BlockEncryptMut;

    pub(crate) fn key_value(key: &[u8], iv: &[u8]) -> String {
        let json = serde_json::json!({"key": key, "iv": iv}).to_string();
        base64::engine::general_purpose::STANDARD.encode(json)
    }

    #[test]
    fn decrypts_what_aes_cbc_encrypted() {
        let key = [7u8; 32];
        let iv = [9u8; 16];
        let ct = cbc::Encryptor::<aes::Aes256>::new_from_slices(&key, &iv)
            .unwrap()
            .encrypt_padded_vec_mut::<Pkcs7>(b"s3cret-token");
        let secret = SecretKey::from_env_value(&key_value(&key, &iv)).unwrap();
        assert_eq!(
            secret.decrypt_hex(&hex::encode(ct)).as_deref(),
            Some("s3cret-token")
        );
        assert_eq!(secret.decrypt_hex("zz"), None);
        assert_eq!(secret.decrypt_hex("00112233"), None);
    }

    #[test]
    fn bad_keys_are_clear_errors() {
        assert!(SecretKey::from_env_value("%%%").is_err());
        assert!(SecretKey::from_env_value(&key_value(&[1; 5], &[0; 16])).is_err());
        assert!(SecretKey::from_env_value(&key_value(&[1; 16], &[0; 4])).is_err());
        assert!(
            format!(
                "{:?}",
                SecretKey::from_env_value(&key_value(&[1; 16], &[0; 16])).unwrap()
            ) == "SecretKey(..)"
        );
    }
}
