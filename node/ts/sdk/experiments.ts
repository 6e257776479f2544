/**
 * `sitefile/sdk/experiments`: N-way experiments read from a key-value store, sticky per
 * visitor (the spec's `sdk/experiments` module). The same functions as the package root
 * exports: a loader of a resolving page calls {@link resolveExperimentVariant}; the site passes
 * its store as `createSiteSetup({ experiments })`.
 *
 * ```js
 * const { resolveExperimentVariant } = require("sitefile/sdk/experiments");
 * const loader = async () => (await resolveExperimentVariant("hero-copy"))?.payload ?? null;
 * ```
 *
 * @module sitefile/sdk/experiments
 */

export { type ExperimentAssignment, type ExperimentsStore, resolveExperimentVariant } from "../experiments";
