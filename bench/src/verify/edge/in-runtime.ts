/**
 * Runs inside Bun, Deno or Node (`run-verify-runtimes.ts` starts it, unbundled, so that core's
 * `#hmac` import is resolved by the runtime itself): measures the edge candidates and prints one
 * JSON line. Argument: the settings as JSON.
 */
import type { HmacBackend } from '../../../../packages/core/src/signature/hmac-backend.js';
import {
  edgeAlertBody,
  edgeCandidates,
  edgeDelivery,
  coreBackendName,
  nobleBackend,
} from './edge-candidates.js';
import { edgeRounds, type EdgeResult } from './edge-rounds.js';

interface Settings {
  sizes: number[];
  rounds: number;
  batchMs: number;
}

const host = globalThis as unknown as {
  process?: { argv: string[]; versions: Record<string, string | undefined>; version: string };
  Deno?: { version: { deno: string } };
};
const settings = JSON.parse(host.process?.argv.at(-1) ?? '{}') as Settings;

function runtimeName(): string {
  if (host.Deno !== undefined) return `Deno ${host.Deno.version.deno}`;
  const bun = host.process?.versions.bun;
  if (bun !== undefined) return `Bun ${bun}`;
  return `Node ${host.process?.version ?? '?'}`;
}

let nodeBackend: HmacBackend | undefined;
try {
  nodeBackend = (await import('../../../../packages/core/src/signature/hmac-node.js')).backend;
} catch {
  nodeBackend = undefined; // no node:crypto here
}

const bySize: Record<string, EdgeResult[]> = {};
for (const size of settings.sizes) {
  const candidates = await edgeCandidates(size, nodeBackend);
  const byName = new Map(candidates.map((c) => [c.name, c]));
  bySize[String(edgeAlertBody(size).length)] = await edgeRounds(
    candidates.map((c) => c.name),
    async (name, n) => {
      const start = performance.now();
      await byName.get(name)?.batch(n);
      return performance.now() - start;
    },
    settings,
  );
}
const known = nodeBackend === undefined ? [nobleBackend] : [nobleBackend, nodeBackend];
console.log(
  JSON.stringify({
    runtime: runtimeName(),
    nodeCrypto: nodeBackend !== undefined,
    coreBackend: coreBackendName(known, edgeDelivery(edgeAlertBody(256))),
    bySize,
  }),
);
