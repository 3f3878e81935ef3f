import type { UserOrderKey } from '@churn-risk/core/store';
import { createHash, randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import { TO_WAIT } from './bull-wait.js';
import type { RedisClient } from './connection.js';

// Order per user (`TakeOptions.perUser`) on keys of our own, next to BullMQ's. BullMQ has no
// groups, so a take still goes through BullMQ (`getNextJob`, a completion's `fetchNext`), and a
// script on these keys decides, atomically, whether the job it handed out is its user's turn:
//
// - `<prefix>:order:line:<user>`: the user's line, a sorted set of its unfinished jobs (waiting,
//   parked, delayed for a retry, active) scored by the alert's `triggeredAt` in ms. Equal times
//   sort by job id, and an ordered alert's job id starts with its acceptance time, so the first
//   accepted goes first. Written with the job, in the MULTI of the accept. The alert that holds
//   the user, from its take until it completes or fails for good (a retry's delay and a takeover
//   keep it), is scored -1: first of the line whatever comes later.
// - `<prefix>:order:newest:<user>`: the newest `triggeredAt` accepted for the user, kept
//   `dedupeTtlMs` after each acceptance (as the identities are).
// - `<prefix>:order:parks` (hash: job id → how often it was parked) and `<prefix>:order:parked`
//   (set: the jobs parked now).
// - `<prefix>:order:done`: the alerts a completion went on from (below), counted as completed.
//
// Only the first of a line waits in BullMQ's wait list: an alert is accepted parked (BullMQ's
// delayed set, for at most `leaseMs`, so a lost move-up never strands it), and the accept's script
// moves it to wait at once when it is first of its line. A job handed out that is not its user's
// turn all the same (an older alert came in after it, a park's bound ran out) is parked again with
// the public `moveToDelayed`. The completion or failure of the alert that holds the user promotes
// the user's next parked job (`promote`), or, the usual case of a busy user, the completion goes
// on with it in the same lease (`CONTINUE`): one script per alert instead of BullMQ's completion
// and the order's check, up to `MAX_STREAK` alerts in a row. Every key carries the queue's prefix,
// so with a hash tag (`{churn-risk}`) they all land in the queue's slot of a Redis Cluster.
//
// The scripts use BullMQ's key layout where its API has no atomic equivalent, as BullMQ's own
// scripts do for a job of this store (no priority, no parent): the accept's move to wait is
// BullMQ's `promote` (the wait list, the marker, a `waiting` event); `CONTINUE` writes the job's
// `data` under its lock and deletes the parked job it went on with (its hash and logs, out of the
// delayed set), and the de-duplication key of that alert's identity then names the running job.
// Anything else only asks whether a job exists or is finished: a job removed with BullMQ's own
// tools neither holds its user nor blocks its line.

/** Whether `error` is Redis' answer to a script it does not know. */
export function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * A Lua script run by its SHA1, sent in full once Redis does not know it (NOSCRIPT). Each call is
 * written at once: holding the writes of one tick back to send them together (a cork) saved
 * system calls but made every consumer's take wait for the others, so that Node and Redis worked
 * in turns instead of side by side (`pnpm bench drain`, in order per user: 0.51x the drain
 * without order with the cork, 0.72x without it, in back-to-back runs).
 */
class Script {
  readonly sha: string;
  constructor(readonly text: string) {
    this.sha = createHash('sha1').update(text).digest('hex');
  }

  run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    return client.evalsha(this.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return client.eval(this.text, keys.length, ...keys, ...args);
    });
  }
}

/**
 * Run in the MULTI of the accept, right after BullMQ's add (which parked the job: delayed for at
 * most `leaseMs`): records the alert in its user's line and the user's newest time, only when the
 * add stored our job (a duplicate stores none). The first of its line is moved to wait at once, as
 * BullMQ's `promote` does it (`toWait` of bull-wait.ts, and the hash's `delay` set to 0); any
 * other stays parked behind the alert that holds its user, which moves it up when it ends (or goes
 * on with it: `CONTINUE`).
 * KEYS: job hash, line, newest, parked, delayed, wait, marker, meta, active, events.
 * ARGV: job id, at (ms), dedupeTtlMs, '1' to go first in the wait list. 1: recorded; 0: a
 * duplicate.
 */
