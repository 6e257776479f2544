//! Previews (`/live/previews[/<target>]`) and render (`/platform/render`): core reads the target,
//! props, path and device; the host resolves and renders; core wraps the result.

use super::body::{check_size, parse_object};
use super::config::AdminConfig;
use super::cors::Cors;
use super::error::{AdminError, AdminErrorCode};
use super::html::{inline_error, section};
use super::render_shell::RenderShell;
use super::request::AdminRequest;
use super::response::AdminResponse;
use crate::Device;
use crate::content::Snapshot;
use crate::resolve::is_flag;
use crate::uri::decode_uri_component_or_keep;
use crate::value::{Key, Object, RESOLVE_TYPE, Value};
use base64::Engine;
use serde::{Deserialize, Serialize};

/// The component that renders a whole page.
pub use crate::pages::PAGE_RESOLVE_TYPE as PAGE_COMPONENT;
/// The body key of a per-request content overlay (merged over the current content).
pub const OVERLAY_KEY: &str = "__sitefile";

/// What the host must render for a preview or render request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PreviewJob {
    /// The component to render (a saved block's `__resolveType` when the target named a block).
    pub component: String,
    /// The saved block the target named, if it named one.
    pub block: Option<String>,
    /// The props (the saved block's fields overlaid with the props sent).
    pub props: Value,
    /// The page path matchers see (query `path`, default `/`).
    pub path: String,
    /// The device to preview (query `deviceHint`: `mobile`, `tablet` or `desktop`).
    pub device_hint: Option<Device>,
    /// Blocks merged over the current content for this request only (`__sitefile`).
    pub overlay: Option<Value>,
    #[serde(skip)]
    shell: RenderShell,
    #[serde(skip)]
    cors: Cors,
}

/// One section the host rendered: its manifest key and HTML, or the error it raised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedSection {
    /// The section's manifest key (`site/sections/Hero.tsx`).
    pub key: String,
    /// The HTML, or the error message.
    pub html: Result<String, String>,
}

/// A host's render of a preview as JSON, the form every binding hands over:
/// `{"sections": [{"key", "html"} | {"key", "error"}]}`, or `{"error": "message"}` when the
/// whole render failed.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenderAnswer {
    /// The rendered sections, in order.
    #[serde(default)]
    pub sections: Vec<RenderedSectionAnswer>,
    /// Why the whole render failed.
    #[serde(default)]
    pub error: Option<String>,
}

/// One section of a [`RenderAnswer`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenderedSectionAnswer {
    /// The section's manifest key.
    pub key: String,
    /// Its HTML.
    #[serde(default)]
    pub html: Option<String>,
    /// The error it raised instead.
    #[serde(default)]
    pub error: Option<String>,
}

impl RenderAnswer {
    /// What [`PreviewJob::finish`] takes.
    pub fn into_result(self) -> Result<Vec<RenderedSection>, String> {
        match self.error {
            Some(message) => Err(message),
            None => Ok(self
                .sections
                .into_iter()
                .map(|s| RenderedSection {
                    key: s.key,
                    html: match s.error {
                        Some(e) => Err(e),
                        None => Ok(s.html.unwrap_or_default()),
                    },
                })
                .collect()),
        }
    }
}

impl PreviewJob {
    /// Whether the target is a whole page (the host resolves its sections against `path` and the
    /// device, runs their loaders, and renders them in order).
    pub fn is_page(&self) -> bool {
        self.component == PAGE_COMPONENT
    }

    /// The user agent matchers see: the request's, unless `deviceHint` names another device
    /// class, in which case a typical agent of that class.
    pub fn user_agent(&self, request_user_agent: &str) -> String {
        match self.device_hint {
            Some(hint) if Device::from_user_agent(request_user_agent) != hint => {
                hint.typical_user_agent().to_string()
            }
            _ => request_user_agent.to_string(),
        }
    }

    /// The answer when the host has nothing to render with (a server without an origin): a 503
    /// JSON error naming why, never an HTML page.
    pub fn unavailable(self, why: &str) -> AdminResponse {
        AdminError::new(AdminErrorCode::RendererUnavailable, why).into_response(&self.cors)
    }

    /// The 200 HTML document: each section wrapped in `<section data-manifest-key="…">`, a failed
    /// section's error inline in its place, and a failure of the whole render inline instead of
    /// the sections. A section preview that rendered nothing — its key names no registered
    /// section module, so resolution dropped it — shows that error inline too (a flag whose
    /// chosen variant is nothing renders nothing, as it should). A preview never
    /// fails the request.
    pub fn finish(self, rendered: Result<Vec<RenderedSection>, String>) -> AdminResponse {
        let rendered = match rendered {
            Ok(sections) if sections.is_empty() && !self.is_page() && !is_flag(&self.component) => {
                Ok(vec![RenderedSection {
                    key: self.component.clone(),
                    html: Err(format!(
                        "no section module is registered for {}",
                        self.component
                    )),
                }])
            }
            other => other,
        };
        let body = match rendered {
            Ok(sections) => sections
                .iter()
                .map(|s| match &s.html {
                    Ok(html) => section(&s.key, html),
                    Err(message) => section(
                        &s.key,
                        &inline_error(&format!("Error rendering {}: {message}", s.key)),
                    ),
                })
                .collect(),
            Err(message) => inline_error(&format!("Render error: {message}")),
        };
        AdminResponse::html(200, self.shell.document(&body), &self.cors)
    }
}

