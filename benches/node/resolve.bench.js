// Node benchmark over the corpus (not run in CI): `resolveDecoPage` per page through the addon.
//
// Two protocols per site:
// - the reference's: one `resolveDecoPage` call per request, desktop and iPhone requests
//   interleaved over every corpus URL, every loader key of the site registered as an async echo
//   loader answering `{loader, props}` (so each loader round crosses the boundary both ways),
//   Site globals merged. Median and p90 µs per call, beside the reference framework's per-page
//   median measured the same way (outside the project: it is not on a registry) and the ratio.
// - without loaders: median µs of the page as a JS object and as JSON text, beside the floor —
//   `JSON.parse` of that page's JSON — and the RSS a loaded site costs beside the heap
//   `JSON.parse` of its content takes.
//
//   npx napi build --platform --release --manifest-path node/Cargo.toml --output-dir node \
//     --package-json-path package.json && npx tsc -p tsconfig.json
//   taskset -c 1 node --expose-gc benches/node/resolve.bench.js [--no-memory] [site ...]
//
// The corpus is found through SITEFILE_CORPUS, else ../shared/corpus beside the repository.
// SITEFILE_PACKAGE names an installed package to measure instead of this checkout (the release
// rehearsal measures the installed one, with NAPI_RS_FORCE_WASI=error for its WebAssembly
// engine); --no-memory leaves out the memory columns.
"use strict";
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { execFileSync } = require("node:child_process");

const ROOT = path.join(__dirname, "..", "..");
const CORPUS = process.env.SITEFILE_CORPUS ?? path.join(ROOT, "..", "shared", "corpus");
const DESKTOP = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
/** The reference framework's per-page median µs on this kind of machine (desktop context, one
 * pinned core, echo loaders, Site globals merged): issue 26's table. */
const REFERENCE_US = {
  abracasa: 1062,
  "bolovo-store": 721,
  dryzunstore: 1027,
  fossil: 750,
  lojaintegradar: 1761,
  "otica-isabela": 918,
};
const ROUNDS = Number(process.env.ROUNDS ?? 200);
const PACKAGE = process.env.SITEFILE_PACKAGE ?? ROOT;

function urlsBySite() {
  const bySite = new Map();
  for (const line of fs.readFileSync(path.join(CORPUS, "urls.txt"), "utf8").split("\n")) {
    const [site, url] = line.trim().split(" ");
    if (!site || !url) continue;
    if (!bySite.has(site)) bySite.set(site, []);
    bySite.get(site).push(url);
  }
  return bySite;
}

/** The `q` quantile (0..1) of `xs`, nearest rank. */
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))];
};
const median = (xs) => quantile(xs, 0.5);
const micros = (start) => Number(process.hrtime.bigint() - start) / 1000;

/** Times `f` ROUNDS times per URL; every call's µs. */
async function samplesOf(urls, f) {
  const samples = [];
  for (const url of urls) {
    for (let i = 0; i < 5; i += 1) await f(url); // warm-up
    for (let i = 0; i < ROUNDS; i += 1) {
      const start = process.hrtime.bigint();
      await f(url);
      samples.push(micros(start));
    }
  }
  return samples;
}

/** The median µs of {@link samplesOf}. */
const timed = async (urls, f) => median(await samplesOf(urls, f));

/** Every loader key the site's blocks name (`/loaders/`, `/functions/`, `/actions/`, the keys
 * the command line calls loaders by convention). */
function loaderKeys(dir) {
  const keys = new Set();
  for (const file of blockFiles(dir)) {
    for (const [, key] of fs.readFileSync(file, "utf8").matchAll(/"__resolveType"\s*:\s*"([^"]+)"/g)) {
      if (/\/(loaders|functions|actions)\//.test(key)) keys.add(key);
    }
  }
  return [...keys];
}

/** The reference's protocol: echo loaders, desktop and iPhone interleaved; median and p90 µs. */
async function withLoaders(site, urls) {
  const { createSiteSetup, resolveDecoPage } = require(PACKAGE);
  const dir = path.join(CORPUS, site);
  const loaders = Object.fromEntries(loaderKeys(dir).map((key) => [key, async (props) => ({ loader: key, props })]));
  const loaderSite = createSiteSetup({ blocksDir: dir, env: {}, loaders, onDanglingReference: () => null });
  const requests = urls.flatMap((url) => [DESKTOP, IPHONE].map((ua) => ({ url, headers: { "user-agent": ua } })));
  const samples = await samplesOf(requests, (request) => resolveDecoPage(request, loaderSite));
  return { median: median(samples), p90: quantile(samples, 0.9), loaders: Object.keys(loaders).length };
}

/** The page's JSON as the core writes it (UTF-8, made a JS string as a host reading it would),
 * from the text the addon hands over, which escapes every character past U+00FF (`\u2192`) so
 * V8 holds it one byte per character: the floor is `JSON.parse` of the page's JSON, not of the
 * addon's form of it. Escapes are read as tokens, so an escaped backslash is never taken for
 * the start of one. */
function writtenJson(text) {
  const written = text.replace(/\\(?:u[dD][89abAB][0-9a-fA-F]{2}\\u[0-9a-fA-F]{4}|u[0-9a-fA-F]{4}|.)/g, (sequence) => {
    if (sequence[1] !== "u") return sequence;
    const units = sequence
      .split("\\u")
      .slice(1)
      .map((hex) => parseInt(hex, 16));
    return units[0] > 0xff ? String.fromCharCode(...units) : sequence;
  });
  return Buffer.from(written, "utf8").toString("utf8");
}

