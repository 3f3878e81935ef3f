import type { TryLease } from '../queue-port/try-types.js';
import { supersededBy } from './superseded.js';
import { neverAborting } from './try-protocol.js';
import type { Job } from './work-queue.js';

// The in-memory queue's order per user (`order: 'per-user'`): each user's alerts wait in a line
// of their own, sorted by `triggeredAt`, and the work queue holds at most one turn per user. A
// turn takes the user's oldest waiting alert when it starts (not when it was queued: an older
// alert that arrives meanwhile still goes first) and runs it to the end, retries included; then
// the user's next turn is queued. Alerts of different users still share the slots.

/** An alert in a user's line: its time, and the work queue's job that runs it. */
export interface LineAlert extends Job {
  /** The alert's user. */
  readonly user: string;
  /** Its `triggeredAt`, in ms since the epoch. */
  readonly at: number;
  /** Its place in the order of acceptance: breaks a tie of `at`. */
  readonly sequence: number;
}

/** One user's line. */
interface Line {
  /** Waiting alerts, oldest `at` first. */
  readonly waiting: LineAlert[];
  /** A turn of the user is queued or running. */
  busy: boolean;
}

/** The newest time accepted for a user, kept until `until`. */
interface Newest {
  at: number;
  until: number;
}

/** What the lines hand their turns to: the work queue. */
export interface TurnQueue {
  tryPush(job: Job): boolean;
}

/** A try's lease in the in-memory queue: nothing to lose, and the superseded mark. */
class LineLease implements TryLease {
  readonly stalls = 0;
  readonly supersededBy: string | undefined;

  constructor(supersededBy: string | undefined) {
    this.supersededBy = supersededBy;
  }

  get signal(): AbortSignal {
    return neverAborting();
  }
}

/**
 * A user's turn in the work queue: when it starts, it runs the user's oldest waiting alert.
 * `ready` and `startWhenReady` belong to the work queue.
 */
class Turn implements Job {
  ready = false;
  startWhenReady = false;
  readonly #lines: UserLines;
  readonly #line: Line;
  #alert: LineAlert | undefined;

  constructor(lines: UserLines, line: Line) {
    this.#lines = lines;
    this.#line = line;
  }

  run(): unknown {
    const alert = (this.#alert = this.#line.waiting.shift());
    if (alert === undefined) return undefined;
    this.#lines.waiting--;
    return alert.run();
  }

  finished(): void {
    this.#alert?.finished();
    this.#lines.turnEnded(this.#line, this.#alert?.user);
  }
}

/**
 * The lines of the in-memory queue in order per user, and the newest `triggeredAt` accepted per
 * user (kept `ttlMs` after each acceptance; at most `maxUsers` users, the least recent dropped).
 */
export class UserLines {
  /** Alerts waiting in every line, for `queued`. */
  waiting = 0;
  readonly #lines = new Map<string, Line>();
  readonly #newest = new Map<string, Newest>();
  readonly #queue: TurnQueue;
  readonly #ttlMs: number;
  readonly #maxUsers: number;
  readonly #now: () => number;
  #sequence = 0;

  /** `queue` runs the turns; it must never refuse one (it is made without a bound of its own). */
  constructor(queue: TurnQueue, ttlMs: number, maxUsers: number, now: () => number = Date.now) {
    this.#queue = queue;
    this.#ttlMs = ttlMs;
    this.#maxUsers = maxUsers;
    this.#now = now;
  }

  /** The next place in the order of acceptance. */
  sequence(): number {
    return ++this.#sequence;
  }

  /** Records `at` as accepted for `user` (the newest it has seen, for `lease`). */
  accepted(user: string, at: number): void {
    const now = this.#now();
    const newest = this.#newest.get(user);
    const kept = newest !== undefined && newest.until > now ? Math.max(newest.at, at) : at;
    this.#newest.delete(user); // re-inserted last: the map's order is the order of use
    this.#newest.set(user, { at: kept, until: now + this.#ttlMs });
    if (this.#newest.size > this.#maxUsers) {
      const oldest = this.#newest.keys().next();
      if (oldest.done !== true) this.#newest.delete(oldest.value);
    }
  }

  /** The lease of a try of `alert` starting now: superseded when a newer one was accepted. */
  lease(user: string, alert: { readonly triggeredAt: string }): TryLease {
    const newest = this.#newest.get(user);
    const at = newest !== undefined && newest.until > this.#now() ? newest.at : undefined;
    return new LineLease(supersededBy(alert, at));
  }

  /**
   * Puts `alert` in its user's line, and queues a turn of the user when none is queued or
   * running. False when the work queue refused the turn (nothing kept).
   */
  push(alert: LineAlert): boolean {
    let line = this.#lines.get(alert.user);
    if (line === undefined) {
      line = { waiting: [], busy: false };
      this.#lines.set(alert.user, line);
    }
    if (!line.busy) {
      if (!this.#queue.tryPush(new Turn(this, line))) {
        if (line.waiting.length === 0) this.#lines.delete(alert.user);
        return false;
      }
      line.busy = true;
    }
    insertSorted(line.waiting, alert);
    this.waiting++;
    return true;
  }

  /** A turn ended: the user's next turn is queued, or the line is dropped when empty. */
  turnEnded(line: Line, user: string | undefined): void {
    line.busy = false;
    if (line.waiting.length === 0) {
      if (user !== undefined && this.#lines.get(user) === line) this.#lines.delete(user);
      return;
    }
    // The work queue was made without a bound of its own in this mode: a turn is never refused.
    line.busy = this.#queue.tryPush(new Turn(this, line));
  }

  /**
   * For an alert that must start in its own turn (a platform's `waitUntil`): whether it may start
   * now (no alert of its user runs, and none older waits); if so, its user is held by it.
   */
  tryStart(alert: LineAlert): boolean {
    const line = this.#lines.get(alert.user);
    if (line === undefined || line.busy || line.waiting[0] !== alert) return false;
    line.waiting.shift();
    this.waiting--;
    line.busy = true;
    return true;
  }

  /** For an own-turn alert: puts it in its user's line without queueing a turn. */
  wait(alert: LineAlert): void {
    let line = this.#lines.get(alert.user);
    if (line === undefined) {
      line = { waiting: [], busy: false };
      this.#lines.set(alert.user, line);
    }
    insertSorted(line.waiting, alert);
    this.waiting++;
  }

  /** For an own-turn alert the work queue refused: out of its line. */
  drop(alert: LineAlert): void {
    const line = this.#lines.get(alert.user);
    const index = line?.waiting.indexOf(alert) ?? -1;
    if (line === undefined || index < 0) return;
    line.waiting.splice(index, 1);
    this.waiting--;
    if (line.waiting.length === 0 && !line.busy) this.#lines.delete(alert.user);
  }

  /** For an own-turn alert that ran: releases its user. */
  ended(alert: LineAlert): void {
    const line = this.#lines.get(alert.user);
    if (line === undefined) return;
    line.busy = false;
    if (line.waiting.length === 0) this.#lines.delete(alert.user);
  }
}

/** Inserts `alert` into `line`, oldest `at` first, after alerts of the same `at`. */
function insertSorted(line: LineAlert[], alert: LineAlert): void {
  let index = line.length;
  while (index > 0) {
    const before = line[index - 1] as LineAlert;
    if (before.at < alert.at || (before.at === alert.at && before.sequence < alert.sequence)) {
      break;
    }
    index--;
  }
  line.splice(index, 0, alert);
}
