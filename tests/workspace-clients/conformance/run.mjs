// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// ../package.json) against the workspace's MCP endpoints, at both protocol revisions it
// scores (scripts/mcp-conformance.sh runs this on Node 22, which the suite needs).
//
// Starts our reference server (fixture.mjs) and the workspace server (SITEFILE_WORKSPACE_BIN,
// through ../harness.js) with a connection to the fixture and an agent (gateway) whose member
// is that connection, then runs `conformance server --requirements <revision>` for each cell
// of {fixture alone, proxy -> fixture, gateway, self} x {2025-11-25, 2026-07-28}. The
// workspace endpoints are reached through forwarder.mjs, which adds the API key.
//
// Each cell has a committed expected-failures baseline (baselines/<cell>-<revision>.yml) that
// the suite checks per check id: a failure not in it, or an entry that now passes, fails the
// cell. The suite's own output goes to target/mcp-conformance/<cell>-<revision>.log (its
// checks.json files in <cell>-<revision>/, the servers' output in fixture.log and
// workspace.log); this prints one line per cell and exits 1 when any cell fails.
//
//   node run.mjs [--write-baselines] [--cell <cell>[-<revision>]]...
//
// --write-baselines runs without baselines and writes each cell's failing checks (with the
// suite's message as a comment) to its baseline file; --cell limits the run (repeatable),
// e.g. `--cell proxy` or `--cell self-2026-07-28`.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { createWriteStream, existsSync } from "node:fs";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

import { conformanceFixture, start } from "../harness.js";
import { startForwarder } from "./forwarder.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, "..", "..", "..");
const OUT = join(ROOT, "target", "mcp-conformance");
const BASELINES = join(HERE, "baselines");
const REVISIONS = ["2025-11-25", "2026-07-28"];
const CELLS = ["fixture", "proxy", "gateway", "self"];

const require = createRequire(import.meta.url);
const SUITE_DIR = dirname(require.resolve("@modelcontextprotocol/conformance/package.json"));
const SUITE = join(SUITE_DIR, "dist", "index.js");
const SUITE_VERSION = JSON.parse(await readFile(join(SUITE_DIR, "package.json"), "utf8")).version;

const { values: flags } = parseArgs({
  options: {
    "write-baselines": { type: "boolean", default: false },
    cell: { type: "string", multiple: true, default: [] },
  },
});
const writeBaselines = flags["write-baselines"];

const [major] = process.versions.node.split(".").map(Number);
if (major < 22) {
  console.error(`the conformance suite needs Node 22 or later, this is ${process.version} (scripts/mcp-conformance.sh installs one)`);
  process.exit(2);
}

const matrix = CELLS.flatMap((cell) => REVISIONS.map((revision) => ({ cell, revision, name: `${cell}-${revision}` }))).filter(
  ({ cell, name }) => flags.cell.length === 0 || flags.cell.some((wanted) => wanted === cell || wanted === name),
);
if (matrix.length === 0) {
  console.error(`--cell: none of ${flags.cell.join(", ")} names a cell (${CELLS.join(", ")}, optionally -<revision>)`);
  process.exit(2);
}