/// `GET /live/previews`: the empty frame the editor injects previews into.
pub(crate) fn shell(config: &AdminConfig, cors: &Cors) -> AdminResponse {
    let html = config.preview_shell.clone().unwrap_or_else(|| {
        config
            .render_shell
            .document("<div id=\"platform-preview\">Loading preview...</div>")
    });
    AdminResponse::html(200, html, cors)
}

fn invalid(message: &str) -> AdminError {
    AdminError::new(AdminErrorCode::InvalidBody, message)
}

/// The object under `key` of `body`, if it is one.
fn object_at(body: Option<&Value>, key: &str) -> Option<Value> {
    body?.get(key).filter(|v| v.as_object().is_some()).cloned()
}

/// `object` without `drop` keys.
fn without(object: &Object, drop: &[&str]) -> Value {
    Value::object(
        object
            .entries()
            .iter()
            .filter(|(k, _)| !drop.contains(&&**k))
            .cloned()
            .collect(),
    )
}

/// The `props` query parameter: JSON, or base64 of URL-encoded JSON.
fn query_props(raw: &str) -> Result<Value, AdminError> {
    let bad = || {
        AdminError::new(
            AdminErrorCode::InvalidJson,
            "The props parameter is not JSON",
        )
    };
    let text = match Value::from_json_str(raw) {
        Ok(v) => return Ok(v),
        Err(_) => base64::engine::general_purpose::STANDARD
            .decode(raw.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(bad)?,
    };
    Value::from_json_str(&decode_uri_component_or_keep(&text)).map_err(|_| bad())
}

/// Reads a preview (`target` from the path) or render (`target` is `None`) request.
pub(crate) fn parse(
    target: Option<&str>,
    snapshot: &Snapshot,
    config: &AdminConfig,
    request: &AdminRequest,
    cors: &Cors,
) -> Result<PreviewJob, AdminError> {
    // A `GET` reads no body (the head check tells the host not to).
    let body = if request.is("POST") {
        check_size(&request.body, config.max_body_bytes)?;
        parse_object(&request.body, "The preview body")?
    } else {
        None
    };
    let mut component = request
        .query_param("resolveChain")
        .filter(|c| !c.is_empty())
        .or_else(|| target.map(|t| decode_uri_component_or_keep(&decode_uri_component_or_keep(t))));
    let mut overlay = object_at(body.as_ref(), OVERLAY_KEY);
    let mut props = None;
    if let Some(p) = object_at(body.as_ref(), "__props") {
        if let Some(rt) = p.resolve_type() {
            component = Some(rt.to_string());
        }
        props = Some(p);
    } else if let Some(p) = object_at(body.as_ref(), "props") {
        props = Some(p);
    } else if let Some(b) = body.as_ref().and_then(Value::as_object) {
        if let Some(rt) = b.resolve_type() {
            component = Some(rt.to_string());
        }
        if b.entries().iter().any(|(k, _)| &**k != OVERLAY_KEY) {
            props = Some(without(b, &[OVERLAY_KEY]));
        }
    }
    if props.is_none()
        && let Some(raw) = request.query_param("props")
    {
        props = Some(query_props(&raw)?);
    }
    if overlay.is_none()
        && let Some(raw) = request.query_param(OVERLAY_KEY)
    {
        let v = Value::from_json_str(&raw).map_err(|e| {
            AdminError::new(AdminErrorCode::InvalidJson, format!("{OVERLAY_KEY}: {e}"))
        })?;
        overlay = Some(v).filter(|v| v.as_object().is_some());
    }
    let component =
        component.ok_or_else(|| invalid("No component: pass resolveChain or a __resolveType"))?;
    // Whatever form they came in, the props never name the component: that is `component`.
    let props = match props.as_ref().map(Value::as_object) {
        None => Value::object(Vec::new()),
        Some(Some(object)) => without(object, &[RESOLVE_TYPE]),
        Some(None) => return Err(invalid("The props must be a JSON object")),
    };
    let saved = overlay
        .as_ref()
        .and_then(|o| o.get(&component))
        .or_else(|| snapshot.block(&component))
        .and_then(Value::as_object)
        .and_then(|b| Some((b.resolve_type()?.to_string(), b)));
    let (component, block, props) = match saved {
        Some((resolve_type, block)) => {
            let mut entries: Vec<(Key, Value)> = block
                .entries()
                .iter()
                .filter(|(k, _)| &**k != RESOLVE_TYPE)
                .cloned()
                .collect();
            entries.extend(
                props
                    .as_object()
                    .into_iter()
                    .flat_map(|o| o.entries().iter().cloned()),
            );
            (resolve_type, Some(component), Value::object(entries))
        }
        None => (component, None, props),
    };
    let device_hint = request
        .query_param("deviceHint")
        .and_then(|h| Device::from_name(&h));
    Ok(PreviewJob {
        component,
        block,
        props,
        path: request
            .query_param("path")
            .filter(|p| p.starts_with('/'))
            .unwrap_or_else(|| "/".to_string()),
        device_hint,
        overlay,
        shell: config.render_shell.clone(),
        cors: cors.clone(),
    })
}
