/**
 * The function-composition flag API carried over from the older framework: plain constructors
 * of flag objects, evaluated by the code that uses them (they do not use the matcher registry
 * and content never refers to them).
 */

import type { MatcherContext } from "./setup";

/** A matcher function of this API. */
export type FlagMatcher = (ctx: MatcherContext) => boolean;

/** A two-way flag: `true` when its matcher matches, else `false`. */
export interface FlagObj<T = unknown> {
  /** Decides which value applies. */
  matcher: FlagMatcher;
  /** The flag's name. */
  name: string;
  /** The value when the matcher matches. */
  true: T;
  /** The value otherwise. */
  false: T;
}

/** One arm of a multivariate flag; an arm without a matcher is a default. */
export interface FlagVariant<T = unknown> {
  /** The arm's value. */
  value: T;
  /** When the arm applies; absent: a default. */
  matcher?: FlagMatcher;
  /** Its share, for arms chosen at random. */
  weight?: number;
}

/** A multivariate flag: its arms. */
export interface MultivariateFlag<T = unknown> {
  variants: Array<FlagVariant<T>>;
}

/** A flag object, as given. */
export function Flag<T>(flag: FlagObj<T>): FlagObj<T> {
  return flag;
}

/** An audience: its routes when the matcher matches, none otherwise. */
export function Audience<R>(audience: { matcher: FlagMatcher; name: string; routes?: R[] }): FlagObj<R[]> {
  return { matcher: audience.matcher, name: audience.name, true: audience.routes ?? [], false: [] };
}

/** The audience everyone is in (named `Everyone`). */
export function Everyone<R>(everyone: { routes?: R[] }): FlagObj<R[]> {
  return Audience({ matcher: () => true, name: "Everyone", routes: everyone.routes });
}

/** A multivariate flag of any values. */
export function multivariate<T>(flag: MultivariateFlag<T>): MultivariateFlag<T> {
  return { variants: flag.variants };
}

/** A multivariate flag of image URLs. */
export const ImageVariants: <T>(flag: MultivariateFlag<T>) => MultivariateFlag<T> = multivariate;
/** A multivariate flag of messages. */
export const MessageVariants: <T>(flag: MultivariateFlag<T>) => MultivariateFlag<T> = multivariate;
/** A multivariate flag of pages (section lists). */
export const PageVariants: <T>(flag: MultivariateFlag<T>) => MultivariateFlag<T> = multivariate;
/** A multivariate flag of sections. */
export const SectionVariants: <T>(flag: MultivariateFlag<T>) => MultivariateFlag<T> = multivariate;
