import { PushOrder, type AlertRecord, type UserOrderKey } from '@churn-risk/core/store';
import { isConditionFailed, type AwsCalls } from './aws-sdk.js';
import { epochSeconds } from './dynamo-identities.js';
import { MAX_DELAY_SECONDS } from './sqs-message.js';

/** Options of `createDynamoOrder`. */
export interface DynamoOrderOptions {
  /**
   * How long a user stays held for an alert whose consumer gave no verdict (it died, or its
   * message is gone), in ms; then another alert of the user may take the user over. Default: the
   * queue's visibility timeout (read once from SQS), after which SQS hands a dead consumer's
   * message out again, so that the alert takes its own hold back before another alert could
   * take it. A try never outlives it (a function's timeout is at most the visibility timeout).
   * A retry's delay adds to it.
   */
  holdMs?: number | undefined;
  /**
   * How long an alert that must wait (its user is held, or an older alert of the user waits) goes
   * back to the queue, in ms, for each alert ahead of it; longer when the holding alert waits for
   * a retry that is due later. At most SQS's 15 minutes. Default 2,000.
   */
  waitMs?: number | undefined;
}

/**
 * Order per user for `createSqsQueue({ order })`, made by `createDynamoOrder`: each user is held
 * for one alert at a time in the queue's dedupe table.
 */
export interface DynamoOrder {
  /** `holdMs` as given (undefined: the queue's visibility timeout). */
  readonly holdMs: number | undefined;
  /** `waitMs`, default 2,000. */
  readonly waitMs: number;
}

/** What the queue needs of the alert identities, with or without order per user. */
export interface IdentityClaims {
  claim(id: string, ttlMs: number, token: string): Promise<boolean>;
  release(id: string, token: string): Promise<void>;
}

/** The order's side inside `createSqsQueue` (not exported by the package). */
export interface SqsUserOrder extends PushOrder {
  /** The identity claims of an alert of user `key`: its record in the user's line. */
  claims(key: UserOrderKey): IdentityClaims;
  /** A retry of `id` (held here) is due in `delayMs`: the hold lasts until then, and `holdMs` on. */
  keep(id: string, delayMs: number): Promise<void>;
  /** Failed alert `entry` goes back to the queue: it waits in its user's line again. */
  requeue(entry: AlertRecord<'accepted'>): Promise<void>;
}

/** The hidden side of a `DynamoOrder`: binds it to a queue. */
export interface DynamoOrderBinding extends DynamoOrder {
  /** The order of the queue at `queueUrl`, in its `dedupeTable`. */
  open(queue: { dedupeTable: string; queueUrl: string }, aws: AwsCalls): SqsUserOrder;
}

type Attribute = { S?: string; N?: string; L?: Attribute[] };
type Item = Record<string, Attribute | undefined>;
type Values = Record<
  string,
  { S: string } | { N: string } | { L: ({ S: string } | { N: string })[] }
>;

/** An alert in the user's item: its time, and when its acceptance lapses (ms). */
interface Accepted {
  readonly at: number;
  readonly lapse: number;
}

/** Tries of the conditional write of a claim that lost to another write. */
const CLAIM_ATTEMPTS = 5;
/** Characters of an acceptance's token kept in the user's item (enough to tell two apart). */
const TOKEN_CHARS = 12;
/** Lapsed entries a claim's write removes at most (the rest, at a later claim). */
const MAX_REMOVED = 100;
/** Claims held by this instance, remembered for `keep`; beyond this many, forgotten. */
const MAX_HELD = 1_000;

const n = (value: number): { N: string } => ({ N: String(value) });
/** The user's item: `sqs-user#<userId>#` (an identity ends with `Z`, a note has no `#` at its end). */
const userKey = (user: string): { pk: { S: string } } => ({ pk: { S: `sqs-user#${user}#` } });
const ACCEPTED = 'a:';
const WAITING = 'w:';

/** True when alert `a` (`id`) goes before alert `b` (`other`): older, else accepted first. */
function before(a: Accepted, id: string, b: Accepted, other: string): boolean {
  if (a.at !== b.at) return a.at < b.at;
  if (a.lapse !== b.lapse) return a.lapse < b.lapse;
  return id < other;
}

