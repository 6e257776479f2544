// Starts what the client tests drive: an upstream MCP server (by default
// `@modelcontextprotocol/server-everything` in its streamable HTTP mode) and the workspace
// server (`sitefile-workspace serve`, the binary named by SITEFILE_WORKSPACE_BIN) on a fresh
// SQLite database, with an organization, a connection to the upstream and API keys.
// Readiness is each process's own "listening" line, never a delay.

import { spawn, execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createRequire } from "node:module";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from "@modelcontextprotocol/client";

const ORG = "clients";

/**
 * An upstream the harness can start: `node <script> ...args` with PORT in its environment,
 * ready once it prints "listening on port", serving MCP at `path`; the workspace's connection
 * to it is titled `title`.
 */
export const EVERYTHING = {
  name: "server-everything",
  title: "everything",
  script: () =>
    createRequire(import.meta.url)
      .resolve("@modelcontextprotocol/server-everything/package.json")
      .replace(/package\.json$/, "dist/index.js"),
  args: ["streamableHttp"],
  path: "/mcp",
};

/**
 * Our reference server (conformance/fixture.mjs, written with @modelcontextprotocol/server
 * 2.x) as an upstream: `era` `dual` serves 2025-11-25 sessions and 2026-07-28 statelessly on
 * one URL, `modern` only 2026-07-28.
 */
export function conformanceFixture(era = "dual") {
  return {
    name: `conformance fixture (${era})`,
    title: "conformance-fixture",
    script: join(dirname(fileURLToPath(import.meta.url)), "conformance", "fixture.mjs"),
    args: ["--era", era],
    path: "/mcp",
  };
}

/** A free loopback port (the OS picks one; it is released before use). */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Spawns `command` and resolves once a line of its output matches `ready`; all of its output
 * also goes to `log` (a writable stream), when given.
 */
export function startProcess(name, command, args, env, ready, log) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const started = new Promise((resolve, reject) => {
    const watch = (chunk) => {
      log?.write(chunk);
      if (output === null) return;
      output += chunk;
      if (ready.test(output)) {
        output = null;
        resolve(child);
      }
    };
    child.stdout.on("data", watch);
    child.stderr.on("data", watch);
    child.on("exit", (code) => reject(new Error(`${name} exited (${code}) before it was ready:\n${output}`)));
  });
  return started;
}

/** Stops a child process and waits for its exit. */
export async function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

/**
 * Starts the upstream (`upstream`, shaped like EVERYTHING) and the workspace server
 * (accepting the access tokens of `oauthIssuer`, the organization's owner signing in as
 * `oauthSubject`, when given; `env` adds to the server's environment; `logs`, when given, is
 * `{ upstream, workspace }`: writable streams for each process's output). Resolves to `{
 * base, org, proxyUrl, upstreamUrl, connectionId, ownerKey, tool(name, input), newKey(name, permissions),
 * agent(data), initOrg(slug, subject), restart(), stop() }`.
 */
