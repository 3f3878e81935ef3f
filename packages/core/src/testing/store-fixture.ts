// The frame of every store case: two store instances on one back end (two processes), and the
// steps the cases share (accept some alerts, take one, take one over once its lease expired).
import type { AlertStore } from '../processing/durable/alert-store.js';
import type { AlertRecord } from '../queue-port/alert-queue.js';
import type { Receiver } from '../receiver/types.js';
import { eventually, queuedAlert, same, token, type ContractTestApi } from './support.js';

/** What `storeContract` runs against. */
export interface StoreContractOptions {
  /** The back end's name, in the suite's title. */
  name: string;
  /**
   * A store instance for the case named `scope`. Every case makes two: instances made with the
   * same `scope` must share their data, as two processes on one Redis or one database do; other
   * scopes never see each other's alerts. The contract closes every store it made.
   */
  create(scope: string): AlertStore | Promise<AlertStore>;
  /**
   * A store whose back end does not answer (a Redis URL or a database port where nothing
   * listens): its `health()` must say so.
   */
  unreachable(): AlertStore | Promise<AlertStore>;
  /**
   * The lease the cases take alerts with, in ms. A store whose lease length is fixed when it is
   * made (BullMQ's `lockDuration`) must be made with it. Default 300.
   */
  leaseMs?: number;
  /** Milliseconds each case may take. Default 30,000. */
  timeoutMs?: number;
}

/** What a store case runs on: two instances made with the case's scope. */
export interface StoreFixture {
  a: AlertStore;
  b: AlertStore;
  scope: string;
  /** Receivers made in the case (closed after it, with their queues and stores). */
  receivers: Receiver[];
}

/** An alert a take handed out, with the token it was taken with. */
export type TakenAlert = AlertRecord<'taken'> & { token: string };

/** What the store case groups register and run their cases with. */
export interface StoreCaseKit {
  /** Registers the case `name`: `body` runs on a fresh fixture, closed after it. */
  run: (name: string, body: (fixture: StoreFixture) => Promise<void>) => void;
  /** Accepts `count` fresh alerts into `store`. */
  accepted: (store: AlertStore, count: number) => Promise<AlertRecord<'accepted'>[]>;
  /** Takes from `store` until it hands something out. */
  takeOne: (store: AlertStore, who: string) => Promise<TakenAlert>;
  /**
   * Takes an alert whose lease expired from `store`, reclaiming first where the store reclaims on
   * demand (else its engine's own timer puts the alert back).
   */
  takeOver: (store: AlertStore, who: string, lease?: number) => Promise<TakenAlert>;
  /** The lease the cases take alerts with, in ms. */
  leaseMs: number;
  /** Milliseconds each case may take. */
  timeout: number;
}

/** The kit of one `storeContract` suite: its cases share the scope counter. */
export function storeCaseKit(test: ContractTestApi, options: StoreContractOptions): StoreCaseKit {
  const timeout = options.timeoutMs ?? 30_000;
  const leaseMs = options.leaseMs ?? 300;
  let scopes = 0;

  const run = (name: string, body: (fixture: StoreFixture) => Promise<void>): void => {
    test.it(
      name,
      async () => {
        const scope = `case${String(++scopes)}_${Date.now().toString(36)}`;
        const a = await options.create(scope);
        const b = await options.create(scope);
        const fixture: StoreFixture = { a, b, scope, receivers: [] };
        try {
          await body(fixture);
        } finally {
          await Promise.all(fixture.receivers.map((r) => r.close({ timeoutMs: timeout })));
          await Promise.allSettled([a.close(), b.close()]);
        }
      },
      timeout,
    );
  };
  const accepted = async (store: AlertStore, count: number): Promise<AlertRecord<'accepted'>[]> => {
    const alerts = Array.from({ length: count }, queuedAlert);
    for (const alert of alerts) {
      same(await store.accept(alert, { dedupeTtlMs: 3_600_000 }), 'accepted', 'accept');
    }
    return alerts;
  };
  const takeOne = (store: AlertStore, who: string): Promise<TakenAlert> =>
    eventually(`${who} takes an alert`, timeout / 2, async () => {
      const t = token(who);
      const taken = await store.take({ token: t, leaseMs });
      return taken === undefined ? undefined : { ...taken, token: t };
    });
  const takeOver = (store: AlertStore, who: string, lease = leaseMs): Promise<TakenAlert> =>
    eventually('the alert is taken over', timeout / 2, async () => {
      await store.reclaimExpired?.();
      const t = token(who);
      const taken = await store.take({ token: t, leaseMs: lease });
      return taken === undefined ? undefined : { ...taken, token: t };
    });

  return { run, accepted, takeOne, takeOver, leaseMs, timeout };
}