/**
 * The user's line in the dedupe table, one item per user (`pk` = `sqs-user#<userId>#`):
 *
 * - `a:<identity>`: `[at, lapse, token]`, each alert accepted in order per user: its identity
 *   claim (a redelivery within `dedupeTtlMs` is a duplicate) and its time, which gives `newest`;
 * - `w:<identity>`: `at`, while the alert is not done (waiting, running, or waiting for a retry);
 * - `h` and `hu`: the alert holding the user and until when (ms);
 * - `v`: a version every write adds 1 to; `expiresAt`: the TTL attribute (epoch seconds).
 *
 * An acceptance is one conditional `UpdateItem` (the identity and the line in one write). A claim
 * reads the item (strongly consistent) and writes its hold with the condition that `v` is still
 * the one read: a write between the two (another claim, an acceptance of an older alert) makes it
 * read again, so no two alerts ever hold a user at once and an older alert is never passed over.
 */
class DynamoUserLines extends PushOrder implements SqsUserOrder {
  readonly #table: string;
  readonly #aws: AwsCalls;
  readonly #queueUrl: string;
  readonly #order: DynamoOrder;
  #holdMs: Promise<number> | undefined;
  readonly #held = new Map<string, string>();

  constructor(order: DynamoOrder, table: string, aws: AwsCalls, queueUrl: string) {
    super();
    this.#order = order;
    this.#table = table;
    this.#aws = aws;
    this.#queueUrl = queueUrl;
  }

