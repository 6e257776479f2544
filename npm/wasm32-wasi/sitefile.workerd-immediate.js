// Loaded before emnapi's runtime (by sitefile.workerd.js, its first import). emnapi keeps the
// `setImmediate` it finds when it loads and schedules the finalizers of garbage-collected
// engine objects with it; workerd refuses timers outside a request, where garbage is collected,
// so the first such finalizer would throw and no finalizer would run again (the engine's
// memory for every collected object kept for the isolate's life). emnapi keeps this wrapper
// instead: where workerd refuses the timer, the finalizers run as a microtask. The loader puts
// the host's own `setImmediate` back once emnapi has loaded.
const hostSetImmediate = globalThis.setImmediate;

/** Puts the host's `setImmediate` back. */
export function restoreSetImmediate() {
  globalThis.setImmediate = hostSetImmediate;
}

if (typeof hostSetImmediate === "function") {
  globalThis.setImmediate = function setImmediate(callback, ...args) {
    try {
      return hostSetImmediate(callback, ...args);
    } catch {
      queueMicrotask(() => callback(...args));
      return undefined;
    }
  };
}
