//! Well-known hosts of the platform: the editor and platform-hosted sites.

/// Origins of the editor; HTML responses let them frame the page (`frame-ancestors`).
pub const EDITOR_ORIGINS: [&str; 2] = [
    "https://studio.platformcms.com",
    "https://*.platform.studio",
];

/// Default `PLATFORM_PREVIEW_API_DOMAINS`: the editor's domains and localhost.
pub const DEFAULT_PREVIEW_API_DOMAINS: [&str; 5] = [
    "local.studio.platformcms.com",
    "localhost",
    "127.0.0.1",
    ".localhost",
    ".platformcms.com",
];

/// Domain of platform-hosted sites: `<site>.platform.site` and `<env>--<site>.platform.site`.
pub const PLATFORM_HOSTED_DOMAIN: &str = "platform.site";
