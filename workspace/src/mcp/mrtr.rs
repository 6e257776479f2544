//! Multi round-trip requests (MCP 2026-07-28) of a stateless upstream, translated for a client
//! of a session revision. The upstream answers `input_required` with `inputRequests`; the proxy
//! asks the client each of them as the session revisions do, as a request on the event stream
//! of the call that caused it (`elicitation/create`, `sampling/createMessage`, `roots/list`),
//! collects the answers, and sends the call again with them as `inputResponses` and the
//! upstream's `requestState`, until the upstream answers it complete (at most [`MAX_ROUNDS`]
//! rounds). The client's answers come back as POSTs to its session, like its answers to a
//! session upstream's requests ([`super::server_requests`]).

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::relay::Relay;
use super::server_requests::{Asker, TooMany};
use super::upstream::{ClientSide, UpstreamError};

/// The most rounds of one request an upstream may ask for input in.
pub const MAX_ROUNDS: usize = 8;

/// The requests a client can be asked in a multi round-trip result.
const INPUT_METHODS: &[&str] = &["elicitation/create", "sampling/createMessage", "roots/list"];

/// Whether an upstream's JSON-RPC `response` asks the client for input.
pub fn asks_input(response: &Value) -> bool {
    response["result"]["resultType"] == "input_required"
}

/// A request relayed to the client, forgotten when the proxy stops waiting for its answer
/// (answered, timed out, or the call dropped: its client gone, its timeout passed).
struct Asked<'c> {
    client: &'c ClientSide,
    id: u64,
}

impl Drop for Asked<'_> {
    fn drop(&mut self) {
        self.client.requests.expire(self.id);
    }
}

/// Asks the client each of the `inputRequests` of `asked` (an `input_required` result) on
/// `relay`, one after the other; their results by key, as `inputResponses` carries them. An
/// upstream asking more at once than a session may have awaiting its client is refused.
pub async fn ask(
    client: &ClientSide,
    relay: &Relay,
    asked: &Value,
) -> Result<Value, UpstreamError> {
    let failed = |why: String| UpstreamError::Protocol(why);
    let mut responses = Map::new();
    let requests = asked["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let most = client.requests.bounds().pending.max(1);
    if requests.len() > most {
        return Err(failed(format!(
            "the upstream asked for {} inputs at once; at most {most} are relayed",
            requests.len()
        )));
    }
    for (key, request) in requests {
        let method = request["method"]
            .as_str()
            .filter(|m| INPUT_METHODS.contains(m))
            .ok_or_else(|| {
                failed(format!(
                    "the upstream asked for input by {}",
                    request["method"]
                ))
            })?;
        let (sender, answer) = oneshot::channel();
        let id = client
            .requests
            .register(Asker::Proxy(sender))
            .map_err(|TooMany| {
                failed("too many requests already await this client's answer".into())
            })?;
        let _asked = Asked { client, id };
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        let message = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let timeout = client.requests.bounds().timeout;
        let answered = match relay.send(message).await {
            Ok(()) => tokio::time::timeout(timeout, answer)
                .await
                .ok()
                .and_then(Result::ok),
            Err(_) => None,
        };
        let Some(answer) = answered else {
            return Err(failed(format!(
                "the client did not answer the upstream's {method} within {} ms",
                timeout.as_millis()
            )));
        };
        let Some(result) = answer.get("result") else {
            return Err(failed(format!(
                "the client refused the upstream's {method}: {}",
                answer["error"]["message"]
                    .as_str()
                    .unwrap_or("no reason given")
            )));
        };
        responses.insert(key, result.clone());
    }
    Ok(Value::Object(responses))
}

/// The params of the next round: `params` with the client's `responses` as `inputResponses`
/// and the `requestState` of `asked`, when it has one.
pub fn retry_params(params: &Value, asked: &Value, responses: Value) -> Value {
    let mut params = match params {
        Value::Object(object) => object.clone(),
        _ => Map::new(),
    };
    params.insert("inputResponses".into(), responses);
    params.remove("requestState");
    if let Some(state) = asked.get("requestState") {
        params.insert("requestState".into(), state.clone());
    }
    Value::Object(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_carries_the_answers_and_the_state() {
        let params = json!({"name": "t", "arguments": {}, "requestState": "old"});
        let asked = json!({"resultType": "input_required", "requestState": "s2"});
        let retry = retry_params(&params, &asked, json!({"k": {"action": "accept"}}));
        assert_eq!(
            retry,
            json!({"name": "t", "arguments": {}, "requestState": "s2",
                "inputResponses": {"k": {"action": "accept"}}})
        );
        let stateless = retry_params(&params, &json!({}), json!({}));
        assert!(stateless.get("requestState").is_none());
    }
}
