// The Worker benchmark's table (benches/worker/run.sh): per corpus site, `resolveDecoPage`'s
// median µs with the reference's protocol — the reference framework's (benches/node's figures),
// the native addon's and the WebAssembly engine's in Node (benches/node/resolve.bench.js), the
// WebAssembly engine's in workerd (bench.js) — and the ratios.
//
//   node benches/worker/summary.js NATIVE.txt WASI.txt WORKERD.txt
"use strict";
const { MEDIAN, REFERENCE, column } = require("../node/table");

const [nativeFile, wasiFile, workerdFile] = process.argv.slice(2);
const native = column(nativeFile, MEDIAN);
const reference = column(nativeFile, REFERENCE);
const wasi = column(wasiFile, MEDIAN);
/** bench.js's rows: site, pages, then the median µs. */
const workerd = column(workerdFile, 2);
console.log("site             reference µs  native µs  wasm in Node µs  wasm in workerd µs  workerd/native  reference/workerd");
const logs = { native: 0, reference: 0 };
let count = 0;
for (const [site, w] of workerd) {
  const [n, r, x] = [native.get(site), reference.get(site), wasi.get(site)];
  if (n === undefined || r === undefined || x === undefined) continue;
  count += 1;
  logs.native += Math.log(w / n);
  logs.reference += Math.log(r / w);
  console.log(
    [
      site.padEnd(16),
      r.toFixed(0).padStart(12),
      n.toFixed(0).padStart(9),
      x.toFixed(0).padStart(15),
      w.toFixed(0).padStart(18),
      (w / n).toFixed(1).padStart(14),
      (r / w).toFixed(2).padStart(17),
    ].join("  "),
  );
}
if (count === 0) {
  console.error("summary: no site in every run");
  process.exit(1);
}
console.log(
  `geometric means: workerd/native ${Math.exp(logs.native / count).toFixed(1)}x, reference/workerd ${Math.exp(logs.reference / count).toFixed(2)}x`,
);
