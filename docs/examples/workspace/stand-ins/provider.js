// A stand-in OpenAI-compatible model provider for the book's workspace examples
// (`PLATFORM_LLM_BASE_URL`): `POST /chat/completions` streamed as Server-Sent Events. Asked
// with a tool whose name ends in `echo`, it calls it with the user's text; given the tool's
// result, it answers "The echo tool said: <result>"; otherwise it answers "Hello". Prints its
// port on the first line of standard output.
"use strict";

const http = require("node:http");

const chunk = (delta, finish = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** The chunks answering one chat-completions request. */
function answer(request) {
  const last = request.messages.at(-1);
  if (last.role === "tool") {
    return [chunk({ role: "assistant", content: "The echo tool said: " }), chunk({ content: String(last.content) }), chunk({}, "stop")];
  }
  const echo = request.tools?.map((t) => t.function.name).find((name) => name.endsWith("echo"));
  if (echo) {
    const args = JSON.stringify({ message: String(last.content) });
    return [
      chunk({ tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: echo, arguments: args } }] }),
      chunk({}, "tool_calls"),
    ];
  }
  return [chunk({ role: "assistant", content: "Hello" }), chunk({}, "stop")];
}

const server = http.createServer(async (req, res) => {
  let body = "";
  for await (const part of req) body += part;
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const event of answer(JSON.parse(body))) res.write(`data: ${JSON.stringify(event)}\n\n`);
  res.end("data: [DONE]\n\n");
});

server.listen(0, "127.0.0.1", () => console.log(server.address().port));
