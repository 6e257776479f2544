/**
 * Errors of the sitefile package. Every error the package throws is a {@link SitefileError}: an
 * `Error` whose `code` is one of the core's stable codes.
 */

import type { ErrorCode as CoreErrorCode } from "./generated/boundary.gen";

/** The stable codes (the core's `ErrorCode`, whose declaration is generated, plus `PANIC` for a
 * bug in the addon), in the addon's order; the compiler holds each one to those, a test holds
 * them equal to the addon's own list. */
export const ERROR_CODES = [
  "INVALID_JSON",
  "INVALID_CONTENT",
  "INVALID_REQUEST",
  "INVALID_CONFIG",
  "NOT_FOUND",
  "IO",
  "UNKNOWN_CALL",
  "ALREADY_ANSWERED",
  "FINISHED",
  "HOOK_FAILED",
  "PANIC",
] as const satisfies readonly (CoreErrorCode | "PANIC")[];

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error with a stable `code`. */
export class SitefileError extends Error {
  override readonly name = "SitefileError";
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Whether `error` is an error of this package (also true across copies of the package). */
export function isSitefileError(error: unknown): error is SitefileError {
  return (
    error instanceof SitefileError ||
    (error instanceof Error && error.name === "SitefileError" && typeof (error as { code?: unknown }).code === "string")
  );
}

/**
 * Runs a call into the addon; an error it throws (an `Error` whose `code` is the core's code)
 * is rethrown as a {@link SitefileError} with the same code and message. Errors thrown by host
 * code (a loader, a matcher) never pass through here.
 */
export function native<T>(call: () => T): T {
  try {
    return call();
  } catch (error) {
    if (error instanceof Error && typeof (error as { code?: unknown }).code === "string") {
      throw new SitefileError((error as unknown as { code: ErrorCode }).code, error.message, { cause: error });
    }
    throw error;
  }
}

/** The message of a thrown value.
 * @internal */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
