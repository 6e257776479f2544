//! Configuration: the environment variables of the spec's tables, typed, with their defaults,
//! and the configuration each part takes built from them. Nothing here reads the process
//! environment: the host passes it in. The edge options live with the edge (`edge::options`).

mod env;
mod error;
pub mod hosts;
mod parse;
mod secret_key;

pub use env::{
    AnalyticsConfig, FastDeployBuild, LogLevel, ObservabilityConfig, OtelMode, PlatformConfig,
    PreviewHostsSetting, Secret,
};
#[cfg(feature = "internals")]
pub use env::{
    AppsConfig, CachingConfig, DEFAULT_LOADER_CACHE_MAX_BYTES, DevelopmentConfig, DraftConfig,
    FastDeployConfig, RuntimeConfig,
};
pub use error::ConfigError;
#[cfg(feature = "internals")]
pub use parse::parse_byte_size;
pub use secret_key::SecretKey;
#[cfg(feature = "internals")]
pub use secret_key::SecretKeyError;
