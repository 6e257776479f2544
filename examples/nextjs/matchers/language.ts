// A custom matcher (`site/matchers/language.ts`): content uses it as a variant rule
// `{ "__resolveType": "site/matchers/language.ts", "language": "pt" }`. lib/sitefile.ts passes
// `registerLanguageMatcher` in `customMatchers`.
import { type MatcherContext, registerMatcher, registerMatcherSchema } from "sitefile";

/** The matcher's key: what content names in a rule's `__resolveType`. */
export const LANGUAGE_MATCHER = "site/matchers/language.ts";

/** The visitor's preferred language: the first tag of `Accept-Language`, lower-cased
 * (`pt-BR,pt;q=0.9,en;q=0.8` → `pt-br`); `""` without the header. */
function preferredLanguage(ctx: MatcherContext): string {
  return (ctx.headers["accept-language"] ?? "").split(",")[0].split(";")[0].trim().toLowerCase();
}

/** Registers the matcher: true when the visitor's preferred language is the rule's `language`
 * or one of its regional forms (`pt` matches `pt` and `pt-BR`). */
export function registerLanguageMatcher(): void {
  registerMatcher(LANGUAGE_MATCHER, (rule, ctx) => {
    const language = String(rule.language ?? "").toLowerCase();
    const preferred = preferredLanguage(ctx);
    return language !== "" && (preferred === language || preferred.startsWith(`${language}-`));
  });
  registerMatcherSchema({
    key: LANGUAGE_MATCHER,
    title: "Preferred language",
    namespace: "site",
    propsSchema: {
      type: "object",
      properties: { language: { type: "string", title: "Language (as in pt or pt-BR)" } },
      required: ["language"],
    },
  });
}
