/**
 * `sitefile generate`: from an app's root, writes `.platform/meta.gen.json` (the schema), the
 * registry of sections and loaders (`sections.gen.ts` beside the sections directory) and the
 * content bundle `.platform/blocks.gen.json` (the core's bundle writer, byte for byte
 * `sitefile bundle`'s).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import { SitefileError } from "../errors";
import { buildLeavesContentOut } from "../fast-deploy";
import { addon } from "../setup";
import { registryModule } from "./registry";
import { type BlockModule, buildMeta } from "./schema";

/** `generate` options. */
export interface GenerateOptions {
  /** The app's root (default: the working directory). */
  root?: string;
  /** The sections directory (default: `src/sections`, else `sections`, under `root`). */
  sections?: string;
  /** The site's name, written as `site` in the schema document (what `/live/_meta` answers);
   * default: `PLATFORM_SITE_NAME` when set, else the document has no `site`. */
  site?: string;
  /** Fail when a content file is skipped, or a section has no exported `Props`. */
  strict?: boolean;
  /** The build option `fastDeploy` (spec): `true`, or `"auto"` (the default) when
   * `PLATFORM_SEEDED_DEPLOY` is set, writes a content bundle of no blocks — a Worker built from
   * it reads its content from `PLATFORM_KV`, which the pipeline seeded. */
  fastDeploy?: boolean | "auto";
  /** Progress and warnings, one line each (default: standard error). */
  log?: (line: string) => void;
}

/** What `generate` wrote. */
export interface GenerateReport {
  /** The schema document's path. */
  meta: string;
  /** The registry module's path (sections, conventions and loaders). */
  registry: string;
  /** The content bundle's path, or `null` when the app has no blocks directory. */
  bundle: string | null;
  /** The warnings logged. */
  warnings: string[];
}

/** The sections directories looked for, in order, under an app's root. */
export const SECTIONS_DIRS = ["src/sections", "sections"] as const;

/** The block modules under `dir` with extension `ext`, keyed `site/<prefix>/<path>`, sorted. */
function blockModules(dir: string, prefix: string, ext: string): BlockModule[] {
  const found: BlockModule[] = [];
  const walk = (at: string) => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const file = path.join(at, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile() && entry.name.endsWith(ext) && !entry.name.endsWith(`.d${ext}`)) {
        found.push({ key: `site/${prefix}/${path.relative(dir, file).split(path.sep).join("/")}`, file });
      }
    }
  };
  walk(dir);
  return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function packageVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as {
    version: string;
  };
  return manifest.version;
}

/** The site's name: `site`, else `PLATFORM_SITE_NAME`, trimmed; `undefined` when neither is
 * set (or the variable is blank). A blank `site` is `INVALID_CONFIG`. */
function siteName(site: string | undefined): string | undefined {
  if (site !== undefined) {
    if (site.trim() === "") throw new SitefileError("INVALID_CONFIG", "the site name is empty");
    return site.trim();
  }
  const fromEnv = process.env.PLATFORM_SITE_NAME?.trim();
  return fromEnv === "" ? undefined : fromEnv;
}

/** Runs the generator. Throws a {@link SitefileError} `NOT_FOUND` when there is no sections
 * directory (the message names where it looked), `INVALID_CONTENT` under `strict` when
 * something was skipped, `INVALID_CONFIG` for a blank `site`. */
export function generate(options: GenerateOptions = {}): GenerateReport {
  const root = path.resolve(options.root ?? ".");
  const site = siteName(options.site);
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const candidates = options.sections !== undefined ? [options.sections] : SECTIONS_DIRS;
  const sectionsDir = candidates
    .map((dir) => path.resolve(root, dir))
    .find((dir) => fs.statSync(dir, { throwIfNoEntry: false })?.isDirectory());
  if (sectionsDir === undefined) {
    const looked = candidates.map((dir) => path.resolve(root, dir)).join(", ");
    throw new SitefileError("NOT_FOUND", `no sections directory: looked for ${looked}`);
  }
  const sourceRoot = path.dirname(sectionsDir);
  const sections = blockModules(sectionsDir, "sections", ".tsx");
  const loadersDir = path.join(sourceRoot, "loaders");
  const loaders = fs.existsSync(loadersDir) ? blockModules(loadersDir, "loaders", ".ts") : [];
  log(
    `sitefile generate: ${sections.length} section(s) in ${path.relative(root, sectionsDir) || "."}, ${loaders.length} loader(s)` +
      (site === undefined ? "" : `, site ${site}`),
  );

  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    log(`warning: ${message}`);
  };
  const { meta, warnings: schemaWarnings } = buildMeta({ root, sourceRoot, sections, loaders, version: packageVersion(), site });
  schemaWarnings.forEach(warn);

  const bundle = bundleOf(root, buildLeavesContentOut(options.fastDeploy), log, warn);
  if (options.strict && warnings.length > 0) {
    throw new SitefileError("INVALID_CONTENT", `${warnings.length} warning(s); nothing written (--strict)`);
  }

  const platform = path.join(root, ".platform");
  fs.mkdirSync(platform, { recursive: true });
  const metaFile = path.join(platform, "meta.gen.json");
  fs.writeFileSync(metaFile, `${JSON.stringify(meta, null, 2)}\n`);
  log(`wrote ${path.relative(root, metaFile)}`);
  const registry = path.join(sourceRoot, "sections.gen.ts");
  fs.writeFileSync(registry, registryModule(registry, sections, loaders));
  log(`wrote ${path.relative(root, registry)}`);
  if (bundle) {
    fs.writeFileSync(bundle.out, bundle.bytes);
    const what = bundle.withoutContent
      ? "without the content: Fast Deploy (the content comes from PLATFORM_KV)"
      : `(${bundle.blocks} blocks, revision ${bundle.revision}, ${bundle.problems.length} skipped)`;
    log(`wrote ${path.relative(root, bundle.out)} ${what}`);
  }
  return { meta: metaFile, registry, bundle: bundle?.out ?? null, warnings };
}

/** The app's content bundle (a warning per skipped file; no blocks `withoutContent`), or
 * `null` (said in the log) when it has no blocks directory. */
function bundleOf(root: string, withoutContent: boolean, log: (line: string) => void, warn: (message: string) => void) {
  const blocks = [path.join(root, ".platform", "blocks"), path.join(root, "blocks")];
  if (!blocks.some((dir) => fs.existsSync(dir))) {
    log(`no blocks directory (looked for ${blocks.join(", ")}): no content bundle written`);
    return null;
  }
  const bundle = addon.contentBundle(root, withoutContent);
  bundle.problems.forEach(warn);
  return { ...bundle, withoutContent };
}
