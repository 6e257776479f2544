/**
 * sitefile for Node.js: set up a site, resolve its pages, reload its content.
 *
 * ```js
 * const { createSiteSetup, resolveDecoPage } = require("sitefile");
 * const site = createSiteSetup({ blocksDir: "examples/storefront", loaders: { ... } });
 * const page = await resolveDecoPage({ url: "https://shop.example/shoes" }, site);
 * ```
 *
 * @module sitefile
 */

export {
  type AdminHandler,
  type AdminSetupOptions,
  type RenderShellOptions,
  corsHeaders,
  createAdminSetup,
  handleAdminRequest,
  handleDecofileRead,
  handleDecofileReload,
  handleInvoke,
  handleMeta,
  handleRender,
  setRenderShell,
} from "./admin";
export { ERROR_CODES, type ErrorCode, SitefileError, isSitefileError } from "./errors";
export {
  type FeatureFlagAdapter,
  type InvokeContext,
  type Loader,
  type Matcher,
  type MatcherContext,
  type ReloadResponse,
  type RequestInput,
  type SectionModule,
  Site,
  type SiteSetupOptions,
  createSiteSetup,
  currentSite,
  type MatcherSchema,
  registerLayoutSections,
  registerMatcher,
  registerNonCriticalSections,
  registerMatcherSchema,
} from "./setup";
export {
  type Effects,
  type PageCut,
  type ResolveErrorEvent,
  type ResolvedPage,
  type ResolvedSection,
  resolveDecoPage,
} from "./resolve";
export {
  type EdgeCacheStorage,
  type ExecutionContext,
  type ServerEntry,
  type WebCache,
  type WorkerEntry,
  type WorkerEntryOptions,
  createDecoWorkerEntry,
  createMemoryCacheStorage,
  createWebCacheStorage,
} from "./worker";
export {
  type ExperimentAssignment,
  type ExperimentsStore,
  resolveExperimentVariant,
} from "./experiments";
export { type SectionLoadersResult, getSection, runSectionLoaders, runSectionLoadersWithEffects } from "./sections";
export { type MetadataDefaults, type PageMetadata, pageMetadata } from "./metadata";
export {
  Audience,
  Everyone,
  Flag,
  type FlagMatcher,
  type FlagObj,
  type FlagVariant,
  ImageVariants,
  MessageVariants,
  type MultivariateFlag,
  PageVariants,
  SectionVariants,
  multivariate,
} from "./flags";
