// The suite imports `globSync` from `fs` (Node 22), for its `tier-check` command, which Perch
// does not run; on Node 20 (Perch's minimum) the import alone stops it from loading. Loaded
// with `node --import`, this gives the suite's module an `fs` with a `globSync` that says so.
// Nothing changes on Node 22 and newer.
import fs from 'node:fs';
import { register } from 'node:module';

const SHIM =
  'data:text/javascript,' +
  encodeURIComponent(
    'import fs from "node:fs"; export * from "node:fs"; export default fs;' +
      'export function globSync() { throw new Error("this part of the conformance suite needs Node.js 22"); }',
  );

// The resolve hook (this module again, on the loader thread).
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}

if (!('globSync' in fs) && process.env.PERCH_NODE20_HOOKS !== 'loaded') {
  process.env.PERCH_NODE20_HOOKS = 'loaded';
  register(import.meta.url);
}
