/**
 * CPU profile of one HTTP server under load: starts `server.ts <name>` with --cpu-prof, drives it
 * with signed alerts for a few seconds, then lets it exit so the profile is written:
 *   node --conditions=@churn-risk/source --import tsx bench/src/http/profile-server.ts fastify-ours
 * Profiles go to bench/results/prof/.
 */
import { fileURLToPath } from 'node:url';
import { startChild } from '../lib/child.js';
import { signedLoad } from '../lib/signed-load.js';

const name = process.argv[2] ?? 'fastify-ours';
const seconds = Number(process.argv[3] ?? '8');
const dir = fileURLToPath(new URL('../../results/prof/', import.meta.url));
const child = await startChild<{ port: number }>(
  'http/server.ts',
  [name],
  ['--cpu-prof', `--cpu-prof-dir=${dir}`],
);
const result = await signedLoad(child.ready.port, { connections: 32, duration: seconds });
console.log(`${name}: ${Math.round(result.requestsPerSecond)} req/s`, result.statuses);
const exited = new Promise((resolve) => child.process.once('exit', resolve));
child.process.disconnect(); // server.ts exits on disconnect, which writes the profile
await exited;
console.log(`profiles (one per thread; the largest is the main thread): ${dir}`);
