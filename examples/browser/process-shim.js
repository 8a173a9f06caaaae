// process-shim.js — the little of Node's `process` that jszmq's dependencies
// (assert, util) touch in a browser; esbuild --inject puts it in the bundle.
export const process = {
    env: {},
    browser: true,
    nextTick: (callback, ...args) => queueMicrotask(() => callback(...args)),
    emitWarning() {},
};
