import { describe, expect, it } from 'vitest';
import { createNodeHandler } from './node-request-web.js';

// `#node-request` where the `node` export condition does not apply (workerd, edge runtimes,
// browsers); create-worker.workerd.test.ts checks that a Worker bundle resolves to this file.
describe('receiver.node without the node condition', () => {
  it('rejects with a TypeError that names receiver.fetch, and writes nothing', async () => {
    const writes: unknown[] = [];
    const res = new Proxy(
      {},
      {
        get:
          (_t, name) =>
          (...args: unknown[]) =>
            writes.push([name, args]),
      },
    );
    const handler = createNodeHandler();
    const call = handler({} as never, res as never);
    await expect(call).rejects.toThrow(TypeError);
    await expect(call).rejects.toThrow(/receiver\.fetch\(request\)/);
    expect(writes).toEqual([]);
  });
});
