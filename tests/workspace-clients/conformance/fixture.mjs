// The reference server of the MCP conformance run (run.mjs): the fixture tools, resources and
// prompts the suite's server scenarios name (@modelcontextprotocol/conformance), written with
// @modelcontextprotocol/server 2.x. One URL (`/mcp`) serves both revisions: 2025-11-25 as
// sessions opened by `initialize`, 2026-07-28 stateless (per-request `_meta` envelope); with
// `--era modern` only 2026-07-28 (an `initialize` is answered with -32022). Host and Origin must
// name a loopback host (DNS-rebinding protection): anything else is a 403.
//
//   node fixture.mjs [--port N] [--era dual|modern]      (PORT in the environment also works)
//
// Prints "conformance fixture (<era>) listening on port N" once it accepts connections.

import http from "node:http";
import { randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";

import { z } from "zod";
import {
  CLIENT_CAPABILITIES_META_KEY,
  McpServer,
  ResourceTemplate,
  WebStandardStreamableHTTPServerTransport,
  completable,
  createMcpHandler,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  isJsonContentType,
  isLegacyRequest,
  localhostAllowedHostnames,
  validateHostHeader,
  validateOriginHeader,
} from "@modelcontextprotocol/server";

const { values: options } = parseArgs({
  options: { port: { type: "string" }, era: { type: "string", default: "dual" } },
});
const port = Number(options.port ?? process.env.PORT ?? 0);
const era = options.era;
if (era !== "dual" && era !== "modern") {
  console.error(`--era must be dual or modern, not ${era}`);
  process.exit(2);
}

// 1x1 red PNG; a 16-sample 8 kHz mono 8-bit WAV (silence).
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
const WAV = (() => {
  const samples = Buffer.alloc(16, 0x80);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + samples.length, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16); // fmt chunk size
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24); // sample rate
  header.writeUInt32LE(8000, 28); // byte rate
  header.writeUInt16LE(1, 32); // block align
  header.writeUInt16LE(8, 34); // bits per sample
  header.write("data", 36);
  header.writeUInt32LE(samples.length, 40);
  return Buffer.concat([header, samples]).toString("base64");
})();

// Multi-round `requestState` is HMAC-sealed: a tampered one is refused by the SDK with -32602.
const stateCodec = createRequestStateCodec({ key: randomBytes(32) });

const text = (value) => ({ content: [{ type: "text", text: value }] });
const nameSchema = { type: "object", properties: { name: { type: "string" } }, required: ["name"] };

/** The capabilities the client declared: the request's envelope (2026-07-28) or its session. */
function clientCapabilities(server, ctx) {
  return ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.server.getClientCapabilities() ?? {};
}

/** The accepted content of an elicitation answer under `key`, or undefined. */
function accepted(ctx, key) {
  const view = inputResponse(ctx.mcpReq.inputResponses, key);
  return view.kind === "elicit" && view.action === "accept" ? (view.content ?? {}) : undefined;
}

/** The open legacy sessions' servers, for list-changed notifications. */
const legacySessions = new Map();
let modernHandler;

function listChanged(kind) {
  if (kind === "tools") modernHandler?.notify.toolsChanged();
  else modernHandler?.notify.promptsChanged();
  for (const { server } of legacySessions.values()) {
    if (kind === "tools") server.sendToolListChanged();
    else server.sendPromptListChanged();
  }
}

