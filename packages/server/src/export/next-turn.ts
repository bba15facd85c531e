/**
 * Resolves in a macrotask of its own (setImmediate), after the event loop has polled for I/O.
 * Bulk work (export pages, stream resumes) awaits it between slices: a chain of promise callbacks
 * never lets the loop poll, so without it one long read would hold back every other request,
 * stream ping and report until it ended (docs/decisions.md "Export: off the live path").
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
