#!/usr/bin/env node
/**
 * The `sitefile` command of the npm package (`npx sitefile generate`): see {@link generate}.
 * Exit codes: 0 written, 1 failed (the message on standard error), 2 a usage error.
 */

import { generate } from "./index";

const USAGE = `usage: sitefile generate [--root DIR] [--sections DIR] [--strict]

Run in a Next.js app's root. Writes .platform/meta.gen.json (the schema of the sections'
exported Props), sections.gen.ts beside the sections directory (the sections, conventions
and loaders createNextSetup takes) and .platform/blocks.gen.json (the content bundle, as \`sitefile bundle\` writes it).
  --root DIR      the app's root (default: the working directory)
  --sections DIR  the sections directory (default: src/sections, else sections)
  --strict        fail when a content file is skipped or a section has no exported Props
`;

/** Parses the arguments and runs the command; returns the exit code. */
function main(args: string[]): number {
  const [command, ...rest] = args;
  if (command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    return 0;
  }
  if (command !== "generate") {
    process.stderr.write(`sitefile: ${command === undefined ? "no command" : `unknown command ${command}`}\n${USAGE}`);
    return 2;
  }
  const options: { root?: string; sections?: string; strict?: boolean } = {};
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i];
    if (arg === "--strict") options.strict = true;
    else if ((arg === "--root" || arg === "--sections") && rest[i + 1] !== undefined) {
      options[arg === "--root" ? "root" : "sections"] = rest[i + 1];
      i += 1;
    } else {
      process.stderr.write(`sitefile generate: unexpected argument ${arg}\n${USAGE}`);
      return 2;
    }
  }
  try {
    generate(options);
    return 0;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`error: ${message}\n`);
    return 1;
  }
}

process.exitCode = main(process.argv.slice(2));
