#!/usr/bin/env bash
# Driving an agent (docs/src/guides/workspace-api.md, "Agents", "Threads and runs", "The run
# stream", "The transcript"): a connection to an MCP server, an agent over it, a thread, a run
# posted and streamed as Server-Sent Events, the transcript read back, a retried post answered
# once, and a reconnection after the run. The model provider and the MCP server are the
# stand-ins under stand-ins/ (no network, no model).
set -euo pipefail
source "$SITEFILE_REPO/docs/examples/harness.bash"
here=$SITEFILE_REPO/docs/examples/workspace
PORT=$(free_port)
stand_in "$here/stand-ins/provider.js" provider.port
stand_in "$here/stand-ins/upstream.js" upstream.port
PROVIDER_URL=http://127.0.0.1:$(first_line provider.port)
MCP_SERVER_URL=http://127.0.0.1:$(first_line upstream.port)/mcp

# ANCHOR: start
export PLATFORM_WORKSPACE_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)
export PLATFORM_PUBLIC_URL=http://127.0.0.1:$PORT
export PLATFORM_LLM_BASE_URL=$PROVIDER_URL        # e.g. https://api.openai.com/v1
export PLATFORM_LLM_MODEL=gpt-4o-mini
OWNER_KEY=$(sitefile workspace init --org acme)
sitefile workspace serve --listen 127.0.0.1:$PORT &
API=$PLATFORM_PUBLIC_URL
# ANCHOR_END: start
started+=($!)
wait_for "$API/api/acme/tools/API_KEY_LIST"

# ANCHOR: connection
curl -sS -X POST "$API/api/acme/tools/COLLECTION_CONNECTIONS_CREATE" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d "{\"data\": {\"title\": \"Orders\", \"connection_url\": \"$MCP_SERVER_URL\",
                 \"connection_token\": \"upstream-secret\"}}" > connection.json
CONNECTION_ID=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["item"]["id"])' < connection.json)
# ANCHOR_END: connection
expect "the token is never read back" "$(json '["item"]["has_token"]' < connection.json)" true
case "$(cat connection.json)" in *upstream-secret*) echo "a token was answered" >&2; exit 1 ;; esac

# ANCHOR: agent
curl -sS -X POST "$API/api/acme/tools/COLLECTION_VIRTUAL_MCP_CREATE" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d "{\"data\": {\"title\": \"Support\", \"instructions\": \"Answer in one sentence.\",
                 \"connections\": [{\"connection_id\": \"$CONNECTION_ID\", \"selected_tools\": [\"echo\"]}]}}" > agent.json
AGENT_ID=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["item"]["id"])' < agent.json)
# ANCHOR_END: agent
expect "an agent is a virtual connection" "$(json '["item"]["connection_type"]' < agent.json)" VIRTUAL

# A key that may only create and read threads drives runs: runs need membership alone.
KEY=$(curl -sS -X POST "$API/api/acme/tools/API_KEY_CREATE" \
  -H "Authorization: Bearer $OWNER_KEY" -H 'content-type: application/json' \
  -d '{"name": "support-bot", "permissions": {"self": ["COLLECTION_THREADS_CREATE",
       "COLLECTION_THREADS_GET", "COLLECTION_THREAD_MESSAGES_LIST"]}}' | json '["key"]')

# ANCHOR: thread
curl -sS -X POST "$API/api/acme/tools/COLLECTION_THREADS_CREATE" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d "{\"data\": {\"id\": \"ticket-4711\", \"title\": \"Order 4711\", \"virtual_mcp_id\": \"$AGENT_ID\"}}"
# ANCHOR_END: thread
echo
again=$(curl -sS -X POST "$API/api/acme/tools/COLLECTION_THREADS_CREATE" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d "{\"data\": {\"id\": \"ticket-4711\", \"title\": \"Another\", \"virtual_mcp_id\": \"$AGENT_ID\"}}")
expect "creating an existing id answers the thread unchanged" "$(json '["item"]["title"]' <<< "$again")" "Order 4711"
expect "a new thread is completed" "$(json '["item"]["status"]' <<< "$again")" completed

