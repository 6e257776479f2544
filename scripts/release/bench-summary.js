// One line from two runs of benches/node/resolve.bench.js (native, then WebAssembly): each
// site's resolveDecoPage median in µs on both engines, and the geometric mean of the
// WebAssembly/native ratio. Run by scripts/release.sh:
//
//   node scripts/release/bench-summary.js NATIVE.txt WASI.txt
"use strict";
const { MEDIAN, column } = require("../../benches/node/table");

const [nativeFile, wasiFile] = process.argv.slice(2);
const native = column(nativeFile, MEDIAN);
const wasi = column(wasiFile, MEDIAN);
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