async function speed(site, urls) {
  const { createSiteSetup, resolveDecoPage } = require(PACKAGE);
  const addonSite = createSiteSetup({ blocksDir: path.join(CORPUS, site), env: {}, onDanglingReference: () => null });
  const request = (url) => ({ url, headers: { "user-agent": DESKTOP } });
  const form = (url) => JSON.stringify({ url, headers: [["user-agent", DESKTOP]], now: "2026-06-01T12:00:00Z", seed: 0 });
  const texts = new Map();
  const host = {};
  const asText = (url) => {
    const first = addonSite.native.resolvePage(form(url), host);
    return typeof first === "string" ? first : first.advance(null, host);
  };
  for (const url of urls) texts.set(url, writtenJson(asText(url)));
  const object = await timed(urls, (url) => resolveDecoPage(request(url), addonSite));
  const text = await timed(urls, async (url) => asText(url));
  const parse = await timed(urls, async (url) => JSON.parse(texts.get(url)));
  const kb = median(urls.map((u) => Buffer.byteLength(texts.get(u)) / 1024));
  return { object, text, parse, kb, loaders: await withLoaders(site, urls) };
}

/** RSS growth of loading the site, and heap growth of `JSON.parse` of its block files, each in
 * a fresh process. */
function memory(site) {
  const run = (mode) =>
    JSON.parse(execFileSync(process.execPath, ["--expose-gc", __filename, "--memory", mode, site], { encoding: "utf8" }));
  return { site: run("site"), parse: run("parse") };
}

function blockFiles(dir) {
  const from = [path.join(dir, ".platform", "blocks"), path.join(dir, "blocks")].find((d) => fs.existsSync(d)) ?? dir;
  return fs
    .readdirSync(from)
    .filter((f) => f.endsWith(".json"))
    .map((f) => path.join(from, f));
}

function measureMemory(mode, site) {
  const dir = path.join(CORPUS, site);
  // The addon is loaded, and its loading code run once on a one-block site, before the first
  // reading: its code pages are not the site's cost (as V8's JSON.parse is resident before).
  const { createSiteSetup } = require(PACKAGE);
  const warm = fs.mkdtempSync(path.join(os.tmpdir(), "sitefile-bench-"));
  const home = JSON.stringify({ __resolveType: "website/pages/Page.tsx", path: "/", sections: [] });
  fs.writeFileSync(path.join(warm, "home.json"), home);
  const warmed = mode === "site" ? createSiteSetup({ blocksDir: warm, env: {} }) : JSON.parse(home);
  fs.rmSync(warm, { recursive: true });
  global.gc();
  const before = process.memoryUsage();
  let kept;
  if (mode === "site") {
    kept = createSiteSetup({ blocksDir: dir, env: {} });
  } else {
    kept = blockFiles(dir).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
  }
  global.gc();
  const after = process.memoryUsage();
  process.stdout.write(
    JSON.stringify({
      rssMB: (after.rss - before.rss) / 2 ** 20,
      heapMB: (after.heapUsed + after.external - before.heapUsed - before.external) / 2 ** 20,
      kept: kept !== undefined && warmed !== undefined,
    }),
  );
}

async function main() {
  if (process.argv[2] === "--memory") return measureMemory(process.argv[3], process.argv[4]);
  const withMemory = !process.argv.includes("--no-memory");
  const chosen = process.argv.slice(2).filter((arg) => arg !== "--no-memory");
  const rev = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  const engine = process.env.NAPI_RS_FORCE_WASI === "error" ? "WebAssembly" : "native";
  console.log(`sitefile ${rev} (${PACKAGE}, ${engine} engine), Node ${process.version}, ${ROUNDS} rounds per page`);
  console.log("                              with echo loaders (the reference's protocol)   |  without loaders");
  console.log(
    "site             pages  page KB  median µs  p90 µs  reference µs  ratio  |  object µs  text µs  JSON.parse µs  object/parse  RSS MB  parse heap MB",
  );
  const ratios = [];
  for (const [site, urls] of urlsBySite()) {
    if (chosen.length > 0 && !chosen.includes(site)) continue;
    const s = await speed(site, urls);
    const m = withMemory ? memory(site) : undefined;
    console.log(
      [
        site.padEnd(16),
        String(urls.length).padStart(5),
        s.kb.toFixed(1).padStart(8),
        s.loaders.median.toFixed(1).padStart(10),
        s.loaders.p90.toFixed(1).padStart(7),
        String(REFERENCE_US[site] ?? "-").padStart(13),
        (REFERENCE_US[site] ? `${(REFERENCE_US[site] / s.loaders.median).toFixed(1)}×` : "-").padStart(6),
        " |",
        s.object.toFixed(1).padStart(10),
        s.text.toFixed(1).padStart(8),
        s.parse.toFixed(1).padStart(14),
        (s.object / s.parse).toFixed(2).padStart(13),
        ...(m ? [m.site.rssMB.toFixed(1).padStart(7), m.parse.heapMB.toFixed(1).padStart(14)] : []),
      ].join(" "),
    );
    if (REFERENCE_US[site]) ratios.push(REFERENCE_US[site] / s.loaders.median);
  }
  if (ratios.length > 0) {
    const geomean = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length);
    console.log(`against the reference: geometric mean ${geomean.toFixed(1)}×, slowest site ${Math.min(...ratios).toFixed(1)}×`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
