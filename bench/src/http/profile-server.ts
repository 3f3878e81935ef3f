/**
 * CPU profile of one HTTP server under load: starts `server.ts <name>` with --cpu-prof, drives it
 * with signed alerts for a few seconds, then lets it exit so the profile is written:
 *   node --conditions=@churn-risk/source --import tsx bench/src/http/profile-server.ts fastify-ours
 * Profiles go to bench/results/prof/.
 */
import { profileChild } from '../lib/profile-child.js';

const name = process.argv[2] ?? 'fastify-ours';
const seconds = Number(process.argv[3] ?? '8');
const dir = await profileChild('http/server.ts', [name], name, seconds);
console.log(`profiles (one per thread; the largest is the main thread): ${dir}`);
