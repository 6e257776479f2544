/**
 * `sitefile generate`, the npm package's own command (`npx sitefile generate`): see
 * {@link generate}. Exit codes: 0 written, 1 failed (the message on standard error), 2 a usage
 * error. The `sitefile` command (`../cli.ts`) hands it its arguments.
 */

import { type GenerateOptions, generate } from "./index";

/** The usage text of `sitefile generate`. */
export const GENERATE_USAGE = `usage: sitefile generate [--root DIR] [--sections DIR] [--site NAME] [--strict] [--fast-deploy MODE]

Run in a Next.js app's root. Writes .platform/meta.gen.json (the schema of the sections'
exported Props), sections.gen.ts beside the sections directory (the sections, conventions
and loaders createNextSetup takes) and .platform/blocks.gen.json (the content bundle, as \`sitefile bundle\` writes it).
  --root DIR      the app's root (default: the working directory)
  --sections DIR  the sections directory (default: src/sections, else sections)
  --site NAME     the site's name, written as \`site\` in meta.gen.json (default:
                  PLATFORM_SITE_NAME when set; without either there is no \`site\`)
  --strict        fail when a content file is skipped or a section has no exported Props
  --fast-deploy MODE
                  true, false or auto (default): true, or auto with PLATFORM_SEEDED_DEPLOY
                  set, writes a bundle without the content (a Worker reads it from PLATFORM_KV)
`;

/** The options that take a value, and the {@link GenerateOptions} field each sets. */
const VALUE_OPTIONS = new Map<string, "root" | "sections" | "site">([
  ["--root", "root"],
  ["--sections", "sections"],
  ["--site", "site"],
]);

/** Parses `sitefile generate`'s arguments (after the command's name) and runs it; returns the
 * exit code. */
export function runGenerate(rest: string[]): number {
  if (rest[0] === "--help" || rest[0] === "-h") {
    process.stdout.write(GENERATE_USAGE);
    return 0;
  }
  const options: GenerateOptions = {};
  for (let i = 0; i < rest.length; i += 1) {
    const arg = rest[i] as string;
    const field = VALUE_OPTIONS.get(arg);
    const value = rest[i + 1];
    if (arg === "--strict") options.strict = true;
    else if (arg === "--fast-deploy" && value !== undefined) {
      // `true`, `false` or `auto`: the core reads it (and names a bad one).
      options.fastDeploy = value === "true" || (value === "false" ? false : (value as "auto"));
      i += 1;
    } else if (field !== undefined && value !== undefined && value.trim() !== "") {
      options[field] = value;
      i += 1;
    } else {
      const needsValue = field !== undefined || arg === "--fast-deploy";
      process.stderr.write(`sitefile generate: ${needsValue ? `${arg} needs a value` : `unexpected argument ${arg}`}\n${GENERATE_USAGE}`);
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
