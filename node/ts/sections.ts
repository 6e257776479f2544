/**
 * Section modules and their loaders: `runSectionLoaders` runs, after a page resolved, the
 * `loader` export of each section's module (and of the nested sections its answer holds) as
 * the core decides, one round per nesting level, concurrently within a round.
 */

import { native } from "./errors";
import { type RequestInput, type Site, addon, currentSite } from "./setup";
import { type ResolvedSection, answerCall, messageOf, requestJson } from "./resolve";
import type { SectionLoaderContext, SectionLoadersResult, SectionStep } from "./generated/boundary.gen";

/** What a section module exports that the runtime reads. */
interface SectionExports {
  /** `loader(props, request, ctx)`: the section's props from now on; `ctx` is the core's
   * context of the run (`{device}`), as the reference passes it. */
  loader?: (props: unknown, request: RequestInput, ctx: SectionLoaderContext) => unknown;
  /** `false`: the section is left out of `?renderJson`; a function: its props as
   * `?renderJson` writes them (`renderJson(props)`, may be async). */
  renderJson?: unknown;
}

/** The registered key of the section a resolved page names (the core says which; it may be
 * spelled with or without `.tsx`), or the name itself when none is registered. */
function registeredKey(site: Site, component: string): string {
  return native(() => site.native.registeredSection(component)) ?? component;
}

/** The components each site renders without importing their module, by registered key. */
const syncComponentsBySite = new WeakMap<Site, ReadonlyMap<string, unknown>>();

/**
 * Sets the components `site` renders without waiting for their module (`createNextSetup`'s
 * `conventions.syncComponents`), keyed like `sections` (`./sections/<path>.tsx`) or by
 * section key.
 * @internal
 */
export function setSyncComponents(site: Site, components: Record<string, unknown>): void {
  syncComponentsBySite.set(site, new Map(Object.entries(components).map(([key, component]) => [addon.sectionKey(key), component])));
}

/**
 * The component of the section a resolved page names (`site/sections/Hero.tsx`): its
 * synchronous component when the set-up gave one (`conventions.syncComponents`, its module
 * not imported), else the default export of its registered module (or the module itself when
 * it has none); `undefined` when no module is registered for it. What a page renders each
 * `{component, props}` of `resolveDecoPage` with.
 */
export async function getSection(component: string, site: Site = currentSite()): Promise<unknown> {
  const sync = syncComponentsBySite.get(site)?.get(registeredKey(site, component));
  if (sync !== undefined) return sync;
  const module = await sectionModule(component, site);
  if (module !== null && typeof module === "object" && "default" in module) {
    return (module as { default: unknown }).default;
  }
  return module;
}

/** The registered module of the section a resolved page names; `undefined` when none is.
 * @internal */
export async function sectionModule(component: string, site: Site): Promise<unknown> {
  const load = site.sectionModules.get(registeredKey(site, component));
  return load ? await load() : undefined;
}

const exportsBySite = new WeakMap<Site, Promise<Map<string, SectionExports>>>();

/** Every `sections` module's exports by registered key, loaded once per site (a failed load
 * is logged and tried again at the next call, which rejects meanwhile). */
export function sectionExports(site: Site): Promise<Map<string, SectionExports>> {
  let loaded = exportsBySite.get(site);
  if (!loaded) {
    loaded = Promise.all(
      [...site.sectionModules].map(async ([key, module]): Promise<[string, SectionExports]> => {
        const value: unknown = await module();
        return [key, value !== null && typeof value === "object" ? (value as SectionExports) : {}];
      }),
    ).then((entries) => new Map(entries));
    exportsBySite.set(site, loaded);
    // A module that fails to load is not remembered: the next call tries again.
    loaded.catch((error: unknown) => {
      exportsBySite.delete(site);
      console.error(`sitefile: a section module failed to load: ${messageOf(error)}`);
    });
  }
  return loaded;
}

// The core's forms of a run: generated from its Rust types (core/src/ts_types.rs).
export type { SectionLoaderContext, SectionLoadersResult } from "./generated/boundary.gen";

/**
 * Runs the section loaders of a resolved page's `sections` (spec: after resolution, before
 * rendering) and returns the sections with their loaders' props. A failed loader keeps the
 * section's own props and is reported to `onResolveError` (context `Section loader`);
 * {@link runSectionLoadersWithEffects} also tells whether the page is degraded.
 */
export async function runSectionLoaders(
  sections: ResolvedSection[],
  request: RequestInput,
  site: Site = currentSite(),
): Promise<ResolvedSection[]> {
  return (await runSectionLoadersWithEffects(sections, request, site)).sections;
}

/** {@link runSectionLoaders}, with what failed: `effects.errors` and `effects.degraded`. */
export async function runSectionLoadersWithEffects(
  sections: ResolvedSection[],
  request: RequestInput,
  site: Site = currentSite(),
): Promise<SectionLoadersResult> {
  const modules = await sectionExports(site);
  const withLoaders = [...modules].filter(([, e]) => typeof e.loader === "function").map(([key]) => key);
  if (withLoaders.length === 0) return { sections, effects: { setCookies: [], warnings: [], varies: [] } };
  const run = native(() => site.native.runSectionLoaders(requestJson(request, site), JSON.stringify(sections), withLoaders));
  const context = JSON.parse(native(() => run.context)) as SectionLoaderContext;
  let answers: string | null = null;
  for (;;) {
    const given = answers;
    const step = JSON.parse(native(() => run.advance(given))) as SectionStep;
    if (step.step === "done") {
      const onError = site.options.onResolveError;
      for (const event of step.value.effects.errors ?? []) {
        try {
          onError?.(new Error(event.message), event.resolveType, event.context);
        } catch {
          // The hook only observes (decision NODE-11): its own failure changes nothing.
        }
      }
      return step.value;
    }
    const results = await Promise.all(
      step.value.map((call) => {
        return answerCall(call.id, () => modules.get(registeredKey(site, call.key))?.loader?.(call.props, request, context));
      }),
    );
    answers = `[${results.join(",")}]`;
  }
}

/**
 * Each section's props as `?renderJson` writes them: through its module's `renderJson`
 * function when it exports one (sync or async). A projection that throws fails closed: the
 * section is written with empty props rather than everything the projection would have
 * hidden, and the error goes to `onResolveError`.
 * @internal
 */
export async function projectRenderJson(sections: ResolvedSection[], site: Site): Promise<ResolvedSection[]> {
  const modules = await sectionExports(site);
  const projectionOf = (section: ResolvedSection): unknown => modules.get(registeredKey(site, section.component))?.renderJson;
  if (!sections.some((section) => typeof projectionOf(section) === "function")) return sections;
  return Promise.all(
    sections.map(async (section) => {
      const project = projectionOf(section);
      if (typeof project !== "function") return section;
      try {
        return { ...section, props: (await (project as (props: unknown) => unknown)(section.props)) ?? null };
      } catch (error) {
        try {
          site.options.onResolveError?.(new Error(messageOf(error)), section.component, "renderJson");
        } catch {
          // The hook only observes (decision NODE-11): its own failure changes nothing.
        }
        return { ...section, props: {} };
      }
    }),
  );
}
