// `npx sitefile generate` (dist/cli.js, the package's `sitefile` command) over copies of examples/nextjs: the schema a
// user expects from the sections' Props, the section registry, the content bundle byte for byte
// `sitefile bundle`'s (the Rust CLI, target/debug/sitefile or $SITEFILE_BIN, built when
// missing), and the documented errors; the command's other subcommands run that program.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { spawnSync, execFileSync } = require("node:child_process");

const ROOT = path.join(__dirname, "..", "..");
const EXAMPLE = path.join(ROOT, "examples", "nextjs");
const CLI = path.join(ROOT, "dist", "cli.js");
// Copies live under target/ so the sections' imports (react) resolve from the repository's
// node_modules, as they do in the example.
const SCRATCH = path.join(ROOT, "target", "generate-test");
const VERSION = require(path.join(ROOT, "package.json")).version;

const b64 = (key) => Buffer.from(key).toString("base64");
const def = (meta, key) => meta.schema.definitions[b64(key)];

let counter = 0;
/** A fresh copy of the example's sources and content (or of `files`: path → text). */
function app({ example = true, files = {} } = {}) {
  const dir = path.join(SCRATCH, `${process.pid}-${counter++}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  if (example) {
    for (const entry of ["sections", "loaders", ".platform/blocks", "tsconfig.json"]) {
      fs.cpSync(path.join(EXAMPLE, entry), path.join(dir, entry), { recursive: true });
    }
  }
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  return dir;
}

/** Runs `sitefile generate ...args` in `cwd`, with the environment less `PLATFORM_SITE_NAME`
 * (which names the site in the schema) and plus `env`. */
function generate(cwd, ...args) {
  const env = typeof args[0] === "object" ? args.shift() : {};
  const { PLATFORM_SITE_NAME: _, ...inherited } = process.env;
  const run = spawnSync(process.execPath, [CLI, "generate", ...args], { cwd, encoding: "utf8", env: { ...inherited, ...env } });
  return { status: run.status, stderr: withoutWasiWarning(run.stderr), stdout: run.stdout };
}

/** Standard error less the warning Node prints when the WebAssembly engine loads (the suites
 * also run on it): Node's, not the command's. */
const withoutWasiWarning = (stderr) =>
  stderr.replace(/^\(node:\d+\) ExperimentalWarning: WASI is an experimental feature.*\n\(Use `node --trace-warnings .*\n/m, "");

const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"));

function sitefileBinary() {
  const bin = process.env.SITEFILE_BIN ?? path.join(ROOT, "target", "debug", "sitefile");
  if (!fs.existsSync(bin)) {
    execFileSync("cargo", ["build", "-p", "sitefile-server", "--bin", "sitefile", "--locked"], { cwd: ROOT, stdio: "inherit" });
  }
  return bin;
}

test.after(() => fs.rmSync(SCRATCH, { recursive: true, force: true }));

test("generate over the example: progress on stderr, exit 0, the three files", () => {
  const dir = app();
  const { status, stderr } = generate(dir);
  assert.equal(status, 0, stderr);
  assert.match(stderr, /^sitefile generate: 9 section\(s\) in sections, 1 loader\(s\)$/m);
  assert.match(stderr, /^wrote \.platform\/meta\.gen\.json$/m);
  assert.match(stderr, /^wrote sections\.gen\.ts$/m);
  assert.match(stderr, /^wrote \.platform\/blocks\.gen\.json \(\d+ blocks, revision \S+, 0 skipped\)$/m);
  assert.doesNotMatch(stderr, /warning/);
});

test("the schema: section keys, labels from doc comments, optional props, nested types, arrays, unions", () => {
  const dir = app();
  assert.equal(generate(dir).status, 0);
  const meta = readJson(path.join(dir, ".platform", "meta.gen.json"));
  assert.equal(meta.version, VERSION);
  assert.equal(meta.namespace, "site");
  const sections = ["Counter", "Feature", "Features", "Footer", "Greeting", "Hero", "ProductShelf", "Reviews", "Spacer"];
  assert.deepEqual(
    meta.manifest.blocks.sections,
    Object.fromEntries(sections.map((s) => [`site/sections/${s}.tsx`, { $ref: `#/definitions/${b64(`site/sections/${s}.tsx`)}` }])),
  );

  // The label rule: a prop's `@title` tag, else its name in words — never the comment's text,
  // which is the description. `subtitle`'s tag differs from its name (`Tagline`) and its comment
  // has text besides; an optional prop is not required; a literal union is an enum.
  assert.deepEqual(def(meta, "site/sections/Hero.tsx"), {
    title: "Hero",
    type: "object",
    properties: {
      title: { type: "string", title: "Title" },
      subtitle: { type: "string", title: "Tagline", description: "Shown under the title." },
      align: { type: "string", enum: ["left", "center", "right"], title: "Align", description: "Where the title sits." },
    },
    required: ["title"],
  });
  // A doc comment without a tag: the label is the prop's name split into words (`loadedFor` →
  // `Loaded For`), the comment's text the description.
  assert.deepEqual(def(meta, "site/sections/Reviews.tsx").properties.loadedFor, {
    type: "string",
    title: "Loaded For",
    description: "Set by the section loader: the path the section was loaded for.",
  });
  assert.deepEqual(def(meta, "site/sections/Spacer.tsx").properties.height, {
    type: "number",
    title: "Height",
    description: "Height in pixels.",
  });
  assert.deepEqual(def(meta, "site/sections/Counter.tsx").required, ["label"]);
  assert.deepEqual(def(meta, "site/sections/Counter.tsx").properties.start, { type: "number", title: "Start" });
  // A nested named type gets a definition of its own; `T[] | null` is a union.
  const productId = `${b64("site/sections/ProductShelf.tsx")}@Product`;
  assert.deepEqual(def(meta, "site/sections/ProductShelf.tsx").properties.products, {
    anyOf: [{ type: "array", items: { $ref: `#/definitions/${productId}` } }, { type: "null" }],
    title: "Products",
    description: "Filled by a loader in content (site/loaders/products.ts).",
  });
  assert.deepEqual(def(meta, "site/sections/ProductShelf.tsx").required, ["title"]);
  assert.deepEqual(meta.schema.definitions[productId], {
    title: "Product",
    type: "object",
    properties: { name: { type: "string", title: "Name" }, price: { type: "number", title: "Price" } },
    required: ["name", "price"],
  });
  // An array of nested sections: the framework's sections.
  assert.deepEqual(def(meta, "site/sections/Features.tsx").properties.items, {
    type: "array",
    items: { $ref: "#/root/sections" },
    title: "Items",
    description: "Sections shown side by side.",
  });
  assert.deepEqual(def(meta, "site/sections/Reviews.tsx").properties.reviews, {
    type: "array",
    items: { type: "string" },
    title: "Reviews",
  });
  // Functions exported beside Props (the section loader) are not props; a described prop
  // set by it stays optional.
  assert.deepEqual(def(meta, "site/sections/Greeting.tsx").required, ["name"]);
  assert.equal(
    def(meta, "site/sections/Greeting.tsx").properties.path.description,
    "Set by the section loader: the path the page was requested at.",
  );

  // Loaders from loaders/: the type's doc comment describes the block.
  assert.deepEqual(meta.manifest.blocks.loaders, {
    "site/loaders/products.ts": { $ref: `#/definitions/${b64("site/loaders/products.ts")}` },
  });
  assert.deepEqual(def(meta, "site/loaders/products.ts"), {
    title: "products",
    description: "Example products, as a commerce loader would fetch them.",
    type: "object",
    properties: { count: { type: "number", title: "Count", description: "How many products." } },
  });

  // Composed with the framework's blocks; `#/root/<group>` is every block of the group.
  assert.ok(meta.manifest.blocks.pages["website/pages/Page.tsx"]);
  assert.deepEqual(def(meta, "website/pages/Page.tsx").required, ["name", "path"]);
  assert.ok(meta.manifest.blocks.flags["website/flags/multivariate.ts"]);
  for (const matcher of ["always", "never", "device", "random", "cookie", "pathname", "multi", "negate"]) {
    assert.ok(meta.manifest.blocks.matchers[`website/matchers/${matcher}.ts`], matcher);
  }
  assert.deepEqual(def(meta, "website/matchers/cookie.ts").required, ["name"]);
  assert.deepEqual(meta.schema.root.sections.anyOf, Object.values(meta.manifest.blocks.sections));
  for (const group of Object.keys(meta.manifest.blocks)) {
    for (const { $ref } of Object.values(meta.manifest.blocks[group])) {
      assert.ok(meta.schema.definitions[$ref.slice("#/definitions/".length)], $ref);
    }
  }
});

test("the example's committed meta.gen.json and sections.gen.ts are what generate writes", () => {
  const dir = app();
  assert.equal(generate(dir).status, 0);
  assert.deepEqual(readJson(path.join(EXAMPLE, ".platform", "meta.gen.json")), readJson(path.join(dir, ".platform", "meta.gen.json")));
  assert.equal(fs.readFileSync(path.join(EXAMPLE, "sections.gen.ts"), "utf8"), fs.readFileSync(path.join(dir, "sections.gen.ts"), "utf8"));
});

test("--site NAME names the site in meta.gen.json and /live/_meta; PLATFORM_SITE_NAME is its default", async () => {
  const dir = app();
  const metaFile = path.join(dir, ".platform", "meta.gen.json");
  let run = generate(dir);
  assert.equal(run.status, 0, run.stderr);
  const unnamed = readJson(metaFile);
  assert.ok(!("site" in unnamed), "no site without --site or PLATFORM_SITE_NAME");
  assert.match(run.stderr, /^sitefile generate: 9 section\(s\) in sections, 1 loader\(s\)$/m);

  run = generate(dir, { PLATFORM_SITE_NAME: " shop-env " });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /^sitefile generate: 9 section\(s\) in sections, 1 loader\(s\), site shop-env$/m);
  assert.equal(readJson(metaFile).site, "shop-env", "PLATFORM_SITE_NAME, trimmed");

  run = generate(dir, { PLATFORM_SITE_NAME: "shop-env" }, "--site", "storefront");
  assert.equal(run.status, 0, run.stderr);
  const named = readJson(metaFile);
  assert.equal(named.site, "storefront", "--site wins over PLATFORM_SITE_NAME");
  // Only `site` changes, and it comes after `namespace` as in the reference's meta response.
  const { site: _, ...rest } = named;
  assert.deepEqual(rest, unnamed);
  assert.deepEqual(Object.keys(named).slice(0, 3), ["version", "namespace", "site"]);

  run = generate(dir, { PLATFORM_SITE_NAME: "  " });
  assert.equal(run.status, 0, run.stderr);
  assert.ok(!("site" in readJson(metaFile)), "a blank PLATFORM_SITE_NAME is unset");
  for (const args of [["--site"], ["--site", " "]]) {
    run = generate(dir, ...args);
    assert.equal(run.status, 2, args.join(" "));
    assert.match(run.stderr, /^sitefile generate: --site needs a value$/m);
  }

  // The runtime serves the name: /live/_meta answers the document with its `site`.
  const { createSiteSetup, createAdminSetup, handleMeta } = require("sitefile");
  generate(dir, "--site", "storefront");
  createSiteSetup({ env: {}, blocks: {} });
  createAdminSetup({ meta: () => readJson(metaFile) });
  const served = await (await handleMeta(new Request("https://shop.example/live/_meta"))).json();
  assert.equal(served.site, "storefront");
});

