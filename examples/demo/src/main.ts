import { runDemo } from './demo.js';

// `pnpm demo`: exits 0 when every step of the end-to-end demo worked, 1 otherwise.
const failures = await runDemo();
process.exitCode = failures === 0 ? 0 : 1;
