// The process entry point. It checks the Node.js release before anything else is imported:
// static imports would load the SQLite driver first, and an unsupported release must get one
// line naming the release it needs, not a native crash.
import { nodeRefusal } from './process/runtime.js';

const refusal = nodeRefusal(process.versions.node);
if (refusal !== null) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
await import('./cli/command-line.js');
