//! Upstream answers are bounded: more than 16 MiB fails the call instead of filling memory.

use serde_json::json;

use crate::both_backends;
use crate::common::{Api, Backend, call};
use crate::mcp_double;

both_backends!(upstream_answers_are_bounded);

async fn upstream_answers_are_bounded(backend: Backend) {
    let api = Api::start(backend).await;
    let upstream = mcp_double::start(false).await;
    let conn = api
        .connection(&api.owner, &upstream.mode_url("huge"), json!({}))
        .await;
    let (status, _, body) = api
        .rpc(
            &format!("/api/acme/mcp/{conn}"),
            Some(&api.owner),
            call("echo", json!({ "text": "x" })),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["error"]["code"], -32603);
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("16 MiB"),
        "{body}"
    );
}
