/**
 * The consuming processes of one `pnpm bench takeover` configuration, and the trial loop that kills
 * them: a `Fleet` adds consumers and reports every handler start; `runKills` sends one alert at a
 * time, kills the consumer whose handler started it at a random moment, times the moment another
 * consumer's handler starts it, and adds a consumer in place of the killed one.
 */
import { machineClock } from '../lib/clock.js';

/** A handler start: which alert, when (`machineClock()`, ms), in which consumer. */
export interface Start {
  userId: string;
  at: number;
  member: Member;
}

/** One consuming process (or, for the memory store, one queue in this process). */
export interface Member {
  readonly name: string;
  /** Accepts one fresh signed alert through this consumer's receiver; resolves with its user id. */
  accept(): Promise<string>;
  /** Lets the held handler of `userId` return. */
  release(userId: string): void;
  /** SIGKILL (or, in process, the taker stops answering: no renewal, no verdict, no take). */
  kill(): Promise<void>;
}

export interface Fleet {
  /** Starts one more consumer, resolved once it takes alerts. */
  add(): Promise<Member>;
  /** Every handler start so far, in order. */
  readonly starts: readonly Start[];
  /** Stops every consumer that is left. */
  close(): Promise<void>;
}

export interface KillSettings {
  /** Consumers left after each kill (one more runs before it). */
  survivors: number;
  kills: number;
  leaseMs: number;
  reclaimIntervalMs: number;
  random: () => number;
}

export interface Trial {
  /** From the SIGKILL to another consumer's handler start, ms. */
  takeoverMs: number;
  /** From the killed handler's start to the other's, ms. */
  startToStartMs: number;
  /** The wait before the alert was sent (a random point of the consumers' reclaim cycles), ms. */
  sentAfterMs: number;
  /** From the killed handler's start to the kill (a random point of the lease's renewals), ms. */
  killAfterMs: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(find: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what} within ${String(timeoutMs / 1000)} s`);
    await sleep(5);
  }
}

/** `settings.kills` kills, one alert each, with `settings.survivors + 1` consumers before each. */
export async function runKills(
  fleet: Fleet,
  settings: KillSettings,
  log: (message: string) => void,
): Promise<Trial[]> {
  const { survivors, kills, leaseMs, reclaimIntervalMs, random } = settings;
  const bound = leaseMs + reclaimIntervalMs;
  const live: Member[] = [];
  for (let n = 0; n <= survivors; n++) live.push(await fleet.add());
  const trials: Trial[] = [];
  try {
    for (let i = 0; i < kills; i++) {
      const sentAfterMs = Math.floor(random() * reclaimIntervalMs);
      await sleep(sentAfterMs);
      const acceptor = live[Math.floor(random() * live.length)] as Member;
      const userId = await acceptor.accept();
      const first = await waitFor(
        () => fleet.starts.find((s) => s.userId === userId),
        30_000,
        `no handler started alert ${userId}`,
      );
      const killAfterMs = Math.floor(random() * leaseMs);
      await sleep(Math.max(0, first.at + killAfterMs - machineClock()));
      const killedAt = machineClock();
      await first.member.kill();
      live.splice(live.indexOf(first.member), 1);
      const second = await waitFor(
        () => fleet.starts.find((s) => s.userId === userId && s.member !== first.member),
        bound + 60_000,
        `no other consumer started alert ${userId}`,
      );
      second.member.release(userId);
      const trial = {
        takeoverMs: second.at - killedAt,
        startToStartMs: second.at - first.at,
        sentAfterMs,
        killAfterMs,
      };
      trials.push(trial);
      log(
        `kill ${String(i + 1)}/${String(kills)}: taken over after ${(trial.takeoverMs / 1000).toFixed(2)} s`,
      );
      live.push(await fleet.add());
    }
  } finally {
    await fleet.close();
  }
  return trials;
}

/** A small seeded generator (mulberry32), so that a run's random points can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