/** One server instance: per request for 2026-07-28, per session for 2025-11-25. */
function buildServer(serverEra) {
  const server = new McpServer(
    { name: "sitefile-conformance-fixture", version: "1.0.0" },
    {
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        logging: {},
        completions: {},
      },
      requestState: { verify: (state, ctx) => stateCodec.verify(state, ctx) },
    },
  );
  const legacy = serverEra === "legacy";
  const tool = (name, description, inputSchema, handler) =>
    server.registerTool(name, { description, ...(inputSchema ? { inputSchema } : {}) }, handler);

  // Content.
  tool("test_simple_text", "Returns a simple text response.", undefined, () => text("This is a simple text response for testing."));
  tool("test_image_content", "Returns a PNG image.", undefined, () => ({ content: [{ type: "image", data: PNG, mimeType: "image/png" }] }));
  tool("test_audio_content", "Returns a WAV clip.", undefined, () => ({ content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] }));
  tool("test_embedded_resource", "Returns an embedded text resource.", undefined, () => ({
    content: [
      {
        type: "resource",
        resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." },
      },
    ],
  }));
  tool("test_multiple_content_types", "Returns text, an image and a resource.", undefined, () => ({
    content: [
      { type: "text", text: "Multiple content types test:" },
      { type: "image", data: PNG, mimeType: "image/png" },
      {
        type: "resource",
        resource: {
          uri: "test://mixed-content-resource",
          mimeType: "application/json",
          text: JSON.stringify({ test: "data", value: 123 }),
        },
      },
    ],
  }));
  tool("test_error_handling", "Always fails.", undefined, () => ({
    isError: true,
    content: [{ type: "text", text: "This tool intentionally returns an error for testing" }],
  }));

  // Notifications while a call runs.
  tool("test_tool_with_logging", "Logs three messages while it runs.", undefined, async (ctx) => {
    await ctx.mcpReq.log("info", "Tool execution started");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool processing data");
    await sleep(50);
    await ctx.mcpReq.log("info", "Tool execution completed");
    return text("Tool with logging executed successfully");
  });
  tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100.", undefined, async (ctx) => {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    for (const [index, progress] of [0, 50, 100].entries()) {
      if (index > 0) await sleep(50);
      if (progressToken !== undefined) {
        await ctx.mcpReq.notify({ method: "notifications/progress", params: { progressToken, progress, total: 100 } });
      }
    }
    return text("Tool with progress executed successfully");
  });
  tool("test_logging_tool", "Logs a message (only sent when the request asks for a log level).", undefined, async (ctx) => {
    await ctx.mcpReq.log("info", "test_logging_tool ran");
    return text("Logged");
  });

  // Input from the client: pushed server requests on a 2025-11-25 session (sent on the call's
  // own SSE stream: unrelated, they would go to the session's GET stream, which the client may
  // not have opened yet, and be lost), input_required results (multi-round-trip) on 2026-07-28.
  const onThisRequest = (ctx) => ({ relatedRequestId: ctx.mcpReq.id });
  const ask = (key, request, finish) => async (args, ctx) => {
    if (legacy) return finish(await request.legacy(args, ctx));
    const view = inputResponse(ctx.mcpReq.inputResponses, key);
    if (view.kind !== "missing")
      return finish(view.kind === "elicit" ? { action: view.action, content: view.content } : (view.result ?? view));
    return inputRequired({ inputRequests: { [key]: request.modern(args) } });
  };
  const samplingParams = ({ prompt }) => ({ messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 100 });
  tool(
    "test_sampling",
    "Asks the client to sample a completion of the prompt.",
    z.object({ prompt: z.string().describe("The prompt to send to the LLM") }),
    async (args, ctx) => {
      if (legacy && !clientCapabilities(server, ctx).sampling) {
        return { isError: true, content: [{ type: "text", text: "The client does not support sampling" }] };
      }
      return ask(
        "sampling",
        {
          legacy: (a, c) => c.mcpReq.requestSampling(samplingParams(a), onThisRequest(c)),
          modern: (a) => inputRequired.createMessage(samplingParams(a)),
        },
        (result) => text(`LLM response: ${result.content?.text ?? JSON.stringify(result.content)}`),
      )(args, ctx);
    },
  );
  const elicitTool = (name, description, inputSchema, params, format) =>
    tool(name, description, inputSchema, async (...call) => {
      const [args, ctx] = call.length === 2 ? call : [{}, call[0]];
      if (legacy && !clientCapabilities(server, ctx).elicitation) {
        return { isError: true, content: [{ type: "text", text: "The client does not support elicitation" }] };
      }
      return ask(
        "elicitation",
        {
          legacy: (a, c) => c.mcpReq.elicitInput(params(a), onThisRequest(c)),
          modern: (a) => inputRequired.elicit(params(a)),
        },
        (result) => text(format(result)),
      )(args, ctx);
    });
  elicitTool(
    "test_elicitation",
    "Asks the user for a username and an email address.",
    z.object({ message: z.string().describe("The message to show the user") }),
    ({ message }) => ({
      message,
      requestedSchema: {
        type: "object",
        properties: {
          username: { type: "string", description: "User's response" },
          email: { type: "string", description: "User's email address" },
        },
        required: ["username", "email"],
      },
    }),
    (result) => `User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
  );
  elicitTool(
    "test_elicitation_sep1034_defaults",
    "Elicits every primitive type with a default value (SEP-1034).",
    undefined,
    () => ({
      message: "Please review and update the form fields with defaults",
      requestedSchema: {
        type: "object",
        properties: {
          name: { type: "string", description: "User name", default: "John Doe" },
          age: { type: "integer", description: "User age", default: 30 },
          score: { type: "number", description: "User score", default: 95.5 },
          status: { type: "string", description: "User status", enum: ["active", "inactive", "pending"], default: "active" },
          verified: { type: "boolean", description: "Verification status", default: true },
        },
        required: [],
      },
    }),
    (result) => `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
  );
  elicitTool(
    "test_elicitation_sep1330_enums",
    "Elicits the five enum schema variants (SEP-1330).",
    undefined,
    () => ({
      message: "Please select options from the enum fields",
      requestedSchema: {
        type: "object",
        properties: {
          untitledSingle: { type: "string", description: "Untitled single-select", enum: ["option1", "option2", "option3"] },
          titledSingle: {
            type: "string",
            description: "Titled single-select",
            oneOf: [
              { const: "value1", title: "First Option" },
              { const: "value2", title: "Second Option" },
              { const: "value3", title: "Third Option" },
            ],
          },
          legacyEnum: {
            type: "string",
            description: "Legacy titled single-select",
            enum: ["opt1", "opt2", "opt3"],
            enumNames: ["Option One", "Option Two", "Option Three"],
          },
          untitledMulti: {
            type: "array",
            description: "Untitled multi-select",
            items: { type: "string", enum: ["option1", "option2", "option3"] },
          },
          titledMulti: {
            type: "array",
            description: "Titled multi-select",
            items: {
              anyOf: [
                { const: "value1", title: "First Choice" },
                { const: "value2", title: "Second Choice" },
                { const: "value3", title: "Third Choice" },
              ],
            },
          },
        },
        required: [],
      },
    }),
    (result) => `Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`,
  );

  // The diagnostics of server-stateless (2026-07-28).
  // Asks for sampling: the SDK's input_required capability gate answers a client that did not
  // declare it with -32021 (HTTP 400), before anything reaches the client.
  tool("test_missing_capability", "Needs the sampling capability (-32021 without it).", undefined, (ctx) => {
    const view = inputResponse(ctx.mcpReq.inputResponses, "sampling");
    if (view.kind === "sampling") return text(`Sampled: ${view.result.content?.text ?? ""}`);
    return inputRequired({
      inputRequests: {
        sampling: inputRequired.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "Say hello" } }],
          maxTokens: 20,
        }),
      },
    });
  });
  // Needs input: on 2026-07-28 that is an input_required result, never a request on the stream.
  tool("test_streaming_elicitation", "Asks the user for their name.", undefined, (ctx) => {
    const answer = accepted(ctx, "user_name");
    if (answer) return text(`Hello, ${answer.name}!`);
    return inputRequired({
      inputRequests: { user_name: inputRequired.elicit({ message: "What is your name?", requestedSchema: nameSchema }) },
    });
  });
  tool("test_trigger_tool_change", "Announces a changed tool list.", undefined, () => {
    listChanged("tools");
    return text("tools/list_changed sent");
  });
  tool("test_trigger_prompt_change", "Announces a changed prompt list.", undefined, () => {
    listChanged("prompts");
    return text("prompts/list_changed sent");
  });

  // Multi-round-trip (SEP-2322).
  tool("test_input_required_result_elicitation", "Asks for the user name, then greets.", undefined, (ctx) => {
    const answer = accepted(ctx, "user_name");
    if (answer && typeof answer.name === "string") return text(`Hello, ${answer.name}!`);
    return inputRequired({
      inputRequests: { user_name: inputRequired.elicit({ message: "What is your name?", requestedSchema: nameSchema }) },
    });
  });
  tool("test_input_required_result_sampling", "Asks the client to sample an answer.", undefined, (ctx) => {
    const view = inputResponse(ctx.mcpReq.inputResponses, "capital_question");
    if (view.kind === "sampling") return text(`The model answered: ${view.result.content?.text ?? ""}`);
    return inputRequired({
      inputRequests: {
        capital_question: inputRequired.createMessage({
          messages: [{ role: "user", content: { type: "text", text: "What is the capital of France?" } }],
          maxTokens: 100,
        }),
      },
    });
  });
  tool("test_input_required_result_list_roots", "Asks for the client roots.", undefined, (ctx) => {
    const view = inputResponse(ctx.mcpReq.inputResponses, "client_roots");
    if (view.kind === "roots") return text(`Client roots: ${view.roots.map((root) => root.uri).join(", ") || "(none)"}`);
    return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
  });
  tool("test_input_required_result_request_state", "Asks for a confirmation, carrying sealed state.", undefined, async (ctx) => {
    const state = ctx.mcpReq.requestState();
    const confirm = accepted(ctx, "confirm");
    if (state?.tool === "request_state" && confirm) return text(`state-ok: confirmed=${confirm.ok}`);
    return inputRequired({
      inputRequests: {
        confirm: inputRequired.elicit({
          message: "Please confirm",
          requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
        }),
      },
      requestState: await stateCodec.mint({ tool: "request_state" }),
    });
  });
  tool(
    "test_input_required_result_multiple_inputs",
    "Asks for a name, a sampled greeting and the roots at once.",
    undefined,
    async (ctx) => {
      const state = ctx.mcpReq.requestState();
      const name = accepted(ctx, "user_name");
      const greeting = inputResponse(ctx.mcpReq.inputResponses, "greeting");
      const roots = inputResponse(ctx.mcpReq.inputResponses, "client_roots");
      if (state?.tool === "multiple_inputs" && name && greeting.kind === "sampling" && roots.kind === "roots") {
        return text(`${greeting.result.content?.text ?? "Hello"} ${name.name} (${roots.roots.length} roots)`);
      }
      return inputRequired({
        inputRequests: {
          user_name: inputRequired.elicit({ message: "What is your name?", requestedSchema: nameSchema }),
          greeting: inputRequired.createMessage({
            messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await stateCodec.mint({ tool: "multiple_inputs" }),
      });
    },
  );
  tool("test_input_required_result_multi_round", "Asks two questions in two rounds.", undefined, async (ctx) => {
    const state = ctx.mcpReq.requestState();
    const step1 = accepted(ctx, "step1");
    const step2 = accepted(ctx, "step2");
    if (state?.tool === "multi_round" && state.round === 2 && step2) return text(`${state.name}'s favorite color is ${step2.color}`);
    if (state?.tool === "multi_round" && state.round === 1 && step1) {
      return inputRequired({
        inputRequests: {
          step2: inputRequired.elicit({
            message: "Step 2: What is your favorite color?",
            requestedSchema: { type: "object", properties: { color: { type: "string" } }, required: ["color"] },
          }),
        },
        requestState: await stateCodec.mint({ tool: "multi_round", round: 2, name: step1.name }),
      });
    }
    return inputRequired({
      inputRequests: { step1: inputRequired.elicit({ message: "Step 1: What is your name?", requestedSchema: nameSchema }) },
      requestState: await stateCodec.mint({ tool: "multi_round", round: 1 }),
    });
  });
  tool("test_input_required_result_tampered_state", "Carries sealed state; a tampered one is refused.", undefined, async (ctx) => {
    const state = ctx.mcpReq.requestState();
    if (state?.tool === "tampered_state" && accepted(ctx, "confirm")) return text("state verified");
    return inputRequired({
      inputRequests: {
        confirm: inputRequired.elicit({
          message: "Please confirm",
          requestedSchema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
        }),
      },
      requestState: await stateCodec.mint({ tool: "tampered_state" }),
    });
  });
  tool("test_input_required_result_capabilities", "Asks only for what the client declared.", undefined, (ctx) => {
    const capabilities = clientCapabilities(server, ctx);
    const responses = ctx.mcpReq.inputResponses ?? {};
    const inputRequests = {};
    if (capabilities.elicitation && !("user_name" in responses)) {
      inputRequests.user_name = inputRequired.elicit({ message: "What is your name?", requestedSchema: nameSchema });
    }
    if (capabilities.sampling && !("greeting" in responses)) {
      inputRequests.greeting = inputRequired.createMessage({
        messages: [{ role: "user", content: { type: "text", text: "Generate a greeting" } }],
        maxTokens: 50,
      });
    }
    if (capabilities.roots && !("client_roots" in responses)) inputRequests.client_roots = inputRequired.listRoots();
    if (Object.keys(inputRequests).length > 0) return inputRequired({ inputRequests });
    return text(`Done with ${Object.keys(responses).join(", ") || "no input"}`);
  });

  // Resources.
  server.registerResource(
    "static-text",
    "test://static-text",
    { description: "A static text resource", mimeType: "text/plain" },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: "This is the content of the static text resource." }],
    }),
  );
  server.registerResource("static-binary", "test://static-binary", { description: "A static PNG image", mimeType: "image/png" }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: "image/png", blob: PNG }],
  }));
  server.registerResource(
    "watched-resource",
    "test://watched-resource",
    { description: "A resource to subscribe to", mimeType: "text/plain" },
    (uri) => ({
      contents: [{ uri: uri.href, mimeType: "text/plain", text: "Watched resource content." }],
    }),
  );
  server.registerResource(
    "template-data",
    new ResourceTemplate("test://template/{id}/data", { list: undefined }),
    { description: "Data for an id", mimeType: "application/json" },
    (uri, { id }) => ({
      contents: [
        { uri: uri.href, mimeType: "application/json", text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) },
      ],
    }),
  );
  if (legacy) {
    const subscriptions = new Set();
    server.server.setRequestHandler("resources/subscribe", (request) => {
      subscriptions.add(request.params.uri);
      return {};
    });
    server.server.setRequestHandler("resources/unsubscribe", (request) => {
      subscriptions.delete(request.params.uri);
      return {};
    });
  }

  // Prompts.
  const say = (value) => ({ role: "user", content: { type: "text", text: value } });
  server.registerPrompt("test_simple_prompt", { description: "A prompt without arguments" }, () => ({
    messages: [say("This is a simple prompt for testing.")],
  }));
  server.registerPrompt(
    "test_prompt_with_arguments",
    {
      description: "A prompt with two arguments",
      argsSchema: z.object({
        arg1: completable(z.string().describe("First test argument"), (value) =>
          ["paris", "park", "party"].filter((v) => v.startsWith(value ?? "")),
        ),
        arg2: z.string().describe("Second test argument"),
      }),
    },
    ({ arg1, arg2 }) => ({ messages: [say(`Prompt with arguments: arg1='${arg1}', arg2='${arg2}'`)] }),
  );
  server.registerPrompt(
    "test_prompt_with_embedded_resource",
    {
      description: "A prompt embedding a resource",
      argsSchema: z.object({ resourceUri: z.string().describe("URI of the resource to embed") }),
    },
    ({ resourceUri }) => ({
      messages: [
        {
          role: "user",
          content: {
            type: "resource",
            resource: { uri: resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." },
          },
        },
        say("Please process the embedded resource above."),
      ],
    }),
  );
  server.registerPrompt("test_prompt_with_image", { description: "A prompt with an image" }, () => ({
    messages: [{ role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } }, say("Please analyze the image above.")],
  }));
  server.registerPrompt("test_input_required_result_prompt", { description: "A prompt that asks for context first" }, (ctx) => {
    const answer = accepted(ctx, "user_context");
    if (answer) return { messages: [say(`Use this context: ${answer.context}`)] };
    return inputRequired({
      inputRequests: {
        user_context: inputRequired.elicit({
          message: "What context should the prompt use?",
          requestedSchema: { type: "object", properties: { context: { type: "string" } }, required: ["context"] },
        }),
      },
    });
  });

  return server;
}

