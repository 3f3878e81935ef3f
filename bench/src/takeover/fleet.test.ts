import { describe, expect, it } from 'vitest';
import { machineClock } from '../lib/clock.js';
import { runKills, seededRandom, type Fleet, type Member, type Start } from './fleet.js';

/**
 * A fleet with no store: the acceptor's alert starts in the first live member at once, and a kill
 * makes the next live member start it (the takeover), so that the trial loop itself is checked.
 */
function fakeFleet(): Fleet & { added: number; killed: Member[]; released: string[] } {
  const starts: Start[] = [];
  const live: Member[] = [];
  const held = new Map<string, Member>();
  const state = { added: 0, killed: [] as Member[], released: [] as string[] };
  let alerts = 0;
  return {
    starts,
    get added() {
      return state.added;
    },
    killed: state.killed,
    released: state.released,
    add() {
      const member: Member = {
        name: `fake ${String(++state.added)}`,
        accept() {
          const userId = `user_${String(++alerts)}`;
          const taker = live[0] as Member;
          held.set(userId, taker);
          starts.push({ userId, at: machineClock(), member: taker });
          return Promise.resolve(userId);
        },
        release(userId) {
          state.released.push(userId);
        },
        kill() {
          live.splice(live.indexOf(member), 1);
          state.killed.push(member);
          for (const [userId, holder] of held) {
            if (holder !== member) continue;
            const next = live[0] as Member;
            held.set(userId, next);
            setTimeout(() => {
              starts.push({ userId, at: machineClock(), member: next });
            }, 1);
          }
          return Promise.resolve();
        },
      };
      live.push(member);
      return Promise.resolve(member);
    },
    close: () => Promise.resolve(),
  };
}

describe('runKills', () => {
  it('kills the taker of each alert, times the other consumer, and replaces the killed one', async () => {
    const fleet = fakeFleet();
    const trials = await runKills(
      fleet,
      { survivors: 3, kills: 4, leaseMs: 10, reclaimIntervalMs: 10, random: seededRandom(7) },
      () => undefined,
    );
    expect(trials).toHaveLength(4);
    expect(fleet.added).toBe(3 + 1 + 4); // the fleet, then one replacement per kill
    expect(fleet.killed).toHaveLength(4);
    expect(new Set(fleet.killed).size).toBe(4); // a killed consumer is never used again
    expect(fleet.released).toEqual(['user_1', 'user_2', 'user_3', 'user_4']);
    for (const trial of trials) {
      expect(trial.takeoverMs).toBeGreaterThanOrEqual(0);
      expect(trial.startToStartMs).toBeGreaterThanOrEqual(trial.takeoverMs);
      expect(trial.sentAfterMs).toBeLessThan(10);
      expect(trial.killAfterMs).toBeLessThan(10);
    }
  });
});

describe('seededRandom', () => {
  it('replays the same points for the same seed, in [0, 1)', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    const drawn = Array.from({ length: 100 }, () => a());
    expect(Array.from({ length: 100 }, () => b())).toEqual(drawn);
    expect(drawn.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(new Set(drawn).size).toBe(100);
    expect(seededRandom(43)()).not.toBe(drawn[0]);
  });
});