const ACCEPT_IN_LINE = `${TO_WAIT}
local id = ARGV[1]
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], id)
local newest = tonumber(redis.call('GET', KEYS[3]))
if newest == nil or tonumber(ARGV[2]) > newest then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
else
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] ~= id then
  redis.call('SADD', KEYS[4], id)
  return 1
end
if redis.call('ZREM', KEYS[5], id) == 1 then
  local push = 'LPUSH'
  if ARGV[4] == '1' then push = 'RPUSH' end
  toWait(KEYS[6], push, KEYS[8], KEYS[9], KEYS[7], KEYS[10], id, 'delayed')
  redis.call('HSET', KEYS[1], 'delay', 0)
end
return 1`;

/**
 * The end of one alert and the per-user take of the next, in one step (either may be absent):
 *
 * - the end (after BullMQ's move to completed or failed went through): the job leaves its line,
 *   which releases its user when it held it, and the user's first job is answered when it is
 *   parked (to promote);
 * - the take of the job BullMQ just handed out (active, locked): whether it is its user's turn,
 *   and if so the hold (its score in the line becomes -1). Its turn: it is the first of its line,
 *   that is it holds its user already (a retry due again, a takeover), or the user is not held
 *   and it has the oldest time. Otherwise it is to be parked (counted here). A first of the line
 *   that is finished (completed, failed or gone: its end was not recorded here, its process died
 *   right after BullMQ's move) is dropped; a job missing from its line is put back in it.
 *
 * - and, for the job parked right before (the take of `moveToDelayed`'s `fetchNext`), whether
 *   it is first of its line by now (its holder ended meanwhile, and its promote came too soon).
 *
 * KEYS: BullMQ's completed and failed sets, parks, parked, the ending alert's line, the taken
 * job's line and newest, the line of the job parked before (keys of an absent part: any of the
 * queue's).
 * ARGV: ending job id (or ''), '1' when it was parked before its take, taken job id (or ''), its
 * at, the job key prefix, the job parked before (or '').
 * `{wake, took, parks, newest, again, more}`: `wake` the job id to promote, or ''; `took` 1 when
 * the job is taken and holds its user, 0 when it is to be parked, -1 when there was nothing to
 * take; `again` 1 when the job parked before is to be promoted; `more` how many other alerts its
 * user's line holds.
 */
const TURN = `
local again = 0
if ARGV[6] ~= '' and redis.call('ZRANGE', KEYS[8], 0, 0)[1] == ARGV[6] then again = 1 end
local wake = ''
local ended = ARGV[1]
if ended ~= '' then
  redis.call('ZREM', KEYS[5], ended)
  if ARGV[2] == '1' then redis.call('HDEL', KEYS[3], ended) end
  local top = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  if top[1] and tonumber(top[2]) >= 0 and redis.call('SISMEMBER', KEYS[4], top[1]) == 1 then
    wake = top[1]
  end
end
local id = ARGV[3]
if id == '' then return {wake, -1, 0, 0, again} end
local jobs = ARGV[5]
local healed = false
local held = false
while true do
  local top = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
  local first = top[1]
  if first == id then
    held = tonumber(top[2]) < 0
    break
  end
  if first and (redis.call('EXISTS', jobs .. first) == 0 or redis.call('ZSCORE', KEYS[1], first)
      or redis.call('ZSCORE', KEYS[2], first)) then
    redis.call('ZREM', KEYS[6], first)
  elseif not healed then
    healed = true
    redis.call('ZADD', KEYS[6], 'NX', ARGV[4], id)
  else
    redis.call('SADD', KEYS[4], id)
    redis.call('HINCRBY', KEYS[3], id, 1)
    return {wake, 0, 0, 0, again}
  end
end
if not held then redis.call('ZADD', KEYS[6], 'XX', -1, id) end
local parks = tonumber(redis.call('HGET', KEYS[3], id)) or 0
redis.call('SREM', KEYS[4], id)
local newest = tonumber(redis.call('GET', KEYS[7]))
if newest == nil or tonumber(ARGV[4]) > newest then newest = tonumber(ARGV[4]) end
return {wake, 1, parks, newest, again, redis.call('ZCARD', KEYS[6]) - 1}`;

