// One line from two runs of benches/node/resolve.bench.js (native, then WebAssembly): each
// site's resolveDecoPage median in µs on both engines, and the geometric mean of the
// WebAssembly/native ratio. Run by scripts/release.sh:
//
//   node scripts/release/bench-summary.js NATIVE.txt WASI.txt
"use strict";
const fs = require("node:fs");

/** The `object µs` column by site. */
function medians(file) {
  const bySite = new Map();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const cells = line.trim().split(/\s+/);
    if (cells.length < 4 || !/^\d+$/.test(cells[1] ?? "")) continue;
    bySite.set(cells[0], Number(cells[3]));
  }
  return bySite;
}

const [nativeFile, wasiFile] = process.argv.slice(2);
const native = medians(nativeFile);
const wasi = medians(wasiFile);
const parts = [];
let logSum = 0;
for (const [site, n] of native) {
  const w = wasi.get(site);
  if (w === undefined) continue;
  parts.push(`${site} ${n.toFixed(0)}/${w.toFixed(0)}`);
  logSum += Math.log(w / n);
}
if (parts.length === 0) {
  console.error("bench-summary: no site in both runs");
  process.exit(1);
}
console.log(`${parts.join(", ")}; WebAssembly/native ${Math.exp(logSum / parts.length).toFixed(2)}x (geometric mean)`);