  claims({ user, at }: UserOrderKey): IdentityClaims {
    return {
      claim: async (id, ttlMs, token) => {
        const now = Date.now();
        try {
          await this.#update(user, 'SET #a = :a, #w = :at, expiresAt = :x ADD v :one', {
            names: { '#a': ACCEPTED + id, '#w': WAITING + id },
            values: {
              ':a': { L: [n(at), n(now + ttlMs), { S: token.slice(0, TOKEN_CHARS) }] },
              ':at': n(at),
            },
            condition: 'attribute_not_exists(#a) OR #a[1] < :now',
            now,
            ttlMs,
          });
          return true;
        } catch (error) {
          if (isConditionFailed(error)) return false;
          throw error;
        }
      },
      release: (id, token) =>
        this.#quietly(
          this.#update(user, 'REMOVE #a, #w ADD v :one', {
            names: { '#a': ACCEPTED + id, '#w': WAITING + id },
            values: { ':token': { S: token.slice(0, TOKEN_CHARS) } },
            condition: '#a[2] = :token',
          }),
        ),
    };
  }

  async claim(
    message: AlertRecord<'delivered'>,
    key: UserOrderKey,
  ): Promise<{ readonly newest: number } | { readonly waitMs: number }> {
    const me = message.id;
    const holdMs = await this.#hold();
    let ahead = 0;
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      const { Item: item = {} } = await this.#aws.ddb<{ Item?: Item }>('GetItem', {
        TableName: this.#table,
        Key: userKey(key.user),
        ConsistentRead: true,
      });
      const now = Date.now();
      const accepted = new Map<string, Accepted>();
      const waiting: string[] = [];
      for (const [name, value] of Object.entries(item)) {
        const [at, lapse] = value?.L ?? [];
        if (name.startsWith(ACCEPTED)) {
          accepted.set(name.slice(2), { at: Number(at?.N), lapse: Number(lapse?.N) });
        } else if (name.startsWith(WAITING)) waiting.push(name.slice(2));
      }
      const live = (id: string): Accepted | undefined => {
        const found = accepted.get(id);
        return found !== undefined && found.lapse >= now ? found : undefined;
      };
      let newest = key.at;
      for (const id of accepted.keys()) newest = Math.max(newest, live(id)?.at ?? newest);
      const holder = item.h?.S;
      const until = Number(item.hu?.N ?? 0);
      const hold = { ':until': n(now + holdMs), ':me': { S: me } };
      if (holder === me) {
        // A retry or a redelivery of the holding alert: it holds on.
        if (await this.#onHold(key.user, 'SET hu = :until', hold)) {
          return this.#holding(me, key.user, newest);
        }
        continue;
      }
      const held = holder !== undefined && until >= now;
      const mine = live(me) ?? { at: key.at, lapse: Infinity };
      // Alerts of the user ahead of this one; a lapsed hold's alert is done with in the line.
      ahead = waiting.filter((id) => {
        const other = live(id);
        return (
          id !== me && (held || id !== holder) && other !== undefined && before(other, id, mine, me)
        );
      }).length;
      // The holding alert may wait for a retry due at `until - holdMs`: not before then.
      if (held) return this.#wait(ahead, until - holdMs - now);
      if (ahead > 0) return this.#wait(ahead, 0);
      const gone = [...accepted.keys()]
        .filter((id) => live(id) === undefined)
        .map((id) => ACCEPTED + id)
        .concat(
          waiting.filter((id) => id === holder || live(id) === undefined).map((id) => WAITING + id),
        )
        .slice(0, MAX_REMOVED);
      const names: Record<string, string> = {};
      gone.forEach((name, i) => (names[`#g${String(i)}`] = name));
      const version = item.v?.N;
      try {
        await this.#aws.ddb('UpdateItem', {
          TableName: this.#table,
          Key: userKey(key.user),
          UpdateExpression:
            'SET h = :me, hu = :until, expiresAt = :x ADD v :one' +
            (gone.length > 0 ? ` REMOVE ${Object.keys(names).join(', ')}` : ''),
          ConditionExpression: version === undefined ? 'attribute_not_exists(v)' : 'v = :v',
          ...(gone.length > 0 ? { ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: {
            ...hold,
            ':x': n(Math.max(Number(item.expiresAt?.N ?? 0), epochSeconds(now + holdMs) + 1)),
            ':one': n(1),
            ...(version === undefined ? {} : { ':v': { N: version } }),
          },
        });
        return this.#holding(me, key.user, newest);
      } catch (error) {
        if (!isConditionFailed(error)) throw error;
      }
    }
    // Other writes won every time: try again later.
    return this.#wait(ahead, 0);
  }

  async release(message: AlertRecord<'delivered'>, key: UserOrderKey): Promise<void> {
    this.#held.delete(message.id);
    const names = { '#w': WAITING + message.id };
    const values = { ':me': { S: message.id } };
    try {
      await this.#update(key.user, 'REMOVE #w, h, hu ADD v :one', {
        names,
        values,
        condition: 'h = :me',
      });
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
      // Another alert took the user over once this one's hold lapsed: it is done all the same.
      await this.#quietly(
        this.#update(key.user, 'REMOVE #w ADD v :one', {
          names,
          condition: 'attribute_exists(pk)',
        }),
      );
    }
  }

  async keep(id: string, delayMs: number): Promise<void> {
    const user = this.#held.get(id);
    if (user === undefined) return;
    this.#held.delete(id);
    await this.#onHold(user, 'SET hu = :until', {
      ':until': n(Date.now() + delayMs + (await this.#hold())),
      ':me': { S: id },
    });
  }

  requeue(entry: AlertRecord<'accepted'>): Promise<void> {
    const { userId, triggeredAt } = entry.alert;
    return this.#quietly(
      this.#update(userId, 'SET #w = :at ADD v :one', {
        names: { '#w': WAITING + entry.id, '#a': ACCEPTED + entry.id },
        values: { ':at': n(Date.parse(triggeredAt)) },
        condition: 'attribute_exists(#a)',
      }),
    );
  }

  /** The hold's length: the option, else the queue's visibility timeout (read once). */
  #hold(): Promise<number> {
    const given = this.#order.holdMs;
    if (given !== undefined) return Promise.resolve(given);
    this.#holdMs ??= this.#aws
      .sqs<{ Attributes?: { VisibilityTimeout?: string } }>('GetQueueAttributes', {
        QueueUrl: this.#queueUrl,
        AttributeNames: ['VisibilityTimeout'],
      })
      .then(({ Attributes }) => Number(Attributes?.VisibilityTimeout ?? 30) * 1000)
      .catch((error: unknown) => {
        this.#holdMs = undefined; // read again at the next claim
        throw error;
      });
    return this.#holdMs;
  }

  #holding(id: string, user: string, newest: number): { readonly newest: number } {
    if (this.#held.size >= MAX_HELD) this.#held.clear();
    this.#held.set(id, user);
    return { newest };
  }

  #wait(ahead: number, due: number): { readonly waitMs: number } {
    const waitMs = Math.max(this.#order.waitMs * Math.max(ahead, 1), due);
    return { waitMs: Math.min(waitMs, MAX_DELAY_SECONDS * 1000) };
  }

  /** A write on the hold of `:me`, with the condition that it still holds: false when not. */
  async #onHold(user: string, expression: string, values: Values): Promise<boolean> {
    try {
      await this.#update(user, expression, { values, condition: 'h = :me' });
      return true;
    } catch (error) {
      if (isConditionFailed(error)) return false;
      throw error;
    }
  }

  /** An `UpdateItem` of the user's item; with `ttlMs`, its TTL is set from `now`. */
  #update(
    user: string,
    expression: string,
    options: {
      names?: Record<string, string>;
      values?: Values;
      condition: string;
      now?: number;
      ttlMs?: number;
    },
  ): Promise<unknown> {
    const { names, values = {}, condition, now = Date.now(), ttlMs } = options;
    const used = (key: string): boolean => `${expression} ${condition}`.includes(key);
    const all: Values = {
      ...values,
      ':one': n(1),
      ':now': n(now),
      ...(ttlMs === undefined ? {} : { ':x': n(epochSeconds(now + ttlMs)) }),
    };
    return this.#aws.ddb('UpdateItem', {
      TableName: this.#table,
      Key: userKey(user),
      UpdateExpression: expression,
      ConditionExpression: condition,
      ...(names === undefined ? {} : { ExpressionAttributeNames: names }),
      ExpressionAttributeValues: Object.fromEntries<Values[string]>(
        Object.entries(all).filter(([key]) => used(key)),
      ),
    });
  }

  /** Resolves once `write` settled; a refused condition is no error. */
  async #quietly(write: Promise<unknown>): Promise<void> {
    try {
      await write;
    } catch (error) {
      if (!isConditionFailed(error)) throw error;
    }
  }
}

