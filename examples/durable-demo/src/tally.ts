import { alertIdentity } from '@churn-risk/core';
import type { DeliveryRecord } from '@churn-risk/sandbox';
import { readRecords } from './idempotent-store.js';

/** What the worker lines say: `handling <id>` per handler run. */
export interface Runs {
  /** Handler runs. */
  total: number;
  /** Alerts with at least one run. */
  alerts: number;
  /** Runs of an alert after its first one (all of them follow the crash). */
  reruns: number;
  /** Runs that found their alert already recorded and did nothing. */
  noops: number;
  /** Alerts whose run started but had not finished (what a kill leaves behind). */
  inFlight: number;
}

/** Counts the handler runs in the stdout lines of the worker processes. */
export function countRuns(lines: readonly string[]): Runs {
  const started = new Map<string, number>();
  const finished = new Set<string>();
  let noops = 0;
  for (const line of lines) {
    const match = /^(handling|handled|already handled) (\S+)/.exec(line);
    const [, word, id] = match ?? [];
    if (word === undefined || id === undefined) continue;
    if (word === 'handling') started.set(id, (started.get(id) ?? 0) + 1);
    else finished.add(id);
    if (word === 'already handled') noops++;
  }
  const total = [...started.values()].reduce((sum, runs) => sum + runs, 0);
  const inFlight = [...started.keys()].filter((id) => !finished.has(id)).length;
  return { total, alerts: started.size, reruns: total - started.size, noops, inFlight };
}

/** The outcome: what the sandbox delivered against what the worker's store holds. */
export interface Tally {
  delivered: string[];
  /** Delivered alerts with no record in the store. */
  missing: string[];
  /** Records in the store. */
  records: number;
  /** Alerts recorded more than once (must be 0). */
  duplicates: number;
}

/** Compares the sandbox's delivered alerts with the worker's idempotent store. */
export function tally(deliveries: readonly DeliveryRecord[], storeFile: string): Tally {
  const delivered = deliveries
    .filter((record) => record.state === 'delivered')
    .map((record) => alertIdentity(record.alert));
  const records = readRecords(storeFile).map((record) => record.id);
  const stored = new Set(records);
  return {
    delivered,
    missing: delivered.filter((id) => !stored.has(id)),
    records: records.length,
    duplicates: records.length - stored.size,
  };
}
