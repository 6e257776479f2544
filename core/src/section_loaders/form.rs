//! The JSON form of the sections a binding hands back: the page's `sections` as it received
//! them (`[{"component", "props", "deferred"?}]`).

use crate::resolve::ResolvedSection;
use crate::value::{ParseError, Value};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SectionForm {
    component: String,
    #[serde(default)]
    props: Option<Value>,
    #[serde(default)]
    deferred: bool,
}

/// Sections from their JSON form; a missing `props` is `{}`.
pub fn sections_from_json(text: &str) -> Result<Vec<ResolvedSection>, ParseError> {
    let forms: Vec<SectionForm> =
        serde_json::from_str(text).map_err(|e| ParseError(format!("invalid sections: {e}")))?;
    Ok(forms
        .into_iter()
        .map(|f| ResolvedSection {
            component: f.component,
            props: f.props.unwrap_or_else(|| Value::object(Vec::new())),
            deferred: f.deferred,
        })
        .collect())
}
