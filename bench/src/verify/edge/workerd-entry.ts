/**
 * The edge candidates as a module worker for workerd (bundled with wrangler's export conditions,
 * no nodejs_compat). `GET /info?size=N` lists the candidates and core's back end there;
 * `GET /run?size=N&c=<name>&n=<count>` runs one batch. workerd's clock stands still while a
 * request computes, so the batches are timed from outside (`run-verify-runtimes.ts`).
 */
import {
  coreBackendName,
  edgeAlertBody,
  edgeCandidates,
  edgeDelivery,
  nobleBackend,
  type EdgeCandidate,
} from './edge-candidates.js';

const bySize = new Map<number, Promise<Map<string, EdgeCandidate>>>();

function candidatesFor(size: number): Promise<Map<string, EdgeCandidate>> {
  let ready = bySize.get(size);
  if (ready === undefined) {
    ready = edgeCandidates(size, undefined).then((list) => new Map(list.map((c) => [c.name, c])));
    bySize.set(size, ready);
  }
  return ready;
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const size = Number(url.searchParams.get('size'));
    const candidates = await candidatesFor(size);
    if (url.pathname === '/info') {
      return Response.json({
        names: [...candidates.keys()],
        bytes: edgeAlertBody(size).length,
        nodeCrypto: false,
        coreBackend: coreBackendName([nobleBackend], edgeDelivery(edgeAlertBody(size))),
      });
    }
    const candidate = candidates.get(url.searchParams.get('c') ?? '');
    if (candidate === undefined) return new Response('unknown candidate', { status: 404 });
    await candidate.batch(Number(url.searchParams.get('n')));
    return new Response('ok');
  },
};
