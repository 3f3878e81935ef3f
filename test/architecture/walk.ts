/**
 * Prints the measured walk of one delivery in each mode (the files of `packages/<name>/src/` where
 * code ran for it: measure.ts and walk-child.ts say how), next to what docs/architecture.md
 * states, and the README's table of the Redis, Postgres and Cloudflare Queues walks as measured,
 * ready to paste. Starts its own redis-server and PostgreSQL on free ports (stopped at the end).
 *
 *   node --conditions=@churn-risk/source --import tsx test/architecture/walk.ts [mode...]
 */
import { startPostgres } from '@churn-risk/postgres/testing';
import { startRedisServer } from '@churn-risk/redis/testing';
import { measureWalk, MODES, ROOT, VARIANTS, type Mode, type Walk } from './measure.js';
import { readReadmeWalks, renderTable, toCore } from './readme-walks.js';

const asked = process.argv.slice(2);
const unknown = asked.filter((mode) => !(MODES as readonly string[]).includes(mode));
if (unknown.length > 0)
  throw new Error(`unknown mode(s) ${unknown.join(', ')}: ${MODES.join(', ')}`);
const modes: readonly Mode[] = asked.length === 0 ? MODES : (asked as Mode[]);

const redis = modes.includes('redis') ? await startRedisServer() : undefined;
const postgres = modes.includes('postgres') ? await startPostgres() : undefined;
const env: Record<string, string> = {
  ...(redis === undefined ? {} : { REDIS_URL: redis.url }),
  ...(postgres === undefined ? {} : { DATABASE_URL: postgres.url }),
};

/** `ran` against `stated`: `+` measured only, `-` stated only. */
function difference(ran: readonly string[], stated: readonly string[]): string[] {
  return [
    ...ran.filter((file) => !stated.includes(file)).map((file) => `+ ${file}`),
    ...stated.filter((file) => !ran.includes(file)).map((file) => `- ${file}`),
  ];
}

try {
  const readme = readReadmeWalks(ROOT);
  const walks: Walk[] = [];
  for (const mode of modes) {
    for (const variant of VARIANTS) {
      const walk = await measureWalk(mode, variant, env);
      walks.push(walk);
      const stated =
        mode === 'memory'
          ? variant === 'succeeds'
            ? readme.memory
            : [...readme.memory, ...readme.memoryFailingAdds]
          : (readme.table[mode]?.[variant].files ?? []);
      console.log(
        `\n${mode}, handler ${variant}: ${String(walk.ran.length)} files ` +
          `(answered ${String(walk.status)}, handler runs ${String(walk.handlerRuns)}, ` +
          `${String(walk.loaded.length)} source files loaded)`,
      );
      for (const file of walk.ran) console.log(`  ${toCore(file)}`);
      const diff = difference(walk.ran, stated);
      console.log(
        diff.length === 0
          ? `  = the README (${String(stated.length)} files)`
          : `  against the README (${String(stated.length)} files):\n    ${diff.join('\n    ')}`,
      );
    }
  }
  if (modes.includes('memory')) {
    const base = walks.find((walk) => walk.mode === 'memory' && walk.variant === 'succeeds');
    const otel = await measureWalk('memory', 'succeeds', { ...env, WALK_OTEL: 'installed' });
    const joined = otel.ran.filter((file) => base?.ran.includes(file) !== true);
    console.log(
      `\nmemory with @opentelemetry/api installed: ${String(otel.ran.length)} files; joined:`,
    );
    for (const file of joined) console.log(`  ${toCore(file)}`);
  }
  if (modes.some((mode) => mode !== 'memory')) {
    console.log('\nThe README table, as measured:\n');
    console.log(renderTable(walks, readme.tableOrder).join('\n'));
  }
} finally {
  await redis?.stop();
  redis?.cleanup();
  await postgres?.stop();
  postgres?.cleanup();
}
