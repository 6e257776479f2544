/**
 * `getSection`: the component a resolved section names, from the `sections` modules the site
 * was set up with — what a page renders each `{component, props}` of `resolveDecoPage` with.
 */

import { native } from "../errors";
import { type Site, currentSite } from "../setup";

/**
 * The component of the section a resolved page names (`site/sections/Hero.tsx`): the default
 * export of its registered module (or the module itself when it has none); `undefined` when no
 * module is registered for it. The core says which registered key `component` names.
 */
export async function getSection(component: string, site: Site = currentSite()): Promise<unknown> {
  const key = native(() => site.native.registeredSection(component)) ?? component;
  const load = site.sectionModules.get(key);
  if (!load) return undefined;
  const module: unknown = await load();
  if (module !== null && typeof module === "object" && "default" in module) {
    return (module as { default: unknown }).default;
  }
  return module;
}
