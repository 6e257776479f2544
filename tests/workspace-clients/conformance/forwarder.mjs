// A loopback forwarder for the conformance run (run.mjs): the suite sends no Authorization
// header and has no option for one, so it talks to this forwarder, which passes every request
// to the same path on `target` with `Authorization: Bearer <key>` added, and streams both
// bodies (an SSE answer reaches the suite event by event; the suite closing its side closes
// the upstream request).
//
// Host and Origin keep their meaning for DNS-rebinding protection: a request that names the
// forwarder itself (its loopback address and port) is passed on naming the target instead,
// as if the client had addressed the target; any other Host or Origin (the suite's
// `evil.example.com`) is passed on unchanged, for the target to refuse.

import http from "node:http";

const HOP_BY_HOP = ["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"];

/** Resolves to `{ url, close() }` once the forwarder to `target` (an origin URL) listens. */
export async function startForwarder({ target, key, host = "127.0.0.1", port = 0 }) {
  const to = new URL(target);
  const own = new Set();
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    if (own.has(headers.host?.toLowerCase())) headers.host = to.host;
    if (headers.origin) {
      const origin = URL.canParse(headers.origin) ? new URL(headers.origin) : undefined;
      if (origin && origin.protocol === "http:" && own.has(origin.host)) headers.origin = to.origin;
    }
    headers.authorization = `Bearer ${key}`;
    const upstream = http.request(
      // A connection per request: no pooled socket outlives (or is torn down by) another exchange.
      { hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers, agent: false },
      (answer) => {
        const answerHeaders = { ...answer.headers };
        for (const name of HOP_BY_HOP) delete answerHeaders[name];
        res.writeHead(answer.statusCode, answer.statusMessage, answerHeaders);
        res.flushHeaders();
        answer.pipe(res);
      },
    );
    upstream.on("error", (error) => {
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`forwarder: ${error.message}`);
      } else {
        res.destroy();
      }
    });
    // The client going away (a cancelled SSE read) ends the upstream exchange too.
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  const bound = server.address().port;
  for (const name of [host, "localhost", "127.0.0.1", "[::1]"]) own.add(`${name}:${bound}`);
  return {
    url: `http://${host}:${bound}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}