modernHandler = createMcpHandler(() => buildServer("modern"), { legacy: "reject" });

/** 2025-11-25: a session per `initialize`, its transport answering the session's requests. */
async function serveLegacy(request) {
  const sessionId = request.headers.get("mcp-session-id");
  if (sessionId) {
    const session = legacySessions.get(sessionId);
    if (!session) return jsonRpcError(404, -32001, "Session not found");
    return session.transport.handleRequest(request);
  }
  const body =
    request.method === "POST"
      ? await request
          .clone()
          .json()
          .catch(() => undefined)
      : undefined;
  if (body?.method !== "initialize") return jsonRpcError(400, -32000, "Bad Request: no session; send initialize first");
  const server = buildServer("legacy");
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => legacySessions.set(id, { server, transport }),
    onsessionclosed: (id) => legacySessions.delete(id),
  });
  transport.onclose = () => {
    if (transport.sessionId) legacySessions.delete(transport.sessionId);
  };
  await server.connect(transport);
  return transport.handleRequest(request);
}

function jsonRpcError(status, code, message) {
  return Response.json({ jsonrpc: "2.0", id: null, error: { code, message } }, { status });
}

async function serve(request) {
  const allowed = localhostAllowedHostnames();
  const host = validateHostHeader(request.headers.get("host"), allowed);
  if (!host.ok) return jsonRpcError(403, -32000, `Forbidden: ${host.message}`);
  const origin = validateOriginHeader(request.headers.get("origin"), allowed);
  if (!origin.ok) return jsonRpcError(403, -32000, `Forbidden: ${origin.message}`);
  if (new URL(request.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
  if (request.method === "POST" && !isJsonContentType(request.headers.get("content-type"))) {
    return jsonRpcError(415, -32000, "Unsupported Media Type: Content-Type must be application/json");
  }
  if (era === "dual" && (await isLegacyRequest(request))) return serveLegacy(request);
  return modernHandler.fetch(request);
}

const server = http.createServer(async (req, res) => {
  const aborted = new AbortController();
  res.on("close", () => aborted.abort());
  try {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      for (const item of [value].flat()) headers.append(name, item);
    }
    const hasBody = req.method !== "GET" && req.method !== "HEAD" && chunks.length > 0;
    const request = new Request(`http://${req.headers.host ?? "localhost"}${req.url}`, {
      method: req.method,
      headers,
      body: hasBody ? Buffer.concat(chunks) : undefined,
      signal: aborted.signal,
    });
    const response = await serve(request);
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.flushHeaders();
    if (response.body) {
      const reader = response.body.getReader();
      aborted.signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        res.write(value);
      }
    }
    res.end();
  } catch (error) {
    if (!res.headersSent) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(String(error?.stack ?? error));
    } else {
      res.destroy();
    }
  }
});
server.listen(port, "127.0.0.1", () => {
  console.log(`conformance fixture (${era}) listening on port ${server.address().port}`);
});
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
