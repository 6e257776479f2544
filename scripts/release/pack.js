// Stages and packs the npm packages of a release (run by scripts/release.sh):
//
//   node scripts/release/pack.js BUILD_DIR OUT_DIR TRIPLE...
//
// BUILD_DIR/<triple>/ holds what the builds wrote for each target: the addon
// (`sitefile.<platform>.node`) and the `sitefile` program for the native ones, the WASI files
// for wasm32-wasip1-threads. Each platform package is npm/<platform>/ with its artifacts; the
// main package `sitefile` is the repository's package.json with `optionalDependencies` on
// every platform package built and `files` as a user needs them (the compiled TypeScript and
// the loader, no addon: that comes from a platform package). Every package is packed twice and
// must come out byte for byte the same; each must fit its size budget. Prints a table and
// writes OUT_DIR/packages.json (name, tarball, bytes, sha256 per package; the main package
// first, then the platform packages in the order of the targets given).
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const crypto = require("node:crypto");
const { execFileSync } = require("node:child_process");

const ROOT = path.join(__dirname, "..", "..");

/** The npm platform name of each target triple napi-rs builds. */
const PLATFORMS = {
  "x86_64-unknown-linux-gnu": "linux-x64-gnu",
  "x86_64-unknown-linux-musl": "linux-x64-musl",
  "aarch64-unknown-linux-gnu": "linux-arm64-gnu",
  "aarch64-unknown-linux-musl": "linux-arm64-musl",
  "wasm32-wasip1-threads": "wasm32-wasi",
};

/** Packed size budgets in bytes: a package over its budget fails the release. */
const BUDGET = { main: 160 * 1024, native: 14 * 1024 * 1024, wasi: 1536 * 1024 };

/** The files of the main package the published `files` leaves out (the addon a developer built
 * in the repository comes from a platform package once published). */
const DEV_ONLY_FILES = ["node/*.node"];

function fail(message) {
  console.error(`pack: ${message}`);
  process.exit(1);
}

/** The cargo workspace's version: every package is published at it. */
function workspaceVersion() {
  const cargo = fs.readFileSync(path.join(ROOT, "Cargo.toml"), "utf8");
  const match = /\[workspace\.package\][^[]*?\nversion = "([^"]+)"/.exec(cargo);
  if (!match) fail("Cargo.toml has no [workspace.package] version");
  return match[1];
}

function copy(from, to) {
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.cpSync(from, to, { recursive: true });
}

/** Packs DIR into OUT; returns the tarball's path. Packs twice and compares. */
function pack(dir, out) {
  const once = () => {
    const [result] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--pack-destination", out], {
        cwd: dir,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      }),
    );
    const file = path.join(out, result.filename);
    return { file, sha256: crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex"), files: result.files };
  };
  const first = once();
  const second = once();
  if (first.sha256 !== second.sha256) fail(`npm pack of ${dir} is not reproducible (${first.sha256} then ${second.sha256})`);
  return first;
}

function main() {
  const [buildDir, outDir, ...triples] = process.argv.slice(2);
  if (!buildDir || !outDir || triples.length === 0) fail("usage: pack.js BUILD_DIR OUT_DIR TRIPLE...");
  const version = workspaceVersion();
  const staged = path.join(outDir, "packages");
  const tarballs = path.join(outDir, "tarballs");
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(tarballs, { recursive: true });

  const rows = [];
  const optional = {};
  for (const triple of triples) {
    const platform = PLATFORMS[triple];
    if (!platform) fail(`unknown target ${triple}`);
    const source = path.join(ROOT, "npm", platform);
    const manifest = JSON.parse(fs.readFileSync(path.join(source, "package.json"), "utf8"));
    if (manifest.version !== version) fail(`npm/${platform}/package.json is version ${manifest.version}, the workspace ${version}`);
    const dir = path.join(staged, platform);
    copy(path.join(source, "package.json"), path.join(dir, "package.json"));
    copy(path.join(source, "README.md"), path.join(dir, "README.md"));
    for (const file of manifest.files) {
      // A file committed beside the manifest (the workerd loader) ships as it is.
      const committed = path.join(source, file);
      const built = fs.existsSync(committed) ? committed : path.join(buildDir, triple, file);
      if (!fs.existsSync(built)) fail(`${manifest.name} needs ${file}, which the ${triple} build did not write (${built})`);
      copy(built, path.join(dir, file));
    }
    if (fs.existsSync(path.join(dir, "sitefile"))) fs.chmodSync(path.join(dir, "sitefile"), 0o755);
    optional[manifest.name] = version;
    rows.push({ name: manifest.name, dir, budget: platform === "wasm32-wasi" ? BUDGET.wasi : BUDGET.native });
  }

  const main = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  if (main.version !== version) fail(`package.json is version ${main.version}, the workspace ${version}`);
  delete main.private;
  delete main.scripts;
  delete main.devDependencies;
  main.files = main.files.filter((entry) => !DEV_ONLY_FILES.includes(entry));
  main.optionalDependencies = optional;
  const mainDir = path.join(staged, "sitefile");
  fs.mkdirSync(mainDir, { recursive: true });
  fs.writeFileSync(path.join(mainDir, "package.json"), `${JSON.stringify(main, null, 2)}\n`);
  for (const entry of ["README.md", "LICENSE", ...main.files]) {
    if (entry.includes("*")) fail(`package.json files entry ${entry}: the release copies paths, not patterns`);
    if (!fs.existsSync(path.join(ROOT, entry))) fail(`the main package needs ${entry}: build it first`);
    copy(path.join(ROOT, entry), path.join(mainDir, entry));
  }
  rows.unshift({ name: main.name, dir: mainDir, budget: BUDGET.main });

  const packed = [];
  console.log("package                     packed KB  budget KB  files  sha256");
  for (const row of rows) {
    const result = pack(row.dir, tarballs);
    const bytes = fs.statSync(result.file).size;
    packed.push({ name: row.name, tarball: result.file, bytes, sha256: result.sha256 });
    console.log(
      `${row.name.padEnd(27)} ${(bytes / 1024).toFixed(0).padStart(9)}  ${(row.budget / 1024).toFixed(0).padStart(9)}  ${String(result.files.length).padStart(5)}  ${result.sha256.slice(0, 16)}`,
    );
    if (bytes > row.budget) fail(`${row.name} packs to ${bytes} bytes, over its budget of ${row.budget}`);
  }
  fs.writeFileSync(path.join(outDir, "packages.json"), `${JSON.stringify(packed, null, 2)}\n`);
}

main();