/**
 * After a park: whether the parked job is its user's turn by now (the holder ended between the
 * decision and the move, and its promote found the job not delayed yet). KEYS: line. ARGV: job
 * id. 1: promote it.
 */
const TURN_AFTER_PARK = `
if redis.call('ZRANGE', KEYS[1], 0, 0)[1] == ARGV[1] then return 1 end
return 0`;

/**
 * The completion of the alert that holds its user, going on with the user's next alert in the
 * same lease: one script instead of BullMQ's completion and a take (the drain's hot path in order
 * per user). Only when the lease still holds the job's lock, the job holds its user (scored -1),
 * and the user's next alert is parked (never taken since, so no one else can take it while this
 * runs): that alert's data becomes the running job's (with `startsBefore`, the attempts the job
 * started before it, appended: the later of two equal JSON keys wins), its own job is deleted (the
 * delayed set, its hash and logs, as BullMQ removes a job; its identity's de-duplication key, kept
 * for `dedupeTtlMs`, now names the running job), and the lock is renewed for `leaseMs` (as
 * `extendLock` does, the job out of the stalled set). The completed alert leaves no completed
 * job: its identity's key keeps it a duplicate, and `<prefix>:order:done` (sorted set: the id of
 * the job that was deleted → when, in ms) counts it among the completed for `dedupeTtlMs`, as
 * BullMQ keeps a completed job. Otherwise nothing is written, and the completion goes BullMQ's way.
 * KEYS: the job's lock, job hash, line, newest, delayed, parks, parked, stalled, done.
 * ARGV: token, job id, the job key prefix, startsBefore, leaseMs, dedupeTtlMs.
 * `{0}`: the lock is not the token's; `{1}`: nothing to go on with; `{2, data, newest, more}`.
 */
const CONTINUE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {0} end
local id = ARGV[2]
local held = redis.call('ZSCORE', KEYS[3], id)
if not held or tonumber(held) >= 0 then return {1} end
local top = redis.call('ZRANGE', KEYS[3], 1, 1, 'WITHSCORES')
local nxt = top[1]
if not nxt or tonumber(top[2]) < 0 or not redis.call('ZSCORE', KEYS[5], nxt) then return {1} end
local key = ARGV[3] .. nxt
local fields = redis.call('HMGET', key, 'data', 'deid')
local data = fields[1]
if not data then return {1} end
redis.call('HSET', KEYS[2], 'data', string.sub(data, 1, -2) .. ',"startsBefore":' .. ARGV[4] .. '}')
redis.call('ZREM', KEYS[5], nxt)
redis.call('DEL', key, key .. ':logs')
redis.call('ZREM', KEYS[3], nxt)
redis.call('HDEL', KEYS[6], nxt, id)
redis.call('SREM', KEYS[7], nxt)
if fields[2] then
  local de = ARGV[3] .. 'de:' .. fields[2]
  if redis.call('GET', de) == nxt then redis.call('SET', de, id, 'KEEPTTL') end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[5])