# ANCHOR: stream
curl -sSN -D - "$API/api/acme/pilot/threads/ticket-4711/stream" \
  -H "Authorization: Bearer $KEY" -H 'Accept: text/event-stream' > stream.txt &
# ANCHOR_END: stream
started+=($!)
# The stream is open (subscribed) once its head has arrived.
wait_for_line stream.txt '^HTTP/1.1 200'
expect_in "the stream's type" "$(tr -d '\r' < stream.txt)" "content-type: text/event-stream"

# ANCHOR: post
curl -sS -X POST "$API/api/acme/pilot/threads/ticket-4711/messages" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d "{\"messages\": [{\"id\": \"msg-1\", \"role\": \"user\",
                      \"parts\": [{\"type\": \"text\", \"text\": \"Where is order 4711?\"}]}],
       \"agent\": {\"id\": \"$AGENT_ID\"}, \"tier\": \"smart\"}"
# ANCHOR_END: post
echo
wait_for_line stream.txt '"type":"finish"'
expect_in "the stream ends the run" "$(cat stream.txt)" 'data: {"type":"finish"}'
expect_in "the stream starts the run" "$(grep -m 1 '^data:' stream.txt)" 'data: {"type":"start","messageId":'
expect_in "the tool's answer" "$(cat stream.txt)" '"type":"tool-output-available"'
expect_in "the model's text" "$(cat stream.txt)" '"delta":"The echo tool said: "'

read_transcript() {
# ANCHOR: transcript
curl -sS -X POST "$API/api/acme/tools/COLLECTION_THREAD_MESSAGES_LIST" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d '{"thread_id": "ticket-4711", "limit": 50}'
# ANCHOR_END: transcript
}
transcript=$(read_transcript)
expect "two messages" "$(json '["totalCount"]' <<< "$transcript")" 2
expect "the user message keeps its id" "$(json '["items"][0]["id"]' <<< "$transcript")" msg-1
expect "the answer" "$(json '["items"][1]["parts"][-1]["text"]' <<< "$transcript")" \
  "The echo tool said: Where is order 4711?"

read_status() {
# ANCHOR: status
curl -sS -X POST "$API/api/acme/tools/COLLECTION_THREADS_GET" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d '{"id": "ticket-4711"}'
# ANCHOR_END: status
}
status=$(read_status)
expect "the run completed" "$(json '["item"]["status"]' <<< "$status")" completed

# The same message posted again (a retry) gets the first post's taskId and runs nothing.
post() {
  curl -sS -o answer.json -w '%{http_code}' -X POST "$API/api/acme/pilot/threads/ticket-4711/messages" \
    -H "Authorization: Bearer $KEY" -H 'content-type: application/json' -d "$1"
}
first_task=$(grep -o '"taskId":"[^"]*"' stream.txt | head -n 1 | cut -d'"' -f4)
same="{\"messages\": [{\"id\": \"msg-1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"Where is order 4711?\"}]}], \"agent\": {\"id\": \"$AGENT_ID\"}}"
expect "a retried post" "$(post "$same")" 202
expect "the first post's task" "$(json '["taskId"]' < answer.json)" "$first_task"
other="{\"messages\": [{\"id\": \"msg-1\", \"role\": \"user\", \"parts\": [{\"type\": \"text\", \"text\": \"Something else\"}]}], \"agent\": {\"id\": \"$AGENT_ID\"}}"
expect "another message under a used id" "$(post "$other")" 409
expect "a body field the request does not take" \
  "$(post "{\"messages\": [], \"agent\": {\"id\": \"$AGENT_ID\"}, \"stream\": true}")" 400
expect "still two messages" "$(curl -sS -X POST "$API/api/acme/tools/COLLECTION_THREAD_MESSAGES_LIST" \
  -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \
  -d '{"thread_id": "ticket-4711"}' | json '["totalCount"]')" 2

resume() {
# ANCHOR: resume
curl -sS -o /dev/null -w '%{http_code}\n' "$API/api/acme/pilot/threads/ticket-4711/stream" \
  -H "Authorization: Bearer $KEY"
# ANCHOR_END: resume
}
expect "a reconnection with no run in progress" "$(resume)" 204
echo "runs.sh: passed"
