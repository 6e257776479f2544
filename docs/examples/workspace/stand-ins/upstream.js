// A stand-in upstream MCP server for the book's workspace examples: streamable HTTP on
// loopback, session revisions (2025-11-25 and before), one tool `echo` that answers its
// `message`. Prints its port on the first line of standard output.
"use strict";

const http = require("node:http");

const ECHO = {
  name: "echo",
  description: "Answers the message it is given.",
  inputSchema: {
    type: "object",
    properties: { message: { type: "string" } },
    required: ["message"],
  },
};

/** The JSON-RPC answer to one request. */
function answer(message) {
  const result = (value) => ({ jsonrpc: "2.0", id: message.id, result: value });
  const error = (code, text) => ({ jsonrpc: "2.0", id: message.id, error: { code, message: text } });
  switch (message.method) {
    case "initialize":
      return result({
        protocolVersion: message.params?.protocolVersion ?? "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "stand-in-upstream", version: "1.0.0" },
      });
    case "ping":
      return result({});
    case "tools/list":
      return result({ tools: [ECHO] });
    case "tools/call":
      if (message.params?.name !== "echo") return error(-32602, `Unknown tool: ${message.params?.name}`);
      return result({ content: [{ type: "text", text: String(message.params.arguments.message) }] });
    default:
      return error(-32601, `Method not found: ${message.method}`);
  }
}

const server = http.createServer(async (req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { allow: "POST" }).end();
    return;
  }
  let body = "";
  for await (const part of req) body += part;
  const message = JSON.parse(body);
  if (message.id === undefined) {
    res.writeHead(202).end();
    return;
  }
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(answer(message)));
});

server.listen(0, "127.0.0.1", () => console.log(server.address().port));