test("the registry: one lazy import per section, conventions from the sections' own exports, the loaders", async () => {
  const dir = app();
  assert.equal(generate(dir).status, 0);
  const registry = fs.readFileSync(path.join(dir, "sections.gen.ts"), "utf8");
  assert.match(registry, /^ {2}"\.\/sections\/Hero\.tsx": \(\) => import\("\.\/sections\/Hero"\),$/m);
  assert.equal(registry.match(/\(\) => import\(/g).length, 9);
  assert.match(registry, /^ {2}"site\/loaders\/products\.ts": \(props, request, ctx\) => import\("\.\/loaders\/products"\)/m);
  assert.match(registry, /^ {4}"\.\/sections\/Footer\.tsx": \{"layout":true\},$/m);
  assert.match(registry, /^ {4}"\.\/sections\/Reviews\.tsx": \{"hasLoadingFallback":true\},$/m);
  assert.match(registry, /^export const conventions: SectionConventions = \{$/m);
  // It compiles and exports what createNextSetup takes.
  const ts = require("typescript");
  const js = ts.transpileModule(registry, { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText;
  const exports = {};
  // The loader module's stand-in: its default export answers what it was called with.
  const required = [];
  const requireStub = (specifier) => {
    required.push(specifier);
    return { default: (props, request, ctx) => ({ props, url: request.url, ctx }) };
  };
  new Function("exports", "require", js)(exports, requireStub);
  assert.equal(Object.keys(exports.sections).length, 9);
  assert.deepEqual(exports.conventions.meta["./sections/Footer.tsx"], { layout: true });
  assert.deepEqual(Object.keys(exports.loaders), ["site/loaders/products.ts"]);
  assert.deepEqual(required, [], "a loader module is imported at its first call");
  const answer = await exports.loaders["site/loaders/products.ts"]({ count: 2 }, { url: "https://shop.example/" }, "ctx");
  assert.deepEqual(answer, { props: { count: 2 }, url: "https://shop.example/", ctx: "ctx" });
  assert.deepEqual(required, ["./loaders/products"]);
});

test("src/sections is used before sections; nested directories keep their path in the key", () => {
  const props = "export interface Props {\n  /** @title Heading */\n  text: string;\n}\nexport default function S() { return null; }\n";
  const dir = app({
    example: false,
    files: { "src/sections/blog/Post.tsx": props, "sections/Ignored.tsx": props },
  });
  const { status, stderr } = generate(dir);
  assert.equal(status, 0, stderr);
  const meta = readJson(path.join(dir, ".platform", "meta.gen.json"));
  assert.deepEqual(Object.keys(meta.manifest.blocks.sections), ["site/sections/blog/Post.tsx"]);
  assert.deepEqual(def(meta, "site/sections/blog/Post.tsx").properties.text, { type: "string", title: "Heading" });
  assert.match(
    fs.readFileSync(path.join(dir, "src", "sections.gen.ts"), "utf8"),
    /"\.\/sections\/blog\/Post\.tsx": \(\) => import\("\.\/sections\/blog\/Post"\)/,
  );
  assert.match(stderr, /no blocks directory .*: no content bundle written/);
});

test("the bundle is byte for byte what `sitefile bundle` writes, invalid files skipped by both", () => {
  const bin = sitefileBinary();
  const dir = app();
  fs.writeFileSync(path.join(dir, ".platform", "blocks", "broken.json"), "{ not json");
  const { status, stderr } = generate(dir);
  assert.equal(status, 0, stderr);
  assert.match(stderr, /^warning: block "broken": file broken\.json skipped: /m);
  const theirs = path.join(dir, "cli-bundle.json");
  execFileSync(bin, ["bundle", dir, "--out", theirs], { stdio: "pipe" });
  const ours = fs.readFileSync(path.join(dir, ".platform", "blocks.gen.json"));
  assert.ok(ours.length > 100);
  assert.ok(ours.equals(fs.readFileSync(theirs)), "generate's blocks.gen.json differs from sitefile bundle's");
  // --strict fails on the skipped file and writes nothing.
  fs.rmSync(path.join(dir, ".platform", "meta.gen.json"));
  const strict = generate(dir, "--strict");
  assert.equal(strict.status, 1);
  assert.match(strict.stderr, /^error: 1 warning\(s\); nothing written \(--strict\)$/m);
  assert.ok(!fs.existsSync(path.join(dir, ".platform", "meta.gen.json")));
});

test("Fast Deploy: a seeded deployment's build (PLATFORM_SEEDED_DEPLOY, or --fast-deploy true) bundles no content; --fast-deploy false keeps it", () => {
  const dir = app();
  const bundle = () => readJson(path.join(dir, ".platform", "blocks.gen.json"));
  assert.equal(generate(dir).status, 0);
  const blocks = Object.keys(bundle()).length;
  assert.ok(blocks > 0, "the content, by default");
  let run = generate(dir, { PLATFORM_SEEDED_DEPLOY: "1" });
  assert.equal(run.status, 0, run.stderr);
  assert.deepEqual(bundle(), {});
  assert.match(
    run.stderr,
    /^wrote \.platform\/blocks\.gen\.json without the content: Fast Deploy \(the content comes from PLATFORM_KV\)$/m,
  );
  assert.equal(generate(dir, { PLATFORM_SEEDED_DEPLOY: "1" }, "--fast-deploy", "false").status, 0);
  assert.equal(Object.keys(bundle()).length, blocks);
  assert.equal(generate(dir, "--fast-deploy", "true").status, 0);
  assert.deepEqual(bundle(), {});
  run = generate(dir, "--fast-deploy", "sometimes");
  assert.equal(run.status, 1);
  assert.match(run.stderr, /^error: invalid fastDeploy="sometimes": expected true, false or "auto"$/m);
});

test("bad inputs: a section without Props warns naming it, no sections directory fails naming where it looked, usage errors", () => {
  let dir = app({
    example: false,
    files: {
      "sections/Plain.tsx": "export default function Plain() { return null; }\n",
      "sections/Ok.tsx": "export interface Props { n: number }\nexport default function Ok() { return null; }\n",
    },
  });
  let run = generate(dir);
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stderr, /^warning: sections\/Plain\.tsx: no exported Props type; its props schema is empty$/m);
  const meta = readJson(path.join(dir, ".platform", "meta.gen.json"));
  assert.deepEqual(def(meta, "site/sections/Plain.tsx"), { title: "Plain", type: "object", properties: {} });
  assert.deepEqual(def(meta, "site/sections/Ok.tsx").required, ["n"]);
  assert.equal(generate(dir, "--strict").status, 1);

  dir = app({ example: false });
  run = generate(dir);
  assert.equal(run.status, 1);
  assert.equal(
    run.stderr,
    `error: no sections directory: looked for ${path.join(dir, "src", "sections")}, ${path.join(dir, "sections")}\n`,
  );
  assert.ok(!fs.existsSync(path.join(dir, ".platform")));
  run = generate(dir, "--sections", "app/blocks");
  assert.equal(run.stderr, `error: no sections directory: looked for ${path.join(dir, "app", "blocks")}\n`);

  run = spawnSync(process.execPath, [CLI], { encoding: "utf8" });
  assert.equal(run.status, 2);
  assert.match(run.stderr, /^usage: sitefile <command>/m);
  run = generate(dir, "--nope");
  assert.equal(run.status, 2);
  assert.match(run.stderr, /unexpected argument --nope/);
});

test("every other command is the native sitefile program: arguments, output and exit code pass through", () => {
  const program = sitefileBinary();
  const env = { ...process.env, SITEFILE_BINARY: program };
  const site = path.join(ROOT, "examples", "storefront");
  const direct = spawnSync(program, ["check", site, "--json"], { encoding: "utf8" });
  let run = spawnSync(process.execPath, [CLI, "check", site, "--json"], { encoding: "utf8", env });
  assert.equal(run.status, direct.status);
  assert.equal(run.stdout, direct.stdout);
  assert.equal(run.stdout, "[]\n", "the example has no content problem");
  run = spawnSync(process.execPath, [CLI, "resolve", site, "not a url"], { encoding: "utf8", env });
  assert.equal(run.status, 2, "bad input: the program's exit code 2");
  assert.match(run.stderr, /invalid request URL "not a url"/);
  run = spawnSync(process.execPath, [CLI, "nope"], { encoding: "utf8", env });
  assert.equal(run.status, 2, "the program's usage error");

  run = spawnSync(process.execPath, [CLI, "serve", site], {
    encoding: "utf8",
    env: { ...process.env, SITEFILE_BINARY: path.join(SCRATCH, "missing") },
  });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /^sitefile serve: SITEFILE_BINARY=.*missing: no such file$/m);
  const { SITEFILE_BINARY: _, ...bare } = process.env;
  run = spawnSync(process.execPath, [CLI, "check", site], { encoding: "utf8", env: bare });
  assert.equal(run.status, 1, "in this checkout no platform package is installed");
  assert.match(
    run.stderr,
    /^sitefile check: the native sitefile program for linux-x64 is not installed: its package \(sitefile-linux-x64-gnu\)/m,
  );
});
