// The official Python MCP client (PyPI `mcp` 2.x, pinned in python/requirements.txt and
// installed into target/py-mcp by scripts/workspace-clients.sh, which names its interpreter in
// SITEFILE_PYTHON) in each of its modes (`legacy`, `auto`, pinned to 2026-07-28) through the
// connection proxy and the gateway in front of each upstream of upstreams.js, and `self`:
// python/drive.py lists and calls tools, follows a call's progress, reads a resource, gets a
// tool's error result and the workspace's refusals (invalid arguments, an unknown tool, a tool
// the key is not granted), and answers what the upstream asks (elicitation: a server-to-client
// request in a 2025 session, multi round-trip `input_required` results in 2026-07-28), printing
// what it observed as JSON, which the tests here assert on.
//
// One workspace server and upstream per upstream kind; its drives (one per surface and mode)
// run at once in one Python process, before that kind's tests read what they printed.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";

import { EVERYTHING } from "./harness.js";
import { LEGACY, MODERN, UPSTREAMS, startMatrix, textOf } from "./upstreams.js";

const PYTHON = process.env.SITEFILE_PYTHON;
const DRIVE = join(dirname(fileURLToPath(import.meta.url)), "python", "drive.py");
const DRIVE_TIMEOUT_MS = 60_000;

/** The client's modes (its `mode=`), and the revision each negotiates with the workspace. */
const MODES = [
  { mode: "legacy", version: LEGACY },
  { mode: "auto", version: MODERN },
  { mode: MODERN, version: MODERN },
];

/** Fails unless SITEFILE_PYTHON names an interpreter (a missing client is a failure, not a skip). */
function requirePython() {
  if (!PYTHON || !existsSync(PYTHON)) {
    throw new Error(
      `SITEFILE_PYTHON must name the Python client's interpreter (scripts/workspace-clients.sh makes target/py-mcp and sets it); it is ${PYTHON === undefined ? "unset" : `${PYTHON}, which does not exist`}`,
    );
  }
}

test("SITEFILE_PYTHON names the Python client's interpreter", () => {
  requirePython();
});

/**
 * Runs drive.py's `jobs` (`{ url, key, mode, plan }`) at once in one Python process; what each
 * observed, in order.
 */
async function driveAll(jobs) {
  const child = spawn(PYTHON, [DRIVE, "-"], { stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), DRIVE_TIMEOUT_MS);
  child.stdin.end(JSON.stringify(jobs));
  const [code, signal] = await once(child, "exit");
  clearTimeout(timer);
  if (code !== 0) throw new Error(`drive.py exited (${code ?? signal}):\n${stderr}`);
  const observed = JSON.parse(stdout);
  observed.forEach((seen, index) => {
    if (seen.failed) throw new Error(`drive.py ${jobs[index].url} in mode ${jobs[index].mode} failed: ${seen.failed}\n${stderr}`);
  });
  return observed;
}

/** Asserts an outcome is a result that is not an error, matching `text`. */
function assertResult(outcome, text) {
  assert.ok(outcome?.result, JSON.stringify(outcome));
  assert.equal(outcome.result.isError, false, JSON.stringify(outcome));
  assert.match(textOf(outcome.result), text);
}

/** Asserts an outcome is a JSON-RPC error of `code` whose message matches `message`. */
function assertError(outcome, code, message) {
  assert.ok(outcome?.error, JSON.stringify(outcome));
  assert.equal(outcome.error.code, code, JSON.stringify(outcome));
  assert.match(outcome.error.message, message);
}

