/**
 * The schema document `.platform/meta.gen.json`: the JSON Schema of the app's sections and
 * loaders, read from their exported `Props` types with the TypeScript compiler API, composed
 * with the framework's own blocks ({@link FRAMEWORK_BLOCKS}).
 */

import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { FRAMEWORK_BLOCKS, type JsonSchema } from "./framework";

/** One block module of the app: a section (`.tsx`) or a loader (`.ts`). */
export interface BlockModule {
  /** Its key: `site/sections/<path>.tsx` or `site/loaders/<path>.ts`. */
  key: string;
  /** Its absolute file path. */
  file: string;
}

/** The generated document, as `/live/_meta` serves it (before the runtime adds its ETag). */
export interface MetaDocument {
  /** The `sitefile` package version that wrote it. */
  version: string;
  /** The app's namespace (`site`). */
  namespace: string;
  /** The site's name (`--site`, `PLATFORM_SITE_NAME`), when given. */
  site?: string;
  /** Every block key by group (`sections`, `loaders`, `pages`, `flags`, `matchers`), each
   * `{"$ref": "#/definitions/<id>"}`. */
  manifest: { blocks: Record<string, Record<string, JsonSchema>> };
  /** The definitions, and under `root` one `anyOf` per group. */
  schema: { definitions: Record<string, JsonSchema>; root: Record<string, JsonSchema> };
}

/** The definition id of a block key (or a file key): its base64, as the editor expects. */
export function definitionId(key: string): string {
  return Buffer.from(key, "utf8").toString("base64");
}

/** `productId` → `Product Id`: a property's label when its doc comment gives no `@title`. */
function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The compiler options of the app (its `tsconfig.json`, when it has one), with what the
 * generator relies on forced: strict null checks (optional and nullable props), JSX. */
function compilerOptions(root: string): ts.CompilerOptions {
  const base: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    jsx: ts.JsxEmit.ReactJSX,
  };
  const configFile = path.join(root, "tsconfig.json");
  let options = base;
  if (fs.existsSync(configFile)) {
    const read = ts.readConfigFile(configFile, ts.sys.readFile);
    if (read.config !== undefined) {
      options = { ...base, ...ts.parseJsonConfigFileContent(read.config, ts.sys, root).options };
    }
  }
  return { ...options, strict: true, strictNullChecks: true, noEmit: true, skipLibCheck: true, plugins: [] };
}

/** Turns TypeScript types into JSON Schema, collecting named types as definitions. */
class SchemaWriter {
  /** Every definition written, by id. */
  readonly definitions: Record<string, JsonSchema> = {};
  private depth = 0;

  constructor(
    private readonly checker: ts.TypeChecker,
    private readonly fileKey: (file: ts.SourceFile) => string | undefined,
  ) {}

  /** The schema of an object type as a block definition, with its doc comment. */
  definition(type: ts.Type, title: string, doc: ts.Symbol | undefined): JsonSchema {
    const schema: JsonSchema = { title, ...this.objectSchema(type) };
    const description = doc ? ts.displayPartsToString(doc.getDocumentationComment(this.checker)).trim() : "";
    if (description !== "") schema.description = description;
    return schema;
  }

  /** The schema of a type; `undefined` for what the editor cannot fill (functions, `undefined`). */
  schemaOf(type: ts.Type): JsonSchema | undefined {
    if (this.depth > 32) return {};
    this.depth += 1;
    try {
      return this.convert(type);
    } finally {
      this.depth -= 1;
    }
  }

  private convert(type: ts.Type): JsonSchema | undefined {
    const f = type.flags;
    if (f & (ts.TypeFlags.Undefined | ts.TypeFlags.Void | ts.TypeFlags.Never)) return undefined;
    if (f & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) return {};
    if (f & ts.TypeFlags.Null) return { type: "null" };
    if (f & ts.TypeFlags.StringLiteral) return { type: "string", const: (type as ts.StringLiteralType).value };
    if (f & ts.TypeFlags.NumberLiteral) return { type: "number", const: (type as ts.NumberLiteralType).value };
    if (f & ts.TypeFlags.BooleanLiteral) return { type: "boolean", const: this.checker.typeToString(type) === "true" };
    if (f & ts.TypeFlags.StringLike) return { type: "string" };
    if (f & ts.TypeFlags.NumberLike) return { type: "number" };
    if (f & ts.TypeFlags.BooleanLike) return { type: "boolean" };
    if (type.isUnion()) return this.union(type.types);
    if (this.checker.isArrayType(type)) {
      const [item] = this.checker.getTypeArguments(type as ts.TypeReference);
      return { type: "array", items: (item && this.schemaOf(item)) ?? {} };
    }
    if (this.checker.isTupleType(type)) {
      const items = this.checker.getTypeArguments(type as ts.TypeReference).map((t) => this.schemaOf(t) ?? {});
      return { type: "array", items: items.length === 1 ? items[0] : { anyOf: items } };
    }
    if (f & ts.TypeFlags.Object || type.isIntersection()) {
      if (type.getCallSignatures().length > 0) return undefined;
      if (isSectionType(type)) return { $ref: "#/root/sections" };
      return this.named(type) ?? this.objectSchema(type);
    }
    return {};
  }