/** The scenarios a revision scores (the `server:` list of the suite's requirement set). */
async function scoredScenarios(revision) {
  const text = await readFile(join(SUITE_DIR, "requirements", `${revision}.yaml`), "utf8");
  const scored = [];
  let inServer = false;
  for (const line of text.split("\n")) {
    if (/^\S/.test(line)) inServer = line.trim() === "server:";
    else if (inServer) {
      const item = line.match(/^\s+-\s+([^\s#]+)/);
      if (item) scored.push(item[1]);
    }
  }
  if (scored.length === 0) throw new Error(`no server scenarios in the ${revision} requirement set`);
  return scored;
}

/** The parsed entries of a baseline file (`scenario` or `scenario:check-id`). */
async function readBaseline(file) {
  if (!existsSync(file)) return [];
  const entries = [];
  for (const line of (await readFile(file, "utf8")).split("\n")) {
    const item = line.match(/^\s+-\s+(['"]?)([^\s#'"]+)\1/);
    if (item) entries.push(item[2]);
  }
  return entries;
}

/**
 * Each scored scenario's checks, collapsed per check id to the most severe status (as the
 * suite judges a baseline): `Map<scenario, Map<checkId, check>>`; a scenario that wrote no
 * checks.json (it could not run) is `null`.
 */
async function readResults(dir, scored) {
  const found = new Map();
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const match = entry.isDirectory() && entry.name.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$/);
    if (match && scored.includes(match[1])) found.set(match[1], join(dir, entry.name, "checks.json"));
  }
  const severity = { FAILURE: 3, WARNING: 2, SUCCESS: 1, SKIPPED: 0 };
  const results = new Map();
  for (const scenario of scored) {
    const file = found.get(scenario);
    if (!file || !existsSync(file)) {
      results.set(scenario, null);
      continue;
    }
    const checks = new Map();
    for (const check of JSON.parse(await readFile(file, "utf8"))) {
      if (check.status === "INFO") continue;
      const seen = checks.get(check.id);
      if (!seen || (severity[check.status] ?? 0) >= (severity[seen.status] ?? 0)) checks.set(check.id, check);
    }
    results.set(scenario, checks);
  }
  return results;
}

const failing = (check) => check.status === "FAILURE" || check.status === "WARNING";

/** The baseline entries a cell's results call for, each with the suite's reason. */
function failuresOf(results) {
  const entries = [];
  for (const [scenario, checks] of results) {
    if (checks === null) {
      entries.push({ entry: scenario, reason: "the scenario did not run to completion (no checks.json)" });
      continue;
    }
    for (const check of checks.values()) {
      if (failing(check))
        entries.push({
          entry: `${scenario}:${check.id}`,
          reason: `${check.status}: ${check.errorMessage ?? check.details?.message ?? check.description ?? ""}`,
        });
    }
  }
  return entries;
}

async function writeBaseline(file, name, entries) {
  const oneLine = (reason) => reason.replace(/\s+/g, " ").trim().slice(0, 160);
  const lines = [
    `# Expected failures of @modelcontextprotocol/conformance@${SUITE_VERSION} for the cell ${name}`,
    "# (tests/workspace-clients/conformance/run.mjs): `scenario:check-id` entries, each with the",
    "# suite's message. Rewritten by `scripts/mcp-conformance.sh --write-baselines`.",
  ];
  if (entries.length === 0) lines.push("server: []");
  else lines.push("server:", ...entries.flatMap(({ entry, reason }) => [`  # ${oneLine(reason)}`, `  - ${entry}`]));
  await writeFile(file, `${lines.join("\n")}\n`);
}

/** Runs the suite for one cell, its output to a log; resolves to its exit code and where its results are. */
async function runSuite({ name, revision, url, baseline }) {
  const dir = join(OUT, name);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const logFile = join(OUT, `${name}.log`);
  const log = createWriteStream(logFile);
  await once(log, "open");
  const args = [SUITE, "server", "--url", url, "--requirements", revision, "-o", dir];
  if (baseline) args.push("--expected-failures", baseline);
  log.write(`$ ${process.execPath} ${args.join(" ")}\n`);
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const [code] = await once(child, "close");
  await new Promise((resolve) => log.end(resolve));
  return { code, dir, logFile };
}

const started = Date.now();
const revisionsScored = Object.fromEntries(await Promise.all(REVISIONS.map(async (r) => [r, await scoredScenarios(r)])));
await mkdir(OUT, { recursive: true });
await mkdir(BASELINES, { recursive: true });

const fixture = conformanceFixture("dual");
// The servers' own output, for a failing cell's diagnosis.
const logs = { upstream: createWriteStream(join(OUT, "fixture.log")), workspace: createWriteStream(join(OUT, "workspace.log")) };
const env = await start({ upstream: fixture, logs });
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.once(signal, () => env.stop().finally(() => process.exit(130)));
}
let status = 0;
try {
  const { item: agent } = await env.tool("COLLECTION_VIRTUAL_MCP_CREATE", {
    data: { title: "conformance", connections: [{ connection_id: env.connectionId }] },
  });
  const proxyKey = await env.newKey("conformance-proxy");
  const api = `/api/${env.org}/mcp`;
  // Where each cell points the suite: the fixture directly, or a workspace path through a
  // forwarder holding that cell's key.
  const targets = {
    fixture: { url: env.upstreamUrl },
    proxy: { path: `${api}/${env.connectionId}`, key: proxyKey },
    gateway: { path: `${api}/gateway/${agent.id}`, key: env.ownerKey },
    self: { path: `${api}/self`, key: env.ownerKey },
  };

  for (const { cell, revision, name } of matrix) {
    const target = targets[cell];
    const forwarder = target.key ? await startForwarder({ target: env.base, key: target.key }) : undefined;
    const url = forwarder ? `${forwarder.url}${target.path}` : target.url;
    const baselineFile = join(BASELINES, `${name}.yml`);
    const cellStarted = Date.now();
    const haveBaseline = existsSync(baselineFile);
    let outcome;
    try {
      outcome = await runSuite({ name, revision, url, baseline: writeBaselines || !haveBaseline ? undefined : baselineFile });
    } finally {
      await forwarder?.close();
    }
    const seconds = ((Date.now() - cellStarted) / 1000).toFixed(1);
    const results = await readResults(outcome.dir, revisionsScored[revision]);
    const failures = failuresOf(results);
    const failedScenarios = [...results].filter(([, checks]) => checks === null || [...checks.values()].some(failing)).length;
    const counts = `${results.size - failedScenarios} of ${results.size} scored scenarios clean, ${failures.length} failing check${failures.length === 1 ? "" : "s"}`;
    const log = relative(ROOT, outcome.logFile);

    if (writeBaselines) {
      await writeBaseline(baselineFile, name, failures);
      console.log(`${name}: ${counts}; baseline written (${relative(ROOT, baselineFile)}), ${seconds} s, log ${log}`);
      continue;
    }
    // The verdict, judged per check as the suite judges a baseline (its exit code must agree).
    const baselined = await readBaseline(baselineFile);
    const expected = new Set(baselined);
    const unexpected = failures.map(({ entry }) => entry).filter((entry) => !expected.has(entry) && !expected.has(entry.split(":")[0]));
    const stale = baselined.filter((entry) => {
      const [scenario, checkId] = entry.split(/:(.*)/s);
      const checks = results.get(scenario);
      if (!checks) return false;
      return checkId === undefined ? ![...checks.values()].some(failing) : checks.get(checkId)?.status === "SUCCESS";
    });
    const problems = [];
    if (!haveBaseline) problems.push(`no baseline file ${relative(ROOT, baselineFile)} (--write-baselines writes one)`);
    if (unexpected.length) problems.push(`unexpected failures: ${unexpected.join(", ")}`);
    if (stale.length) problems.push(`stale baseline entries (now passing): ${stale.join(", ")}`);
    if (outcome.code !== 0 && problems.length === 0) problems.push(`the suite exited ${outcome.code}`);
    if (outcome.code === 0 && problems.length > 0 && haveBaseline) problems.push("(yet the suite exited 0)");
    if (problems.length > 0) status = 1;
    const verdict = problems.length ? `FAIL: ${problems.join("; ")}` : `ok (${baselined.length} baselined)`;
    console.log(`${name}: ${counts}; ${verdict}; ${seconds} s, log ${log}`);
  }
} catch (error) {
  status = 1;
  console.error(error);
} finally {
  await env.stop();
  await Promise.all(Object.values(logs).map((log) => new Promise((resolve) => log.end(resolve))));
}
console.log(
  `mcp-conformance: ${matrix.length} cells in ${((Date.now() - started) / 1000).toFixed(1)} s, ${status === 0 ? (writeBaselines ? "baselines written" : "every failure baselined") : "FAILED"}`,
);
process.exit(status);
