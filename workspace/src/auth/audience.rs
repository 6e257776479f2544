//! A token's audience claim (`aud`), as JWT claims and introspection answers carry it.

use serde::Deserialize;

/// `aud`: one value or several.
#[derive(Clone, Deserialize, Default)]
#[serde(untagged)]
pub enum Audience {
    /// No audience.
    #[default]
    None,
    /// One audience.
    One(String),
    /// Several audiences.
    Many(Vec<String>),
}

impl Audience {
    /// Every audience named.
    pub(super) fn all(&self) -> &[String] {
        match self {
            Audience::None => &[],
            Audience::One(aud) => std::slice::from_ref(aud),
            Audience::Many(auds) => auds.as_slice(),
        }
    }
}
