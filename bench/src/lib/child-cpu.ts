import { tellParent, type BenchChild } from './child.js';

/**
 * In a server child: answers each `'cpu'` IPC message from the parent with this process's CPU time
 * so far (`{ cpu: process.cpuUsage() }`), so that the parent can compute CPU per request.
 */
export function answerCpuRequests(): void {
  process.on('message', (message) => {
    if (message === 'cpu') tellParent({ cpu: process.cpuUsage() });
  });
}

/** A server child's CPU time so far (user + system), in microseconds (see `answerCpuRequests`). */
export async function childCpuMicros(child: BenchChild<unknown>): Promise<number> {
  const reply = child.next<{ cpu: NodeJS.CpuUsage }>();
  child.send('cpu');
  const { cpu } = await reply;
  return cpu.user + cpu.system;
}