  /** A union: `undefined` dropped (optionality is `required`'s business), literals of one kind
   * as an `enum`, `true | false` as a boolean, the rest as `anyOf` (`null` last). */
  private union(members: readonly ts.Type[]): JsonSchema | undefined {
    const schemas = members.map((m) => this.schemaOf(m)).filter((s): s is JsonSchema => s !== undefined);
    const booleans = schemas.filter((s) => s.type === "boolean" && "const" in s);
    const merged = booleans.length === 2 ? [...schemas.filter((s) => !booleans.includes(s)), { type: "boolean" }] : schemas;
    if (merged.length === 0) return undefined;
    if (merged.length === 1) return merged[0];
    const kinds = new Set(merged.map((s) => ("const" in s ? s.type : undefined)));
    const [kind] = kinds;
    if (kinds.size === 1 && kind !== undefined) return { type: kind, enum: merged.map((s) => s.const) };
    const literals = merged.filter((s) => "const" in s && s.type === "string");
    if (literals.length > 1) {
      const others = merged.filter((s) => !literals.includes(s));
      return { anyOf: [{ type: "string", enum: literals.map((s) => s.const) }, ...others] };
    }
    // `null` last, whatever order the checker keeps the members in: `T | null` reads as written.
    return { anyOf: [...merged.filter((s) => s.type !== "null"), ...merged.filter((s) => s.type === "null")] };
  }

  /** A non-generic interface or type alias declared in the app: a definition of its own
   * (`<base64 of its file key>@<name>`, or the file key's base64 for a block's `Props`), referenced. */
  private named(type: ts.Type): JsonSchema | undefined {
    const symbol = type.aliasSymbol ?? type.getSymbol();
    if (!symbol || type.aliasTypeArguments?.length || (type as ts.TypeReference).typeArguments?.length) return undefined;
    const declaration = symbol.declarations?.[0];
    if (
      !declaration ||
      !(ts.isInterfaceDeclaration(declaration) || ts.isTypeAliasDeclaration(declaration)) ||
      declaration.typeParameters?.length
    ) {
      return undefined;
    }
    const file = this.fileKey(declaration.getSourceFile());
    if (file === undefined) return undefined;
    const id = symbol.name === "Props" ? definitionId(file) : `${definitionId(file)}@${symbol.name}`;
    if (!(id in this.definitions)) {
      this.definitions[id] = {};
      this.definitions[id] = this.definition(type, symbol.name, symbol);
    }
    return { $ref: `#/definitions/${id}` };
  }

  /** An object type's properties (functions skipped), `required` for those without `?`, and
   * `additionalProperties` from a string index signature. */
  private objectSchema(type: ts.Type): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const property of this.checker.getPropertiesOfType(type)) {
      const schema = this.schemaOf(this.checker.getTypeOfSymbol(property));
      if (schema === undefined) continue;
      properties[property.name] = this.annotated(schema, property);
      if (!(property.flags & ts.SymbolFlags.Optional)) required.push(property.name);
    }
    const schema: JsonSchema = { type: "object", properties };
    if (required.length > 0) schema.required = required;
    const index = type.getStringIndexType();
    if (index) schema.additionalProperties = this.schemaOf(index) ?? {};
    return schema;
  }

  /** A property's schema with what its doc comment says: `@title` (else its humanized name) is
   * the editor's label, the comment's text the description; `@description`, `@default` (JSON,
   * else text) and `@format` too. */
  private annotated(schema: JsonSchema, property: ts.Symbol): JsonSchema {
    const out: JsonSchema = { ...schema, title: humanize(property.name) };
    const description = ts.displayPartsToString(property.getDocumentationComment(this.checker)).trim();
    if (description !== "") out.description = description;
    for (const tag of property.getJsDocTags(this.checker)) {
      const value = ts.displayPartsToString(tag.text).trim();
      if (tag.name === "title" || tag.name === "description" || tag.name === "format") {
        if (value !== "") out[tag.name] = value;
      } else if (tag.name === "default") {
        out.default = parseDefault(value);
      }
    }
    return out;
  }
}

