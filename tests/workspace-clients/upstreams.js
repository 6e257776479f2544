// The upstreams the revision matrix drives clients against (upstream-revisions.test.js with
// the v2 TypeScript client, python.test.js with the Python client), what each is asked to do,
// and what it answers: @modelcontextprotocol/server-everything (the session revisions only),
// our reference server (conformance/fixture.mjs, @modelcontextprotocol/server 2.x) serving both
// revisions on one URL, and the same serving 2026-07-28 only.

import { EVERYTHING, conformanceFixture, start } from "./harness.js";

export const MODERN = "2026-07-28";
export const LEGACY = "2025-11-25";

/** The answer `acceptElicitation` gives, by field name (any other required field is `x`). */
const ELICITED = { name: "Ada", username: "ada", email: "ada@example.com", color: "green" };

/** Accepts an elicitation with every required field filled in (from ELICITED; booleans true). */
export function acceptElicitation(params) {
  const properties = params.requestedSchema?.properties ?? {};
  const content = {};
  for (const field of params.requestedSchema?.required ?? []) {
    content[field] = properties[field]?.type === "boolean" ? true : (ELICITED[field] ?? "x");
  }
  return { action: "accept", content };
}

/** The text of a tool result's content (as a client returns it), joined. */
export const textOf = (result) =>
  result.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");

/**
 * What is called on the reference server, the same in both of its eras: each tool's `name`
 * and `arguments`, the `text` its result matches and, for those that ask, the messages the
 * client is `asked`.
 */
const FIXTURE_TOOLS = {
  simple: { name: "test_simple_text", arguments: {}, text: /^This is a simple text response for testing\.$/ },
  progress: {
    name: "test_tool_with_progress",
    arguments: {},
    text: /Tool with progress executed successfully/,
    progress: [
      [0, 100],
      [50, 100],
      [100, 100],
    ],
  },
  failing: { name: "test_error_handling", arguments: {}, text: /This tool intentionally returns an error for testing/ },
  // The workspace validates arguments against the tool's schema before forwarding (-32602).
  invalid: { name: "test_sampling", arguments: { prompt: 5 } },
  // What a key granted only `simple` is refused.
  other: { name: "test_image_content", arguments: {} },
  resource: { uri: "test://static-text", text: /^This is the content of the static text resource\.$/ },
  // Asked as a server-to-client request in a 2025 session, as an input_required result in 2026.
  elicit: {
    name: "test_elicitation",
    arguments: { message: "Who are you?" },
    asked: ["Who are you?"],
    text: /^User response: action=accept, content=\{"username":"ada","email":"ada@example\.com"\}$/,
  },
  // Two rounds of input_required, each carrying sealed requestState.
  multiRound: {
    name: "test_input_required_result_multi_round",
    arguments: {},
    asked: ["Step 1: What is your name?", "Step 2: What is your favorite color?"],
    text: /^Ada's favorite color is green$/,
  },
};

/**
 * Each upstream: its `kind`, the harness's `upstream`, whether it speaks 2026-07-28
 * (`modern`), and its `tools` (as FIXTURE_TOOLS).
 */
export const UPSTREAMS = [
  {
    kind: "server-everything (session revisions only)",
    upstream: EVERYTHING,
    modern: false,
    tools: {
      simple: { name: "echo", arguments: { message: "hello" }, text: /^Echo: hello$/ },
      progress: {
        name: "trigger-long-running-operation",
        arguments: { duration: 0.3, steps: 3 },
        text: /Long running operation completed/,
        progress: [
          [1, 3],
          [2, 3],
          [3, 3],
        ],
      },
      // server-everything has no failing tool: its SDK answers an unknown one with an error result.
      failing: { name: "no-such-tool", arguments: {}, text: /Tool no-such-tool not found/ },
      invalid: { name: "echo", arguments: { message: 5 } },
      other: { name: "get-sum", arguments: { a: 1, b: 2 } },
      resource: { uri: "demo://resource/dynamic/text/1", text: /^Resource 1: This is a plaintext resource/ },
      // Registered only in a session whose client declared elicitation; asks by a
      // server-to-client request.
      elicit: {
        name: "trigger-elicitation-request",
        arguments: {},
        asked: ["Please provide inputs for the following fields:"],
        text: /User inputs:\n- Name: Ada/,
      },
    },
  },
  { kind: "reference server, both revisions", upstream: conformanceFixture("dual"), modern: true, tools: FIXTURE_TOOLS },
  { kind: "reference server, 2026-07-28 only", upstream: conformanceFixture("modern"), modern: true, tools: FIXTURE_TOOLS },
];

/**
 * Starts the workspace in front of `upstream` (harness.js `start`) with an agent over its
 * connection and a key granted everything on the connection. Resolves to `{ env, fullKey,
 * surfaces }`, where `surfaces.proxy` and `surfaces.gateway` are `{ url, prefix, restrict(tool)
 * }`: the endpoint, what its tool names are prefixed with, and the permissions of a key granted
 * that one tool there; `surfaces.self` the same for `self` (granted everything by the owner key).
 */
export async function startMatrix(upstream) {
  const env = await start({ upstream });
  try {
    const agent = await env.agent({ title: "revisions", instructions: "Answer briefly." });
    const fullKey = await env.newKey("full");
    // The gateway names a member's tools `<first 8 hex digits of the connection id>_<tool>`.
    const prefix = `${env.connectionId.replaceAll("-", "").slice(0, 8)}_`;
    const surfaces = {
      proxy: { url: env.proxyUrl, prefix: "", restrict: (tool) => ({ [env.connectionId]: [tool] }) },
      gateway: { url: agent.gatewayUrl, prefix, restrict: (tool) => ({ [agent.id]: [prefix + tool] }) },
      self: { url: `${env.base}/api/${env.org}/mcp/self`, prefix: "", restrict: (tool) => ({ self: [tool] }) },
    };
    return { env, fullKey, surfaces };
  } catch (error) {
    await env.stop();
    throw error;
  }
}
