// Reading the table benches/node/resolve.bench.js prints (and benches/worker/bench.js, in its
// shape): a column of its site rows, by site. Used by the summaries of the release rehearsal
// (scripts/release/bench-summary.js) and of the Worker benchmark (benches/worker/summary.js).
"use strict";
const fs = require("node:fs");

/** Column `index` (0 is the site) of the site rows of `file` (rows whose second cell is the page
 * count), as numbers by site. */
function column(file, index) {
  const bySite = new Map();
  for (const line of fs.readFileSync(file, "utf8").split("\n")) {
    const cells = line.trim().split(/\s+/);
    if (cells.length <= index || !/^\d+$/.test(cells[1] ?? "")) continue;
    bySite.set(cells[0], Number(cells[index]));
  }
  return bySite;
}

/** The columns of resolve.bench.js's rows: the median µs with the reference's protocol, and the
 * reference framework's. */
const MEDIAN = 3;
const REFERENCE = 5;

module.exports = { MEDIAN, REFERENCE, column };