/**
 * Order per user on SQS and DynamoDB, for `createSqsQueue({ order })` with
 * `createReceiver({ order: 'per-user' })`. Each alert's identity is recorded, in the same
 * conditional write, in its user's item of the dedupe table; before a try, the consumer holds the
 * user for the alert in one conditional write (no other alert holds it, no older alert of the
 * user waits), else the message goes back to the queue for a while (`waitMs`), its tries and
 * stalls unchanged. A completed or failed alert releases the user; one waiting for a retry keeps
 * it. Works on a standard queue: no FIFO queue or message group is needed.
 *
 * @example
 * const queue = createSqsQueue({
 *   queueUrl: process.env.QUEUE_URL!,
 *   dedupeTable: process.env.DEDUPE_TABLE!,
 *   failedTable: process.env.FAILED_TABLE!,
 *   order: createDynamoOrder(),
 * });
 * const receiver = createQueueReceiver({ secret, queue, order: 'per-user' });
 */
export function createDynamoOrder(options: DynamoOrderOptions = {}): DynamoOrder {
  const { holdMs, waitMs = 2_000 } = options;
  if (holdMs !== undefined && (!Number.isInteger(holdMs) || holdMs < 1000)) {
    throw new TypeError('holdMs must be a whole number of at least 1000.');
  }
  if (!Number.isInteger(waitMs) || waitMs < 1000 || waitMs > MAX_DELAY_SECONDS * 1000) {
    throw new TypeError('waitMs must be a whole number from 1000 to 900000.');
  }
  const order: DynamoOrderBinding = {
    holdMs,
    waitMs,
    open: ({ dedupeTable, queueUrl }, aws) =>
      new DynamoUserLines(order, dedupeTable, aws, queueUrl),
  };
  return order;
}
