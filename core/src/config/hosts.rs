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

/// Whether `host` is a lower-case DNS name (or IPv4 address): dot-separated labels of `a-z0-9-`,
/// none empty, none starting or ending with `-`.
pub fn valid_host(host: &str) -> bool {
    !host.is_empty()
        && host.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}
