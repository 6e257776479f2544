//! A page's document head from its SEO (`PageMetadata` of the core): what `createDecoPage`'s
//! `generateMetadata` returns.

use crate::error::{Code, fail, guarded};
use napi_derive::napi;
use sitefile_core::{ErrorCode, MetadataDefaults, PageMetadata, Value};

/// The document head (JSON `{title, description, canonical, robots}`) of a page whose resolved
/// SEO block is `seo` (JSON; `null` when the page has none), with `defaults` (JSON `{siteName?,
/// defaultTitle?, defaultDescription?}`).
#[napi]
pub fn page_metadata(seo: String, defaults: String) -> Result<String, napi::Error<Code>> {
    guarded(|| {
        let seo = Value::from_json_str(&seo)
            .map_err(|e| fail(ErrorCode::InvalidJson, format!("invalid SEO: {e}")))?;
        let defaults: MetadataDefaults = serde_json::from_str(&defaults).map_err(|e| {
            fail(
                ErrorCode::InvalidConfig,
                format!("invalid metadata defaults: {e}"),
            )
        })?;
        let seo = (!seo.is_null()).then_some(&seo);
        serde_json::to_string(&PageMetadata::of(seo, &defaults))
            .map_err(|e| fail(ErrorCode::InvalidContent, e))
    })
}
