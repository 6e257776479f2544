/**
 * The framework's own blocks in the generated schema: the page block, the multivariate flags
 * and the built-in matchers (spec "Page block", "Multivariate flag", "Matcher rules"), each
 * listed in the manifest by its key with its definition.
 */

/** A JSON Schema object (the subset the generator writes). */
export type JsonSchema = { [keyword: string]: unknown };

/** A framework block: its manifest group, key and definition. */
export interface FrameworkBlock {
  /** The `manifest.blocks` group (`pages`, `flags`, `matchers`). */
  group: string;
  /** Its `__resolveType`. */
  key: string;
  /** Its JSON Schema. */
  definition: JsonSchema;
}

const text = (title: string, description?: string): JsonSchema =>
  description === undefined ? { type: "string", title } : { type: "string", title, description };
const flag = (title: string): JsonSchema => ({ type: "boolean", title });
const object = (title: string, properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema => ({
  type: "object",
  title,
  properties,
  required,
});
const ref = (to: string): JsonSchema => ({ $ref: `#/root/${to}` });

const variants = (value: JsonSchema): JsonSchema => ({
  type: "array",
  title: "Variants",
  description: "Checked in order: the first whose rule matches is used.",
  items: object("Variant", { rule: { ...ref("matchers"), title: "Rule" }, value: { ...value, title: "Value" } }, ["rule", "value"]),
});

const location = object("Location", {
  country: text("Country"),
  regionCode: text("Region code"),
  city: text("City"),
  coordinates: text("Coordinates", "lat,lng,radius-in-meters"),
});

const matcher = (file: string, title: string, properties: Record<string, JsonSchema> = {}, required: string[] = []) => ({
  group: "matchers",
  key: `website/matchers/${file}`,
  definition: object(title, properties, required),
});

/** Every framework block, in manifest order. */
export const FRAMEWORK_BLOCKS: readonly FrameworkBlock[] = [
  {
    group: "pages",
    key: "website/pages/Page.tsx",
    definition: object(
      "Page",
      {
        name: text("Name"),
        path: text("Path", "The URL path the page serves."),
        sections: {
          title: "Sections",
          description: "Rendered in order.",
          anyOf: [{ type: "array", items: ref("sections") }, ref("flags")],
        },
        seo: object("SEO", {
          title: text("Title"),
          description: text("Description"),
          canonical: text("Canonical URL"),
          noIndexing: flag("Hide from search engines"),
        }),
      },
      ["name", "path"],
    ),
  },
  {
    group: "flags",
    key: "website/flags/multivariate.ts",
    definition: object("Multivariate flag", { variants: variants({}) }, ["variants"]),
  },
  {
    group: "flags",
    key: "website/flags/multivariate/section.ts",
    definition: object("Section variants", { variants: variants({ type: "array", items: ref("sections") }) }, ["variants"]),
  },
  matcher("always.ts", "Always"),
  matcher("never.ts", "Never"),
  matcher("device.ts", "Device", { mobile: flag("Mobile"), tablet: flag("Tablet"), desktop: flag("Desktop") }),
  matcher("random.ts", "Random", {
    traffic: { type: "number", title: "Traffic", minimum: 0, maximum: 1, default: 0.5 },
  }),
  matcher("date.ts", "Date", { start: text("Start", "ISO date with an offset"), end: text("End", "ISO date with an offset") }),
  matcher("cron.ts", "Cron", { start: text("Start"), end: text("End") }),
  matcher("cookie.ts", "Cookie", { name: text("Name"), value: text("Value") }, ["name"]),
  matcher("queryString.ts", "Query string", { key: text("Key"), value: text("Value") }, ["key"]),
  matcher("pathname.ts", "Pathname", {
    case: object(
      "Case",
      {
        type: { type: "string", title: "Type", enum: ["Equals", "Includes", "Not Includes", "Starts With"] },
        pathname: text("Pathname"),
      },
      ["type", "pathname"],
    ),
    pattern: text("Pattern"),
    includes: text("Includes"),
    excludes: text("Excludes"),
  }),
  matcher("host.ts", "Host", { host: text("Host") }, ["host"]),
  matcher("userAgent.ts", "User agent", { includes: text("Includes"), match: text("Match", "A regular expression") }),
  matcher("location.ts", "Location", {
    includeLocations: { type: "array", title: "Include locations", items: location },
    excludeLocations: { type: "array", title: "Exclude locations", items: location },
  }),
  matcher("environment.ts", "Environment", { environment: { type: "string", title: "Environment", enum: ["production", "development"] } }, [
    "environment",
  ]),
  matcher(
    "multi.ts",
    "Multi",
    {
      op: { type: "string", title: "Operator", enum: ["and", "or"] },
      matchers: { type: "array", title: "Matchers", items: ref("matchers") },
    },
    ["op", "matchers"],
  ),
  matcher("negate.ts", "Negate", { matcher: { ...ref("matchers"), title: "Matcher" } }, ["matcher"]),
];
