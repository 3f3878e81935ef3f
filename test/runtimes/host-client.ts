/** The test's side of `host.ts`: its control routes, and deliveries over real HTTP. */
import { sendOverHttp } from '../conformance/http-client.js';
import type { ConformanceRequest, ConformanceResponse } from '../conformance/suite.js';
import type { HostMount, Observations, RuntimeInfo, SetupRequest } from './host.js';

/** Where a runtime's host listens (known once the test file's `beforeAll` ran). */
export interface RemoteHost {
  baseUrl: string;
}

/** Calls a control route of the host and returns its JSON answer; a non-2xx answer throws. */
export async function control<T>(
  host: RemoteHost,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${host.baseUrl}${path}`, {
    method,
    ...(body === undefined
      ? {}
      : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** Which runtime serves the host. */
export const runtimeInfo = (host: RemoteHost): Promise<RuntimeInfo> =>
  control<RuntimeInfo>(host, 'GET', '/_runtime');

/** A receiver set up in the host, and the ways to use and watch it. */
export interface HostedReceiver {
  /** Sends a delivery to the receiver on the given mount. */
  send(request: ConformanceRequest): Promise<ConformanceResponse>;
  /** What the handler observed so far. */
  calls(): Promise<Observations>;
  /** Lets gated handlers go on. */
  open(): Promise<Observations>;
  /** `receiver.drain()` in the host, then what the handler observed. */
  drain(): Promise<Observations>;
  /** `receiver.close()` in the host. */
  close(): Promise<Observations>;
}

/** Sets up a receiver named `name` in the host, reached on `mount` (see `HostMount`). */
export async function hostReceiver(
  host: RemoteHost,
  name: string,
  setup: SetupRequest,
  mount: HostMount,
): Promise<HostedReceiver> {
  await control(host, 'POST', `/_setup/${name}`, setup);
  const at = (area: string): string => `/${area}/${name}`;
  return {
    send: (request) => sendOverHttp(`${host.baseUrl}${at(mount)}`, request),
    calls: () => control<Observations>(host, 'GET', at('_calls')),
    open: () => control<Observations>(host, 'POST', at('_open')),
    drain: () => control<Observations>(host, 'POST', at('_drain')),
    close: () => control<Observations>(host, 'POST', at('_close')),
  };
}

/** Closes and forgets the receiver `name` in the host. */
export async function removeReceiver(host: RemoteHost, name: string): Promise<void> {
  await control(host, 'DELETE', `/_setup/${name}`);
}

/**
 * Reads the host's observations until `condition` holds: a wait for a state, polled every 10 ms,
 * that fails with the last observations after `timeoutMs`.
 */
export async function waitForCalls(
  read: () => Promise<Observations>,
  condition: (observations: Observations) => boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<Observations> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const observations = await read();
    if (condition(observations)) return observations;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(observations)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
