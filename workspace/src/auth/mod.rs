//! Who is calling (an API key bound to one organization) and what it may do.

mod permissions;
mod principal;

pub use permissions::{Permissions, SELF_RESOURCE};
pub use principal::{Credential, Principal, authenticate};
