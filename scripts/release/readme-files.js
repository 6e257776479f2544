// Writes the files the README's Next.js section tells a user to add, from its own code blocks,
// into an app (run by scripts/release.sh, so the README cannot drift from what is tested):
//
//   node scripts/release/readme-files.js README.md APP_DIR
//
// A block is a file when its fence names one: ```ts title="lib/sitefile.ts"```. Fails when the
// section names no file, or two blocks name the same one.
"use strict";
const fs = require("node:fs");
const path = require("node:path");

const SECTION = "## Next.js (App Router)";

function fail(message) {
  console.error(`readme-files: ${message}`);
  process.exit(1);
}

/** The titled code blocks of the README's Next.js section: `[{file, text}]`. */
function titledBlocks(readme) {
  const start = readme.indexOf(`\n${SECTION}\n`);
  if (start < 0) fail(`the README has no "${SECTION}" section`);
  const end = readme.indexOf("\n## ", start + SECTION.length + 2);
  const lines = readme.slice(start, end < 0 ? undefined : end).split("\n");
  const blocks = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^(\s*)```\S*\s+title="([^"]+)"\s*$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, file] = open;
    const body = [];
    for (i += 1; i < lines.length && lines[i].trim() !== "```"; i += 1) {
      body.push(lines[i].startsWith(indent) ? lines[i].slice(indent.length) : lines[i]);
    }
    if (i === lines.length) fail(`the block of ${file} is not closed`);
    blocks.push({ file, text: `${body.join("\n")}\n` });
  }
  return blocks;
}

function main() {
  const [readmePath, app] = process.argv.slice(2);
  if (!readmePath || !app) fail("usage: readme-files.js README.md APP_DIR");
  const blocks = titledBlocks(fs.readFileSync(readmePath, "utf8"));
  if (blocks.length === 0) fail(`the README's "${SECTION}" section names no file`);
  const seen = new Set();
  for (const { file, text } of blocks) {
    if (seen.has(file)) fail(`two blocks write ${file}`);
    if (path.isAbsolute(file) || file.split("/").includes("..")) fail(`${file} is outside the app`);
    seen.add(file);
    const target = path.join(app, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, text);
    console.log(`wrote ${file}`);
  }
}

main();