function parseDefault(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The framework's nested-section type: a type named `Section` with a `Component` and
 * `props` (the page hands a nested section over as one), referenced as `#/root/sections`. */
function isSectionType(type: ts.Type): boolean {
  const symbol = type.aliasSymbol ?? type.getSymbol();
  return symbol?.name === "Section" && type.getProperty("Component") !== undefined && type.getProperty("props") !== undefined;
}

/** The exported `Props` type of a module, or `undefined`. */
function exportedProps(checker: ts.TypeChecker, file: ts.SourceFile): ts.Symbol | undefined {
  const module = checker.getSymbolAtLocation(file);
  if (!module) return undefined;
  const props = checker.getExportsOfModule(module).find((s) => s.name === "Props");
  if (!props) return undefined;
  return props.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(props) : props;
}

/** What {@link buildMeta} needs. */
export interface MetaInput {
  /** The app's root (its `tsconfig.json`, if any, is read). */
  root: string;
  /** The directory block keys are relative to: the parent of the sections directory. */
  sourceRoot: string;
  /** The sections. */
  sections: BlockModule[];
  /** The loaders. */
  loaders: BlockModule[];
  /** The `sitefile` package version. */
  version: string;
  /** The site's name, written as the document's `site` when given. */
  site?: string | undefined;
}

/** The schema document of an app, and a warning per block module without an exported `Props`
 * (its schema is then an object with no properties). */
export function buildMeta(input: MetaInput): { meta: MetaDocument; warnings: string[] } {
  const modules = [...input.sections, ...input.loaders];
  const program = ts.createProgram(
    modules.map((m) => m.file),
    compilerOptions(input.root),
  );
  const checker = program.getTypeChecker();
  const fileKey = (file: ts.SourceFile): string | undefined => {
    const relative = path.relative(input.sourceRoot, file.fileName);
    if (relative.startsWith("..") || path.isAbsolute(relative) || relative.split(path.sep).includes("node_modules")) {
      return undefined;
    }
    return `site/${relative.split(path.sep).join("/")}`;
  };
  const writer = new SchemaWriter(checker, fileKey);
  const warnings: string[] = [];
  const sections: Record<string, JsonSchema> = {};
  const loaders: Record<string, JsonSchema> = {};
  const manifest: Record<string, Record<string, JsonSchema>> = { sections, loaders };
  const group = (entries: Record<string, JsonSchema>, list: readonly BlockModule[]) => {
    for (const module of list) {
      const id = definitionId(module.key);
      entries[module.key] = { $ref: `#/definitions/${id}` };
      const file = program.getSourceFile(module.file);
      const props = file && exportedProps(checker, file);
      const title = path.basename(module.file).replace(/\.tsx?$/, "");
      if (!props) {
        warnings.push(`${path.relative(input.root, module.file)}: no exported Props type; its props schema is empty`);
        writer.definitions[id] = { title, type: "object", properties: {} };
        continue;
      }
      // Assigned even when another block's props already referenced it (titled `Props` then).
      writer.definitions[id] = writer.definition(checker.getDeclaredTypeOfSymbol(props), title, props);
    }
  };
  group(sections, input.sections);
  group(loaders, input.loaders);
  for (const block of FRAMEWORK_BLOCKS) {
    const id = definitionId(block.key);
    const entries = manifest[block.group] ?? {};
    manifest[block.group] = entries;
    entries[block.key] = { $ref: `#/definitions/${id}` };
    writer.definitions[id] = block.definition;
  }
  const root: Record<string, JsonSchema> = {};
  for (const [name, blocks] of Object.entries(manifest)) {
    root[name] = { title: humanize(name), anyOf: Object.values(blocks) };
  }
  return {
    meta: {
      version: input.version,
      namespace: "site",
      ...(input.site === undefined ? {} : { site: input.site }),
      manifest: { blocks: manifest },
      schema: { definitions: writer.definitions, root },
    },
    warnings,
  };
}

/** Reads the TypeScript AST of a section for what the registry's conventions record:
 * `export const layout = true` and an exported `LoadingFallback`. */
export function sectionConventions(file: string): { layout: boolean; hasLoadingFallback: boolean } {
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  let layout = false;
  let hasLoadingFallback = false;
  for (const statement of source.statements) {
    const exported = ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (!exported) continue;
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) {
        if (!ts.isIdentifier(declaration.name)) continue;
        if (declaration.name.text === "layout" && declaration.initializer?.kind === ts.SyntaxKind.TrueKeyword) layout = true;
        if (declaration.name.text === "LoadingFallback") hasLoadingFallback = true;
      }
    } else if (ts.isFunctionDeclaration(statement) && statement.name?.text === "LoadingFallback") {
      hasLoadingFallback = true;
    }
  }
  return { layout, hasLoadingFallback };
}
