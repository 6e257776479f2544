/** Waiting with a bound: the edge's origin and flight waits, Fast Deploy's store calls. */

/** Resolves with `promise`, or rejects once `ms` passed (`null`: no deadline).
 * @internal */
export function withDeadline<T>(promise: Promise<T>, ms: number | null): Promise<T> {
  if (ms === null) return promise;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
