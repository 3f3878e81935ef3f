/**
 * A fleet of consuming processes (`consumer.ts`) on Redis or Postgres: a kill is a SIGKILL of the
 * process mid-handler.
 */
import { startChild, type BenchChild } from '../lib/child.js';
import { mailbox, type Mailbox } from '../lib/mailbox.js';
import type { Fleet, Member, Start } from './fleet.js';

export interface ProcessFleetOptions {
  engine: 'redis' | 'postgres';
  url: string;
  namespace: string;
  leaseMs: number;
  reclaimIntervalMs: number;
  /** The Node binary of the consumers. */
  node: string;
}

export function processFleet(options: ProcessFleetOptions): Fleet {
  const starts: Start[] = [];
  const children = new Set<BenchChild<unknown>>();
  let count = 0;
  return {
    starts,
    async add(): Promise<Member> {
      const name = `${options.engine} consumer ${String(++count)}`;
      const child = await startChild<{ error?: string }>(
        'takeover/consumer.ts',
        [
          options.engine,
          options.url,
          options.namespace,
          String(options.leaseMs),
          String(options.reclaimIntervalMs),
        ],
        [],
        options.node,
      );
      if (typeof child.ready.error === 'string') {
        await child.kill();
        throw new Error(child.ready.error);
      }
      children.add(child);
      const mail: Mailbox = mailbox(child, name);
      const member: Member = {
        name,
        async accept() {
          child.send({ accept: true });
          return mail.take<string>('accepted', 30_000);
        },
        release(userId) {
          if (child.process.connected) child.send({ release: userId });
        },
        async kill() {
          mail.close();
          children.delete(child);
          await child.kill();
        },
      };
      child.process.on('message', (message: { start?: { userId: string; at: number } }) => {
        if (message.start !== undefined) starts.push({ ...message.start, member });
      });
      return member;
    },
    async close() {
      await Promise.all([...children].map((child) => child.kill()));
      children.clear();
    },
  };
}
