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

/**
 * A server child's CPU time so far (user + system), in microseconds (see `answerCpuRequests`).
 * Other messages the child sends meanwhile (a worker's handler starts) are left to their listeners.
 */
export async function childCpuMicros(child: BenchChild<unknown>): Promise<number> {
  const reply = new Promise<NodeJS.CpuUsage>((resolve, reject) => {
    const timer = setTimeout(() => {
      done();
      reject(new Error(`child ${child.process.pid ?? '?'} did not report its CPU time`));
    }, 120_000);
    const onMessage = (message: { cpu?: NodeJS.CpuUsage }): void => {
      if (message.cpu === undefined) return;
      done();
      resolve(message.cpu);
    };
    const done = (): void => {
      clearTimeout(timer);
      child.process.off('message', onMessage);
    };
    child.process.on('message', onMessage);
  });
  child.send('cpu');
  const cpu = await reply;
  return cpu.user + cpu.system;
}
