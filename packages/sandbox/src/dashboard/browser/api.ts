import type { DashboardState } from '../dashboard-state.js';

/** A refused call: the API's error code and message (shown to the user as text). */
export class ApiFailure extends Error {
  override readonly name = 'ApiFailure';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A fresh snapshot and its ETag. */
export interface StateUpdate {
  etag: string;
  state: DashboardState;
}

/** The calls the dashboard makes; the key goes in `Authorization`, never in a URL or a cookie. */
export interface DashboardApi {
  /** The state, or `undefined` when it still has `etag` (304). */
  state(etag: string | undefined): Promise<StateUpdate | undefined>;
  replay(deliveryId: string): Promise<{ id: string }>;
  testAlert(userId: string): Promise<{ id: string }>;
  advanceClock(ms: number): Promise<{ now: string }>;
}

async function failure(response: Response): Promise<ApiFailure> {
  const body = (await response.json().catch(() => undefined)) as
    { error?: { code?: string; message?: string } } | undefined;
  const code = body?.error?.code ?? 'HTTP_ERROR';
  return new ApiFailure(response.status, code, body?.error?.message ?? `HTTP ${response.status}`);
}

/** Creates the API of a dashboard opened with `key`. */
export function createApi(key: string): DashboardApi {
  const call = async (method: string, path: string, extra: HeadersInit = {}, body?: unknown) => {
    const headers = new Headers(extra);
    headers.set('authorization', `Bearer ${key}`);
    headers.set('accept', 'application/json');
    if (body !== undefined) headers.set('content-type', 'application/json');
    return fetch(path, {
      method,
      headers,
      cache: 'no-store',
      credentials: 'omit',
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  };
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const response = await call('POST', path, {}, body);
    if (!response.ok) throw await failure(response);
    return (await response.json()) as T;
  };
  return {
    async state(etag) {
      const response = await call(
        'GET',
        '/v1/sandbox/state',
        etag ? { 'if-none-match': etag } : {},
      );
      if (response.status === 304) return undefined;
      if (!response.ok) throw await failure(response);
      const state = (await response.json()) as DashboardState;
      return { etag: response.headers.get('etag') ?? '', state };
    },
    replay: (id) => post(`/v1/deliveries/${encodeURIComponent(id)}/replay`, {}),
    testAlert: (userId) => post('/v1/sandbox/test-alert', { userId }),
    advanceClock: (ms) => post('/v1/sandbox/clock', { advanceMs: ms }),
  };
}
