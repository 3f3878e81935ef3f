import type * as wire from '@churn-risk/core/wire';
import type { SandboxClock } from '../clock/clock.js';
import type { EventItem } from '../wire-types.js';
import { scoreUser, type ComputedRisk } from '../scoring/score-user.js';

/** Traits as stored: the merge of every `identify`. */
export type StoredTraits = Record<string, wire.Scalar | undefined>;

/** One event as stored. */
export interface StoredEvent {
  event: string;
  /** When it happened (its `timestamp`, else the time it was received), ms since the epoch. */
  at: number;
  properties?: Record<string, wire.Scalar | undefined>;
}

/** A user known to the sandbox. */
export interface UserRecord {
  userId: string;
  traits: StoredTraits;
  events: StoredEvent[];
  /** The rating computed at the last change of traits or events. */
  risk: ComputedRisk;
  /** The score after each change, oldest first, at most `MAX_SCORE_HISTORY` points. */
  history: ScorePoint[];
}

/** One point of a user's score history. */
export interface ScorePoint {
  /** When the score was computed, ms since the epoch. */
  at: number;
  score: number;
}

/** The score of a user before and after a change (`before` undefined for a new user). */
export interface ScoreChange {
  userId: string;
  before: number | undefined;
  after: ComputedRisk;
}

/** Events kept per user; older ones are dropped first. */
export const MAX_EVENTS_PER_USER = 10_000;

/** Score points kept per user (the dashboard's chart); older ones are dropped first. */
export const MAX_SCORE_HISTORY = 60;

/** The in-memory users of the sandbox. */
export interface UserStore {
  get(userId: string): UserRecord | undefined;
  all(): IterableIterator<UserRecord>;
  /** Merges traits (creating the user when unknown) and rescores. */
  identify(userId: string, traits: StoredTraits): ScoreChange;
  /** Records events (creating unknown users) and rescores each user touched, once. */
  track(items: readonly EventItem[]): ScoreChange[];
  /** Rescores every user relative to the clock's time (after time travel). */
  rescoreAll(): ScoreChange[];
}

/** Creates an empty user store that scores relative to `clock`. */
export function createUserStore(clock: SandboxClock): UserStore {
  const users = new Map<string, UserRecord>();

  const ensure = (userId: string): { user: UserRecord; before: number | undefined } => {
    const existing = users.get(userId);
    if (existing) return { user: existing, before: existing.risk.score };
    const user: UserRecord = {
      userId,
      traits: {},
      events: [],
      risk: scoreUser({ traits: {}, events: [] }, clock.now()),
      history: [],
    };
    users.set(userId, user);
    return { user, before: undefined };
  };

  const rescore = (user: UserRecord, before: number | undefined): ScoreChange => {
    const at = clock.now();
    user.risk = scoreUser(user, at);
    const last = user.history.at(-1);
    if (last?.at === at) last.score = user.risk.score;
    else user.history.push({ at, score: user.risk.score });
    if (user.history.length > MAX_SCORE_HISTORY) user.history.shift();
    return { userId: user.userId, before, after: user.risk };
  };

  return {
    get: (userId) => users.get(userId),
    all: () => users.values(),
    identify(userId, traits) {
      const { user, before } = ensure(userId);
      Object.assign(user.traits, traits);
      return rescore(user, before);
    },
    track(items) {
      const touched = new Map<UserRecord, number | undefined>();
      const now = clock.now();
      for (const item of items) {
        const { user, before } = ensure(item.userId);
        if (!touched.has(user)) touched.set(user, before);
        const at = item.timestamp === undefined ? now : Date.parse(item.timestamp);
        user.events.push({
          event: item.event,
          at,
          ...(item.properties && { properties: item.properties }),
        });
        if (user.events.length > MAX_EVENTS_PER_USER)
          user.events.splice(0, user.events.length - MAX_EVENTS_PER_USER);
      }
      return [...touched].map(([user, before]) => rescore(user, before));
    },
    rescoreAll: () => [...users.values()].map((user) => rescore(user, user.risk.score)),
  };
}
