/**
 * The Node.js releases svc runs on. This module imports nothing, so the entry point can ask it
 * before the SQLite driver (a native addon) is loaded: on an older release the answer must be
 * one readable line, never the driver's crash. docs/operations.md "Supported Node.js".
 */

/** The oldest major release svc supports; the root package.json's `engines` says the same. */
export const MINIMUM_NODE_MAJOR = 22;

/** The one line that refuses `version` (as in `process.versions.node`), or null when svc runs on it. */
export function nodeRefusal(version: string): string | null {
  const major = Number(/^v?(\d+)\./.exec(version)?.[1] ?? Number.NaN);
  if (Number.isInteger(major) && major >= MINIMUM_NODE_MAJOR) return null;
  return `svc: Node.js ${MINIMUM_NODE_MAJOR} or later is required (22, 24 and 26 are supported); this is Node.js ${version}`;
}