redis.call('SREM', KEYS[8], id)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[9], now, nxt)
redis.call('ZREMRANGEBYSCORE', KEYS[9], '-inf', '(' .. (now - tonumber(ARGV[6])))
return {2, data, redis.call('GET', KEYS[4]) or '0', redis.call('ZCARD', KEYS[3]) - 1}`;

const acceptInLine = new Script(ACCEPT_IN_LINE);
const continueLine = new Script(CONTINUE);
const turn = new Script(TURN);
const turnAfterPark = new Script(TURN_AFTER_PARK);

/** A per-user take's answer when it is the alert's turn. */
export interface Turn {
  /** How often the job was parked: takes that were not tries. */
  parks: number;
  /** The newest `triggeredAt` accepted for the user, in ms (the alert's own at least). */
  newest: number;
  /** Whether the user's line held other alerts at the take (a completion may go on with one). */
  more: boolean;
}

let lastMs = 0;
let sameMs = 0;

/**
 * The job id of an alert accepted in order: its acceptance time first (then a counter within the
 * millisecond), so that in a line, where equal times sort by job id, the first accepted goes first.
 */
export function orderedJobId(): string {
  const now = Date.now();
  sameMs = now === lastMs ? sameMs + 1 : 0;
  lastMs = now;
  return `${now.toString(36).padStart(9, '0')}${sameMs.toString(36).padStart(4, '0')}-${randomUUID()}`;
}

/** BullMQ's keys of the queue that the order scripts read or write (`queue.keys`). */
export interface BullKeys {
  completed: string;
  failed: string;
  delayed: string;
  wait: string;
  marker: string;
  meta: string;
  active: string;
  events: string;
  stalled: string;
}

/** The order keys of one queue (`prefix`) and the scripts on them. */
export class UserOrder {
  readonly #base: string;
  readonly #bull: BullKeys;

  /** `prefix`: the store's; `keys`: BullMQ's keys of the queue. */
  constructor(prefix: string, keys: BullKeys) {
    this.#base = `${prefix}:order`;
    this.#bull = keys;
  }

  /** The key of `user`'s newest time. */
  newestKey(user: string): string {
    return `${this.#base}:newest:${user}`;
  }

  /** The alerts a completion went on from (`CONTINUE`), by when: completed, with no job kept. */
  get doneKey(): string {
    return `${this.#base}:done`;
  }

  /** The jobs parked now (not their user's turn), which BullMQ counts as delayed. */
  get parkedKey(): string {
    return `${this.#base}:parked`;
  }

  /** The key of `user`'s line (`retry` of a failed alert puts it back there). */
  lineKey(user: string): string {
    return `${this.#base}:line:${user}`;
  }

  /**
   * Queues, in the accept's MULTI right after BullMQ's add, the record of the alert's order (by
   * the script's SHA1: `acceptAlone` runs it when Redis answers NOSCRIPT).
   */
  queueAccept(
    multi: ChainableCommander,
    jobKey: string,
    jobId: string,
    order: UserOrderKey,
    dedupeTtlMs: number,
    first: boolean,
  ): void {
    multi.evalsha(
      acceptInLine.sha,
      10,
      ...this.#acceptKeys(jobKey, order),
      ...this.#acceptArgs(jobId, order, dedupeTtlMs, first),
    );
  }

  /**
   * The record of `queueAccept` on its own, for a MULTI whose script Redis did not know (its
   * script cache was just flushed or restarted): the job is stored by then, and the record follows.
   */
  async acceptAlone(
    client: RedisClient,
    jobKey: string,
    jobId: string,
    order: UserOrderKey,
    dedupeTtlMs: number,
    first: boolean,
  ): Promise<void> {
    await acceptInLine.run(
      client,
      this.#acceptKeys(jobKey, order),
      this.#acceptArgs(jobId, order, dedupeTtlMs, first),
    );
  }

  #acceptKeys(jobKey: string, order: UserOrderKey): string[] {
    const bull = this.#bull;
    return [
      jobKey,
      this.lineKey(order.user),
      this.newestKey(order.user),
      this.parkedKey,
      bull.delayed,
      bull.wait,
      bull.marker,
      bull.meta,
      bull.active,
      bull.events,
    ];
  }

  #acceptArgs(
    jobId: string,
    order: UserOrderKey,
    dedupeTtlMs: number,
    first: boolean,
  ): (string | number)[] {
    return [jobId, order.at, dedupeTtlMs, first ? '1' : ''];
  }

  /**
   * The completion of `jobId` (held by `token`), going on with its user's next alert when it is
   * parked (`CONTINUE`): `lost` when the lock is not the token's, `none` when there is nothing to
   * go on with (nothing written), else the next alert's data (now the job's, locked for `leaseMs`),
   * its user's newest time and whether the line holds more.
   */
  async continueLine(
    client: RedisClient,
    jobKeyPrefix: string,
    job: { id: string; order: UserOrderKey; lockToken: string; startsBefore: number },
    leaseMs: number,
    dedupeTtlMs: number,
  ): Promise<
    | { kind: 'lost' }
    | { kind: 'none' }
    | { kind: 'next'; data: string; newest: number; more: boolean }
  > {
    const jobKey = `${jobKeyPrefix}${job.id}`;
    const answer = (await continueLine.run(
      client,
      [
        `${jobKey}:lock`,
        jobKey,
        this.lineKey(job.order.user),
        this.newestKey(job.order.user),
        this.#bull.delayed,
        `${this.#base}:parks`,
        this.parkedKey,
        this.#bull.stalled,
        this.doneKey,
      ],
      [job.lockToken, job.id, jobKeyPrefix, job.startsBefore, leaseMs, dedupeTtlMs],
    )) as [number, string?, string?, number?];
    if (answer[0] === 0) return { kind: 'lost' };
    if (answer[0] === 1) return { kind: 'none' };
    return {
      kind: 'next',
      data: answer[1] ?? '',
      newest: Number(answer[2] ?? 0),
      more: (answer[3] ?? 0) > 0,
    };
  }

  /**
   * The end of `ended` (after BullMQ's move; `parked`: it was parked before its take) and the
   * per-user take of `taken` (the job BullMQ just handed out: if it is its user's turn, it holds
   * its user from now on), in one script, either may be absent. `wake`: the job id of a parked job
   * to promote; `turn`: the take's answer (undefined: park the job); `again`: whether
   * `parkedBefore`, the job parked right before, is its user's turn by now (promote it).
   */
  turn(
    client: RedisClient,
    jobKeyPrefix: string,
    ended: { id: string; order: UserOrderKey; parked: boolean } | undefined,
    taken: { id: string; order: UserOrderKey } | undefined,
    parkedBefore?: { id: string; order: UserOrderKey },
  ): Promise<{ wake: string | undefined; turn: Turn | undefined; again: boolean }> {
    const parks = `${this.#base}:parks`;
    return turn
      .run(
        client,
        [
          this.#bull.completed,
          this.#bull.failed,
          parks,
          this.parkedKey,
          ended === undefined ? parks : this.lineKey(ended.order.user),
          taken === undefined ? parks : this.lineKey(taken.order.user),
          taken === undefined ? parks : this.newestKey(taken.order.user),
          parkedBefore === undefined ? parks : this.lineKey(parkedBefore.order.user),
        ],
        [
          ended?.id ?? '',
          ended?.parked === true ? '1' : '',
          taken?.id ?? '',
          taken?.order.at ?? 0,
          jobKeyPrefix,
          parkedBefore?.id ?? '',
        ],
      )
      .then((answer) => {
        const [wake, took, parked, newest, again, more] = answer as [
          string,
          number,
          number,
          number,
          number,
          number,
        ];
        return {
          wake: wake === '' ? undefined : wake,
          turn: took === 1 ? { parks: parked, newest, more: more > 0 } : undefined,
          again: again === 1,
        };
      });
  }

  /** Whether a job just parked is its user's turn by now (then promote it). */
  async turnAfterPark(client: RedisClient, jobId: string, order: UserOrderKey): Promise<boolean> {
    const { user } = order;
    const answer = await turnAfterPark.run(client, [this.lineKey(user)], [jobId]);
    return answer === 1;
  }
}
