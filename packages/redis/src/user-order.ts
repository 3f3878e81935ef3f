import type { UserOrderKey } from '@churn-risk/core/store';
import { createHash, randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './connection.js';

// Order per user (`TakeOptions.perUser`) on keys of our own, next to BullMQ's. BullMQ has no
// groups, so a take still goes through BullMQ (`getNextJob`, a completion's `fetchNext`), and a
// script on these keys decides, atomically, whether the job it handed out is its user's turn:
//
// - `<prefix>:order:line:<user>`: the user's line, a sorted set of its unfinished jobs (waiting,
//   parked, delayed for a retry, active) scored by the alert's `triggeredAt` in ms. Equal times
//   sort by job id, and an ordered alert's job id starts with its acceptance time, so the first
//   accepted goes first. Written with the job, in the MULTI of the accept.
// - `<prefix>:order:hold:<user>`: `<job id> <token>` of the alert that holds the user, from its
//   take until it completes or fails for good (a retry's delay and a takeover keep it).
// - `<prefix>:order:newest:<user>`: the newest `triggeredAt` accepted for the user, kept
//   `dedupeTtlMs` after each acceptance (as the identities are).
// - `<prefix>:order:parks` (hash: job id → how often it was parked) and `<prefix>:order:parked`
//   (set: the jobs parked now).
//
// A job handed out that is not its user's turn is parked: moved to BullMQ's delayed set with the
// public `moveToDelayed` for at most `leaseMs` (so a lost wake-up never strands it), and the
// completion or failure of the alert that holds the user promotes the user's next parked job
// (`promote`). Every key carries the queue's prefix, so with a hash tag (`{churn-risk}`) they all
// land in the queue's slot of a Redis Cluster. The job hash is read only for whether it exists
// (`queue.toKey(id)`): a job removed with BullMQ's own tools neither holds its user nor blocks its
// line.

/** A Lua script run by its SHA1, sent in full once Redis does not know it (NOSCRIPT). */
class Script {
  readonly sha: string;
  constructor(readonly text: string) {
    this.sha = createHash('sha1').update(text).digest('hex');
  }

  run(client: RedisClient, keys: string[], args: (string | number)[]): Promise<unknown> {
    return client.evalsha(this.sha, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return client.eval(this.text, keys.length, ...keys, ...args);
    });
  }
}

/**
 * Run in the MULTI of the accept, right after BullMQ's add: records the alert in its user's line
 * and the user's newest time, only when the add stored our job (a duplicate stores none).
 * KEYS: job hash, line, newest. ARGV: job id, at (ms), dedupeTtlMs. 1: recorded; 0: a duplicate.
 */
const ACCEPT_IN_LINE = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
local newest = tonumber(redis.call('GET', KEYS[3]))
if newest == nil or tonumber(ARGV[2]) > newest then
  redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
else
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
return 1`;

/**
 * A per-user take of the job BullMQ just handed out: whether it is its user's turn, and if so the
 * hold, in one step. Its turn: it holds its user already (a retry due again, a takeover), or the
 * user is not held and it is the first of the line. Otherwise it is to be parked (counted here).
 * A holder or a first of the line whose job no longer exists is dropped.
 * KEYS: hold, line, newest, parks, parked. ARGV: job id, token, at, the job key prefix.
 * `{1, parks, newest}`: taken and held; `{0}`: to be parked.
 */
const TAKE_IN_TURN = `
local id, at, jobs = ARGV[1], ARGV[3], ARGV[4]
local function park()
  redis.call('SADD', KEYS[5], id)
  redis.call('HINCRBY', KEYS[4], id, 1)
  return {0}
end
redis.call('ZADD', KEYS[2], 'NX', at, id)
local holder = redis.call('GET', KEYS[1])
if holder then
  holder = string.match(holder, '^%S+')
  if holder ~= id then
    if redis.call('EXISTS', jobs .. holder) == 1 then return park() end
    holder = false
  end
end
if not holder then
  while true do
    local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
    if first == id then break end
    if redis.call('EXISTS', jobs .. first) == 1 then return park() end
    redis.call('ZREM', KEYS[2], first)
  end