/** What the Python client is asked to do through `surface` (see drive.py), its tool names prefixed. */
function planFor({ tools, modern: modernUpstream }, surface, restrictedKey) {
  const named = (tool) => ({ name: surface.prefix + tool.name, arguments: tool.arguments });
  const plan = {
    call: named(tools.simple),
    progress: named(tools.progress),
    failing: named(tools.failing),
    invalid: named(tools.invalid),
    refused: { key: restrictedKey, granted: named(tools.simple), denied: named(tools.other) },
  };
  if (surface.name === "proxy") {
    plan.resource = tools.resource.uri;
    plan.elicit = [named(tools.elicit), ...(tools.multiRound ? [named(tools.multiRound)] : [])];
  } else {
    plan.unknown = { name: "no-such-tool", arguments: {} };
    // Only a stateless upstream can ask a gateway client (by a multi round-trip result);
    // server-everything offers its elicitation tool to sessions that declared elicitation.
    if (modernUpstream) plan.elicit = [named(tools.elicit), named(tools.multiRound)];
  }
  return plan;
}

for (const upstreamCase of UPSTREAMS) {
  const { kind, upstream, modern: modernUpstream, tools } = upstreamCase;
  const withSelf = upstream === EVERYTHING;

  describe(`python: upstream ${kind}`, () => {
    let env;
    // What each drive printed, by `${surface} ${mode}`.
    const observed = new Map();

    before(async () => {
      requirePython();
      let fullKey;
      let surfaces;
      ({ env, fullKey, surfaces } = await startMatrix(upstream));
      // Each drive under its key in `observed`.
      const jobs = [];
      for (const name of ["proxy", "gateway"]) {
        const surface = { name, ...surfaces[name] };
        const restrictedKey = await env.newKey(`python-${name}`, surface.restrict(tools.simple.name));
        const plan = planFor(upstreamCase, surface, restrictedKey);
        for (const { mode } of MODES) jobs.push({ id: `${name} ${mode}`, url: surface.url, key: fullKey, mode, plan });
      }
      if (withSelf) {
        const restrictedKey = await env.newKey("python-self", surfaces.self.restrict("COLLECTION_CONNECTIONS_LIST"));
        const plan = {
          call: { name: "COLLECTION_CONNECTIONS_LIST", arguments: {} },
          unknown: { name: "NO_SUCH_TOOL", arguments: {} },
          refused: {
            key: restrictedKey,
            granted: { name: "COLLECTION_CONNECTIONS_LIST", arguments: {} },
            denied: { name: "API_KEY_LIST", arguments: {} },
          },
        };
        for (const { mode } of MODES) jobs.push({ id: `self ${mode}`, url: surfaces.self.url, key: env.ownerKey, mode, plan });
      }
      const seen = await driveAll(jobs);
      for (const [index, { id }] of jobs.entries()) observed.set(id, seen[index]);
    });

    after(async () => {
      await env?.stop();
    });

    for (const { mode, version } of MODES) {
      const modernClient = version === MODERN;

      describe(`the proxy, mode ${mode}`, () => {
        const seen = () => observed.get(`proxy ${mode}`);

        test("negotiates its revision and lists the upstream tools", () => {
          assert.equal(seen().protocolVersion, version);
          for (const tool of [tools.simple, tools.progress, tools.other])
            assert.ok(seen().tools.includes(tool.name), seen().tools.join(", "));
          // As in upstream-revisions.test.js: a session upstream's elicitation tool is there
          // only for a session client, whose own upstream session declared elicitation.
          assert.equal(seen().tools.includes(tools.elicit.name), modernUpstream || !modernClient);
        });

        test("calls a tool and gets the progress of another", () => {
          assertResult(seen().call, tools.simple.text);
          assertResult(seen().progress, tools.progress.text);
          assert.deepEqual(seen().progress.progress, tools.progress.progress);
        });

        test("reads a resource", () => {
          const { contents } = seen().resource.result ?? assert.fail(JSON.stringify(seen().resource));
          assert.equal(contents.length, 1);
          assert.equal(contents[0].uri, tools.resource.uri);
          assert.match(contents[0].text, tools.resource.text);
        });

        test("gets a failing tool's error result and the refusal of invalid arguments", () => {
          assert.equal(seen().failing.result?.isError, true, JSON.stringify(seen().failing));
          assert.match(textOf(seen().failing.result), tools.failing.text);
          assertError(seen().invalid, -32602, new RegExp(`Invalid arguments for tool ${tools.invalid.name}`));
        });

        test("a key granted one tool calls it and is refused another", () => {
          assertResult(seen().refused.granted, tools.simple.text);
          assertError(seen().refused.denied, -32003, new RegExp(`Access denied to: ${tools.other.name}`));
        });

        if (modernUpstream || !modernClient) {
          test("answers what the upstream asks and gets the final results", () => {
            const asking = [tools.elicit, ...(tools.multiRound ? [tools.multiRound] : [])];
            assert.equal(seen().elicit.length, asking.length);
            asking.forEach((tool, index) => {
              assertResult(seen().elicit[index], tool.text);
              assert.deepEqual(seen().elicit[index].asked, tool.asked);
            });
          });
        } else {
          test("cannot reach a tool a session upstream offers only to a session client that declared elicitation", () => {
            const [outcome] = seen().elicit;
            assert.equal(outcome.result?.isError, true, JSON.stringify(outcome));
            assert.match(textOf(outcome.result), new RegExp(`Tool ${tools.elicit.name} not found`));
            assert.deepEqual(outcome.asked, []);
          });
        }
      });

      describe(`the gateway, mode ${mode}`, () => {
        const seen = () => observed.get(`gateway ${mode}`);

        test("negotiates its revision and lists the member's tools under its prefix", () => {
          assert.equal(seen().protocolVersion, version);
          for (const tool of [tools.simple, tools.progress, tools.other]) {
            assert.ok(
              seen().tools.some((name) => /^[0-9a-f]{8}_/.test(name) && name.endsWith(`_${tool.name}`)),
              seen().tools.join(", "),
            );
          }
        });

        test("calls a tool and gets the progress of another", () => {
          assertResult(seen().call, tools.simple.text);
          assertResult(seen().progress, tools.progress.text);
          assert.deepEqual(seen().progress.progress, tools.progress.progress);
        });

        test("gets a failing tool's error result, the refusal of invalid arguments and of an unknown tool", () => {
          assert.equal(seen().failing.result?.isError, true, JSON.stringify(seen().failing));
          assert.match(textOf(seen().failing.result), tools.failing.text);
          assertError(seen().invalid, -32602, new RegExp(`Invalid arguments for tool ${tools.invalid.name}`));
          assertError(seen().unknown, -32602, /Unknown tool: no-such-tool/);
        });

        test("a key granted one tool calls it and is refused another", () => {
          assertResult(seen().refused.granted, tools.simple.text);
          assertError(seen().refused.denied, -32003, new RegExp(`Access denied to: ${tools.other.name}`));
        });

        if (modernUpstream && modernClient) {
          test("passes the member's multi round-trip requests through and gets the final results", () => {
            [tools.elicit, tools.multiRound].forEach((tool, index) => {
              assertResult(seen().elicit[index], tool.text);
              assert.deepEqual(seen().elicit[index].asked, tool.asked);
            });
          });
        } else if (modernUpstream) {
          test("relays the member's refusal to ask a session client it cannot reach (-32021)", () => {
            // As in upstream-revisions.test.js: a 2025 client of the gateway has no session.
            for (const outcome of seen().elicit) {
              assertError(outcome, -32021, /do not declare the required capability/);
              assert.deepEqual(outcome.asked, []);
            }
          });
        }
      });

      if (withSelf) {
        describe(`self, mode ${mode}`, () => {
          const seen = () => observed.get(`self ${mode}`);

          test("negotiates its revision, lists and calls the management tools, and is refused an unknown one", () => {
            assert.equal(seen().protocolVersion, version);
            for (const name of ["API_KEY_LIST", "COLLECTION_CONNECTIONS_LIST"])
              assert.ok(seen().tools.includes(name), seen().tools.join(", "));
            assertResult(seen().call, /everything/);
            assertError(seen().unknown, -32602, /NO_SUCH_TOOL/);
          });

          test("a key granted one tool calls it and is refused another", () => {
            assertResult(seen().refused.granted, /everything/);
            assertError(seen().refused.denied, -32003, /Access denied to: API_KEY_LIST/);
          });
        });
      }
    }
  });
}
