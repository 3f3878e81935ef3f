import { register } from 'node:module';
import type * as VerifyModule from '../../../packages/core/src/signature/verify.js';
import type * as HmacWebModule from '../../../packages/core/src/signature/hmac-web.js';

const CORE_SIGNATURE = new URL('../../../packages/core/src/signature/', import.meta.url);
/** The query marks the second copy of verify.ts, whose `#hmac` must be the web back end. */
const QUERY = 'hmac=web-bench';

let registered = false;

/**
 * Our real `createVerifier` (packages/core/src/signature/verify.ts, unchanged) bound to the
 * @noble/hashes back end. Under Node the package's `#hmac` import always picks node:crypto (the
 * `node` condition is always on), so a tiny resolve hook loads a second copy of verify.ts (same
 * file, URL with a query) and resolves that copy's `#hmac` to hmac-web.ts. Everything else
 * verify.ts imports is the ordinary shared module.
 */
export async function loadNobleVerifier(): Promise<{
  createVerifier: typeof VerifyModule.createVerifier;
  backend: typeof HmacWebModule.backend;
}> {
  const webUrl = new URL('hmac-web.ts', CORE_SIGNATURE).href;
  if (!registered) {
    const hook = [
      'export async function resolve(specifier, context, next) {',
      `  if (specifier === '#hmac' && (context.parentURL ?? '').includes(${JSON.stringify(QUERY)})) {`,
      `    return next(${JSON.stringify(webUrl)}, context);`,
      '  }',
      '  return next(specifier, context);',
      '}',
    ].join('\n');
    register(`data:text/javascript,${encodeURIComponent(hook)}`);
    registered = true;
  }
  const verify = (await import(
    `${new URL('verify.ts', CORE_SIGNATURE).href}?${QUERY}`
  )) as typeof VerifyModule;
  const web = (await import(webUrl)) as typeof HmacWebModule;
  return { createVerifier: verify.createVerifier, backend: web.backend };
}

/**
 * Proves that `verifier` computes its HMAC with `backend` (counts calls through a temporary wrap):
 * guards against measuring node:crypto twice if module resolution ever changes.
 */
export function assertUsesBackend(backend: typeof HmacWebModule.backend, run: () => void): void {
  const original = backend.matchesAny;
  let calls = 0;
  const mutable = backend as { matchesAny: typeof original };
  mutable.matchesAny = (key, parts, candidates) => {
    calls += 1;
    return original.call(backend, key, parts, candidates);
  };
  try {
    run();
  } finally {
    mutable.matchesAny = original;
  }
  if (calls === 0) throw new Error(`the verifier did not use the ${backend.name} back end`);
}
