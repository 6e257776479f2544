// The Worker benchmark (not in CI; benches/worker/run.sh runs it): `resolveDecoPage` per corpus
// page through the WebAssembly engine inside workerd (Miniflare), with the reference's protocol
// (echo loaders; desktop and iPhone requests interleaved over every corpus URL), timed from
// Node over a request resolving the page BATCH times, less the median round trip of a request
// that does nothing, per resolution (workerd's clock stands still inside a request); the Worker's
// upload size (the example's bundle and the engine's module, raw and gzip-compressed); and an
// isolate's cold start (Miniflare ready with the example Worker, less with an empty Worker).
//
//   SITEFILE_WORKER_APP=<the rehearsal's worker app> SITEFILE_MINIFLARE=<miniflare> \
//     SITEFILE_CORPUS=<corpus> ROUNDS=20 node benches/worker/bench.js [site ...]
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const zlib = require("node:zlib");
const { execFileSync } = require("node:child_process");

const APP = process.env.SITEFILE_WORKER_APP;
const MINIFLARE = process.env.SITEFILE_MINIFLARE;
const ROOT = path.join(__dirname, "..", "..");
const CORPUS = process.env.SITEFILE_CORPUS ?? path.join(ROOT, "..", "shared", "corpus");
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const COLD_STARTS = 5;
/** Resolutions per timed request: enough that the round trip's noise is a small part. */
const BATCH = 20;
const DESKTOP = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
if (!APP || !MINIFLARE) throw new Error("SITEFILE_WORKER_APP and SITEFILE_MINIFLARE must be set (benches/worker/run.sh sets them)");
const { Miniflare } = require(MINIFLARE);
const { bundledWorker } = require("../../tests/release/worker/miniflare");

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kb = (bytes) => (bytes / 1024).toFixed(0);

/** Raw and gzip-compressed bytes of the files of a bundle directory (source maps left out). */
function bundleSize(dir) {
  let raw = 0;
  let gzip = 0;
  for (const name of fs.readdirSync(dir)) {
    if (name.endsWith(".map") || name === "README.md") continue;
    const bytes = fs.readFileSync(path.join(dir, name));
    raw += bytes.length;
    gzip += zlib.gzipSync(bytes, { level: 9 }).length;
  }
  return { raw, gzip };
}

/** Milliseconds until Miniflare is ready with `options` and has answered one request. */
async function readyMs(options) {
  const start = performance.now();
  const mf = new Miniflare({ ...options, cf: false });
  await (await mf.dispatchFetch("http://bench/__ping")).text();
  const ms = performance.now() - start;
  await mf.dispose();
  return ms;
}

function loaderKeys(blocks) {
  const keys = new Set();
  for (const [, key] of JSON.stringify(blocks).matchAll(/"__resolveType":"([^"]+)"/g)) {
    if (/\/(loaders|functions|actions)\//.test(key)) keys.add(key);
  }
  return [...keys];
}

function urlsBySite() {
  const bySite = new Map();
  for (const line of fs.readFileSync(path.join(CORPUS, "urls.txt"), "utf8").split("\n")) {
    const [site, url] = line.trim().split(" ");
    if (site && url) bySite.set(site, [...(bySite.get(site) ?? []), url]);
  }
  return bySite;
}

async function main() {
  const chosen = process.argv.slice(2);
  const bench = path.join(APP, "dist-bench");
  fs.mkdirSync(path.join(APP, "bench"), { recursive: true });
  fs.copyFileSync(path.join(__dirname, "corpus-worker.js"), path.join(APP, "bench", "corpus-worker.js"));
  const wrangler = path.join(APP, "node_modules", "wrangler", "bin", "wrangler.js");
  execFileSync(process.execPath, [wrangler, "deploy", "--dry-run", "--outdir", "dist-bench", "--name", "bench", "bench/corpus-worker.js"], {
    cwd: APP,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  const example = bundleSize(path.join(APP, "dist"));
  const wasm = fs.readFileSync(
    path.join(
      bench,
      fs.readdirSync(bench).find((f) => f.endsWith(".wasm")),
    ),
  );
  const engineGzip = zlib.gzipSync(wasm, { level: 9 }).length;
  console.log(
    `size: the example Worker ${kb(example.raw)} KB, ${kb(example.gzip)} KB gzip; the engine's module ${kb(wasm.length)} KB, ${kb(engineGzip)} KB gzip`,
  );

  const empty = fs.mkdtempSync(path.join(os.tmpdir(), "sitefile-empty-worker-"));
  fs.writeFileSync(path.join(empty, "empty.js"), 'export default { fetch: () => new Response("pong") };\n');
  const cold = [];
  for (let i = 0; i < COLD_STARTS; i += 1) {
    const base = await readyMs(bundledWorker(empty, "empty.js"));
    cold.push((await readyMs(bundledWorker(path.join(APP, "dist"), "worker.js"))) - base);
  }
  console.log(
    `cold start: ${median(cold).toFixed(0)} ms median over ${COLD_STARTS} isolates (Miniflare ready and one answer, less an empty Worker's)`,
  );

  const mf = new Miniflare({ ...bundledWorker(bench, "corpus-worker.js"), cf: false });
  const pingSamples = [];
  for (let i = 0; i < 200; i += 1) {
    const start = performance.now();
    await (await mf.dispatchFetch("http://bench/__ping")).text();
    pingSamples.push(performance.now() - start);
  }
  const ping = median(pingSamples.slice(50));
  console.log(`round trip of a request that does nothing: ${(ping * 1000).toFixed(0)} µs median (subtracted below)`);
  console.log("site             pages  workerd µs  p90 µs");
  const siteLoad = require(path.join(APP, "node_modules", "sitefile", "node", "index.js"));
  for (const [site, urls] of urlsBySite()) {
    if (chosen.length > 0 && !chosen.includes(site)) continue;
    const blocks = JSON.parse(siteLoad.contentBundle(path.join(CORPUS, site)).bytes.toString("utf8"));
    await (
      await mf.dispatchFetch("http://bench/__site", { method: "POST", body: JSON.stringify({ blocks, loaderKeys: loaderKeys(blocks) }) })
    ).text();
    const samples = [];
    for (const url of urls) {
      for (const ua of [DESKTOP, IPHONE]) {
        const target = `http://bench/?url=${encodeURIComponent(url)}&ua=${encodeURIComponent(ua)}&n=${BATCH}`;
        await (await mf.dispatchFetch(target)).text();
        for (let i = 0; i < ROUNDS; i += 1) {
          const start = performance.now();
          await (await mf.dispatchFetch(target)).text();
          samples.push(((performance.now() - start - ping) * 1000) / BATCH);
        }
      }
    }
    samples.sort((a, b) => a - b);
    console.log(
      [
        site.padEnd(16),
        String(urls.length).padStart(5),
        median(samples).toFixed(0).padStart(10),
        samples[Math.floor(samples.length * 0.9)].toFixed(0).padStart(7),
      ].join("  "),
    );
  }
  await mf.dispose();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