export async function start({ oauthIssuer, oauthSubject, env: extraEnv, upstream = EVERYTHING, logs } = {}) {
  const bin = process.env.SITEFILE_WORKSPACE_BIN;
  if (!bin) throw new Error("SITEFILE_WORKSPACE_BIN must name the sitefile-workspace binary (scripts/workspace-clients.sh sets it)");
  const dir = await mkdtemp(join(tmpdir(), "workspace-clients-"));
  const children = [];
  const stop = async () => {
    await Promise.all(children.map(stopProcess));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const script = typeof upstream.script === "function" ? upstream.script() : upstream.script;
    const upstreamPort = await freePort();
    children.push(
      await startProcess(
        upstream.name,
        process.execPath,
        [script, ...upstream.args],
        { PORT: String(upstreamPort) },
        /listening on port/,
        logs?.upstream,
      ),
    );
    const upstreamUrl = `http://127.0.0.1:${upstreamPort}${upstream.path}`;

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      PLATFORM_DATABASE_URL: `sqlite://${join(dir, "workspace.db")}`,
      PLATFORM_WORKSPACE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      PLATFORM_PUBLIC_URL: base,
      RUST_LOG: "warn,sitefile_workspace=info",
      ...(oauthIssuer ? { PLATFORM_OAUTH_ISSUER: oauthIssuer } : {}),
      ...extraEnv,
    };
    const initOrg = async (slug, subject) => {
      const args = ["init", "--org", slug, ...(subject ? ["--oauth-subject", subject] : [])];
      const { stdout } = await promisify(execFile)(bin, args, { env: { ...process.env, ...env } });
      return stdout.trim();
    };
    const ownerKey = await initOrg(ORG, oauthSubject);
    const serve = () =>
      startProcess("sitefile-workspace", bin, ["serve", "--listen", `127.0.0.1:${port}`], env, /workspace API listening/, logs?.workspace);
    let server = await serve();
    children.push(server);

    const tool = async (name, input) => {
      const response = await fetch(`${base}/api/${ORG}/tools/${name}`, {
        method: "POST",
        headers: { authorization: `Bearer ${ownerKey}`, "content-type": "application/json" },
        body: JSON.stringify(input),
      });
      const body = await response.json();
      if (!response.ok) throw new Error(`${name}: HTTP ${response.status} ${JSON.stringify(body)}`);
      return body;
    };
    const { item } = await tool("COLLECTION_CONNECTIONS_CREATE", {
      data: { title: upstream.title, connection_url: upstreamUrl },
    });
    return {
      base,
      org: ORG,
      proxyUrl: `${base}/api/${ORG}/mcp/${item.id}`,
      upstreamUrl,
      connectionId: item.id,
      ownerKey,
      tool,
      /** Kills the workspace server (SIGKILL: no shutdown) and starts it again on its database. */
      restart: async () => {
        const exited = new Promise((resolve) => server.once("exit", resolve));
        server.kill("SIGKILL");
        await exited;
        server = await serve();
        children.push(server);
      },
      /** A new API key granted `permissions` (by default everything on the connection). */
      newKey: async (name, permissions = { [item.id]: ["*"] }) => (await tool("API_KEY_CREATE", { name, permissions })).key,
      /**
       * Creates an agent (a virtual MCP server: `data` adds to its title and members, by
       * default the connection alone); its `{ id, gatewayUrl }`.
       */
      agent: async (data) => {
        const { item: agent } = await tool("COLLECTION_VIRTUAL_MCP_CREATE", {
          data: { connections: [{ connection_id: item.id }], ...data },
        });
        return { id: agent.id, gatewayUrl: `${base}/api/${ORG}/mcp/gateway/${agent.id}` };
      },
      /** Creates another organization (its owner signing in as `subject`); its owner key. */
      initOrg,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * An MCP SDK client connected to `url` with `key` (none: direct to the upstream),
 * declaring `capabilities`; `intercept(init, response)` may replace each response the
 * transport gets. `streamOpened` resolves when the client's GET stream (server-to-client)
 * is open.
 */
export async function connect(url, key, { capabilities, intercept } = {}) {
  let opened;
  const streamOpened = new Promise((resolve) => {
    opened = resolve;
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: key ? { headers: { authorization: `Bearer ${key}` } } : undefined,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      if (init?.method === "GET" && response.ok) opened();
      return intercept ? intercept(init, response) : response;
    },
  });
  const client = new Client({ name: "workspace-clients", version: "1.0.0" }, capabilities ? { capabilities } : undefined);
  await client.connect(transport);
  return { client, transport, streamOpened };
}

/**
 * An official v2 TypeScript SDK client (@modelcontextprotocol/client 2.x) connected to `url`
 * with `key`, negotiating as `mode` says: `undefined` (the client's default, the session
 * revisions), `'legacy'`, `'auto'` or `{ pin: '2026-07-28' }`; declaring `capabilities`.
 * `elicit(params)`, when given, answers `elicitation/create` (a server-to-client request, or an
 * input request of a multi round-trip result, which the client fulfils by the same handler);
 * `fetch`, when given, is the transport's fetch.
 */
export async function connectV2(url, key, { mode, capabilities, elicit, fetch } = {}) {
  const transport = new StreamableHTTPClientTransportV2(new URL(url), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    ...(fetch ? { fetch } : {}),
  });
  const client = new ClientV2(
    { name: "workspace-clients-v2", version: "1.0.0" },
    { ...(mode ? { versionNegotiation: { mode } } : {}), ...(capabilities ? { capabilities } : {}) },
  );
  if (elicit) client.setRequestHandler("elicitation/create", (request) => elicit(request.params));
  await client.connect(transport);
  return client;
}