end
redis.call('SET', KEYS[1], id .. ' ' .. ARGV[2])
redis.call('SREM', KEYS[5], id)
local newest = tonumber(redis.call('GET', KEYS[3]))
if newest == nil or tonumber(at) > newest then newest = tonumber(at) end
return {1, tonumber(redis.call('HGET', KEYS[4], id)) or 0, newest}`;

/**
 * The end of an alert (completed, or failed for good), sent before BullMQ's own move: releases
 * the user when this take (`<job id> <token>`) holds it, drops the job from the line, and answers
 * the user's next job when it is parked (to promote). Nothing when the alert was taken over since
 * (the new taker holds the user by it). KEYS: hold, line, parks, parked. ARGV: job id, token.
 */
const RELEASE = `
local id = ARGV[1]
local hold = redis.call('GET', KEYS[1])
if hold then
  if hold == id .. ' ' .. ARGV[2] then
    redis.call('DEL', KEYS[1])
    hold = false
  elseif string.sub(hold, 1, #id + 1) == id .. ' ' then
    return false
  end
end
redis.call('ZREM', KEYS[2], id)
redis.call('HDEL', KEYS[3], id)
redis.call('SREM', KEYS[4], id)
if hold then return false end
local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
if first and redis.call('SISMEMBER', KEYS[4], first) == 1 then return first end
return false`;

/**
 * After a park: whether the parked job is its user's turn by now (the holder ended between the
 * decision and the move, and its promote found the job not delayed yet). KEYS: hold, line.
 * ARGV: job id. 1: promote it.
 */
const TURN_AFTER_PARK = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] == ARGV[1] then return 1 end
return 0`;

const acceptInLine = new Script(ACCEPT_IN_LINE);
const takeInTurn = new Script(TAKE_IN_TURN);
const release = new Script(RELEASE);
const turnAfterPark = new Script(TURN_AFTER_PARK);

/** A per-user take's answer when it is the alert's turn. */
export interface Turn {
  /** How often the job was parked: takes that were not tries. */
  parks: number;
  /** The newest `triggeredAt` accepted for the user, in ms (the alert's own at least). */
  newest: number;
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

/** The order keys of one queue (`prefix`) and the scripts on them. */
export class UserOrder {
  readonly #base: string;

  constructor(prefix: string) {
    this.#base = `${prefix}:order`;
  }

  /** The key of `user`'s line (`retry` of a failed alert puts it back there). */
  lineKey(user: string): string {
    return `${this.#base}:line:${user}`;
  }

  /** Queues, in the accept's MULTI right after BullMQ's add, the record of the alert's order. */
  queueAccept(
    multi: ChainableCommander,
    jobKey: string,
    jobId: string,
    order: UserOrderKey,
    dedupeTtlMs: number,
  ): void {
    multi.eval(
      acceptInLine.text,
      3,
      jobKey,
      this.lineKey(order.user),
      `${this.#base}:newest:${order.user}`,
      jobId,
      order.at,
      dedupeTtlMs,
    );
  }

  /**
   * Whether the job BullMQ handed out (active, locked) is its user's turn; if so the user is held
   * by `token` from now on. Undefined: park it.
   */
  async takeInTurn(
    client: RedisClient,
    jobId: string,
    token: string,
    order: UserOrderKey,
    jobKeyPrefix: string,
  ): Promise<Turn | undefined> {
    const { user } = order;
    const answer = (await takeInTurn.run(
      client,
      [
        `${this.#base}:hold:${user}`,
        this.lineKey(user),
        `${this.#base}:newest:${user}`,
        `${this.#base}:parks`,
        `${this.#base}:parked`,
      ],
      [jobId, token, order.at, jobKeyPrefix],
    )) as number[];
    if (answer[0] !== 1) return undefined;
    return { parks: answer[1] ?? 0, newest: answer[2] ?? order.at };
  }

  /**
   * Ends the alert's part in its user's order (it completes or fails for good); resolves with the
   * job id of the user's next alert when it is parked (to promote).
   */
  async release(
    client: RedisClient,
    jobId: string,
    token: string,
    order: UserOrderKey,
  ): Promise<string | undefined> {
    const { user } = order;
    const next = await release.run(
      client,
      [
        `${this.#base}:hold:${user}`,
        this.lineKey(user),
        `${this.#base}:parks`,
        `${this.#base}:parked`,
      ],
      [jobId, token],
    );
    return typeof next === 'string' ? next : undefined;
  }

  /** Whether a job just parked is its user's turn by now (then promote it). */
  async turnAfterPark(client: RedisClient, jobId: string, order: UserOrderKey): Promise<boolean> {
    const { user } = order;
    const answer = await turnAfterPark.run(
      client,
      [`${this.#base}:hold:${user}`, this.lineKey(user)],
      [jobId],
    );
    return answer === 1;
  }
}
