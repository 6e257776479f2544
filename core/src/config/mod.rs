//! Configuration: the environment variables of the spec's tables and the setup options, typed,
//! with their defaults. Nothing here reads the process environment: the host passes it in.

mod env;
mod error;
pub mod hosts;
mod parse;
mod site;
mod worker;

pub use env::{
    AnalyticsConfig, AppsConfig, CachingConfig, DEFAULT_LOADER_CACHE_MAX_BYTES, DevelopmentConfig,
    DraftConfig, FastDeployConfig, LogLevel, ObservabilityConfig, OtelMode, PlatformConfig,
    PreviewHostsSetting, RuntimeConfig, Secret,
};
pub use error::ConfigError;
pub use parse::parse_byte_size;
pub use site::SiteSetupOptions;
pub use worker::{
    CI_COMMIT_SHA_VAR, DEFAULT_BYPASS_PATHS, DEFAULT_SAFE_COOKIES, OutboundUserAgent, PageJsonCors,
    WorkerOptions, build_time_hash, compiled_build_id, path_under,
};
