//! Strict validation of the run request body.

use serde_json::{Map, Value};

use super::TIERS;
use crate::error::ApiError;

/// A validated run request.
#[derive(Debug)]
pub struct RunRequest {
    /// The client's id of the user message, if it named one.
    pub user_message_id: Option<String>,
    /// Text of the one non-system (user) message.
    pub user_parts: Vec<Value>,
    /// Text of system messages, added to the instructions of this run.
    pub system_text: Vec<String>,
    /// The agent id (must be the thread's agent).
    pub agent_id: String,
    /// Model tier.
    pub tier: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
}

fn bad(message: impl Into<String>) -> ApiError {
    ApiError::BadRequest(message.into())
}

fn only_keys(object: &Map<String, Value>, allowed: &[&str], what: &str) -> Result<(), ApiError> {
    match object.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => Err(bad(format!("unrecognized key {key:?} in {what}"))),
        None => Ok(()),
    }
}

/// Validates `body` for the thread `thread_id` of the URL.
pub fn validate(body: &Value, thread_id: &str) -> Result<RunRequest, ApiError> {
    let object = body
        .as_object()
        .ok_or_else(|| bad("the body must be a JSON object"))?;
    only_keys(
        object,
        &["messages", "agent", "tier", "temperature", "thread_id"],
        "the body",
    )?;
    if let Some(id) = object.get("thread_id")
        && id.as_str() != Some(thread_id)
    {
        return Err(bad(
            "thread_id in the body does not match the thread in the URL",
        ));
    }
    let messages = object
        .get("messages")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("messages must be an array"))?;
    let mut user = None;
    let mut system_text = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let what = format!("messages[{i}]");
        let message = message
            .as_object()
            .ok_or_else(|| bad(format!("{what} must be an object")))?;
        only_keys(message, &["id", "role", "parts", "metadata"], &what)?;
        let parts = text_parts(message.get("parts"), &what)?;
        match message.get("role").and_then(Value::as_str) {
            Some("system") => system_text.extend(
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str().map(str::to_string)),
            ),
            Some("user") => {
                let id = message_id(message.get("id"), &what)?;
                if user.replace((id, parts)).is_some() {
                    return Err(bad("messages must hold exactly one non-system message"));
                }
            }
            Some("assistant") => {
                return Err(bad("the non-system message must have role \"user\""));
            }
            _ => return Err(bad(format!("{what}.role must be user or system"))),
        }
    }
    let (user_message_id, user_parts) =
        user.ok_or_else(|| bad("messages must hold exactly one non-system message"))?;
    let agent = object
        .get("agent")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("agent must be an object { id }"))?;
    only_keys(agent, &["id"], "agent")?;
    let agent_id = agent
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .ok_or_else(|| bad("agent.id must be a non-empty string"))?
        .to_string();
    let tier = match object.get("tier") {
        None => None,
        Some(Value::String(t)) if TIERS.contains(&t.as_str()) => Some(t.clone()),
        Some(_) => return Err(bad(format!("tier must be one of {}", TIERS.join(", ")))),
    };
    let temperature = match object.get("temperature") {
        None => None,
        Some(t) => Some(
            t.as_f64()
                .filter(|t| (0.0..=2.0).contains(t))
                .ok_or_else(|| bad("temperature must be a number from 0 to 2"))?,
        ),
    };
    Ok(RunRequest {
        user_message_id,
        user_parts,
        system_text,
        agent_id,
        tier,
        temperature,
    })
}

/// Most characters in a client's message id.
const MAX_MESSAGE_ID_CHARS: usize = 128;

/// Checks a message's `id`, when given: a string of 1 to [`MAX_MESSAGE_ID_CHARS`] characters.
fn message_id(id: Option<&Value>, what: &str) -> Result<Option<String>, ApiError> {
    match id {
        None => Ok(None),
        Some(Value::String(id)) if (1..=MAX_MESSAGE_ID_CHARS).contains(&id.chars().count()) => {
            Ok(Some(id.clone()))
        }
        Some(_) => Err(bad(format!(
            "{what}.id must be a string of 1 to {MAX_MESSAGE_ID_CHARS} characters"
        ))),
    }
}

/// Checks `parts`: a non-empty array of `{ type: "text", text }`.
fn text_parts(parts: Option<&Value>, what: &str) -> Result<Vec<Value>, ApiError> {
    let parts = parts
        .and_then(Value::as_array)
        .filter(|p| !p.is_empty())
        .ok_or_else(|| bad(format!("{what}.parts must be a non-empty array")))?;
    for (j, part) in parts.iter().enumerate() {
        let where_ = format!("{what}.parts[{j}]");
        let part = part
            .as_object()
            .ok_or_else(|| bad(format!("{where_} must be an object")))?;
        only_keys(part, &["type", "text"], &where_)?;
        if part.get("type").and_then(Value::as_str) != Some("text") || !part["text"].is_string() {
            return Err(bad(format!(
                "{where_} must be {{ type: \"text\", text: string }}"
            )));
        }
    }
    Ok(parts.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body() -> Value {
        json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "text": "hi" }] }],
                "agent": { "id": "a" } })
    }

    #[test]
    fn accepts_the_documented_body() {
        let mut b = body();
        b["tier"] = json!("smart");
        b["temperature"] = json!(0.2);
        b["thread_id"] = json!("t");
        let r = validate(&b, "t").unwrap();
        assert_eq!(r.agent_id, "a");
        assert_eq!(r.tier.as_deref(), Some("smart"));
        assert_eq!(r.user_message_id, None);
        b["messages"][0]["id"] = json!("m-1");
        assert_eq!(
            validate(&b, "t").unwrap().user_message_id.as_deref(),
            Some("m-1")
        );
    }

    #[test]
    fn rejects_violations() {
        let cases = [
            json!({ "extra": 1 }),
            json!({ "thread_id": "other" }),
            json!({ "tier": "huge" }),
            json!({ "temperature": "hot" }),
            json!({ "agent": {} }),
            json!({ "agent": { "id": "a", "x": 1 } }),
            json!({ "messages": [] }),
            json!({ "messages": [{ "role": "user", "parts": [{ "type": "text", "text": "a" }] },
                                  { "role": "user", "parts": [{ "type": "text", "text": "b" }] }] }),
            json!({ "messages": [{ "role": "user", "parts": [{ "type": "image", "text": "a" }] }] }),
            json!({ "messages": [{ "id": 7, "role": "user", "parts": [{ "type": "text", "text": "a" }] }] }),
            json!({ "messages": [{ "id": "", "role": "user", "parts": [{ "type": "text", "text": "a" }] }] }),
            json!({ "messages": [{ "id": "x".repeat(129), "role": "user", "parts": [{ "type": "text", "text": "a" }] }] }),
        ];
        for patch in cases {
            let mut b = body();
            for (k, v) in patch.as_object().unwrap() {
                b[k] = v.clone();
            }
            assert!(validate(&b, "t").is_err(), "{patch}");
        }
    }
}
