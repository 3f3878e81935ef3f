import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's CPU fields (`getconf CLK_TCK`, 100 on Linux). */
export const CLOCK_TICKS: number = (() => {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

/**
 * Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself contain
 * spaces or parentheses, so the fields are counted from its last `)`.
 */
function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined; // gone
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): field n is fields[n - 3].
  const field = (n: number): number => Number(fields[n - 3]);
  return { pid, ppid: field(4), ticks: field(14) + field(15) + field(16) + field(17) };
}

function allStats(): ProcStat[] {
  const stats: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = readStat(Number(name));
    if (stat !== undefined) stats.push(stat);
  }
  return stats;
}

/** `root` and all its live descendants (found by scanning /proc/*\/stat for their ppid). */
function tree(root: number, stats: readonly ProcStat[]): ProcStat[] {
  const byParent = new Map<number, ProcStat[]>();
  for (const stat of stats) {
    const siblings = byParent.get(stat.ppid) ?? [];
    siblings.push(stat);
    byParent.set(stat.ppid, siblings);
  }
  const rootStat = stats.find((s) => s.pid === root);
  if (rootStat === undefined) return [];
  const found: ProcStat[] = [];
  const pending = [rootStat];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    found.push(next);
    pending.push(...(byParent.get(next.pid) ?? []));
  }
  return found;
}

/** The pids of `root` and its live descendants. */
export function processTree(root: number): number[] {
  return tree(root, allStats()).map((s) => s.pid);
}

/**
 * CPU time (user + system) of `root` and all its live descendants, in microseconds, including the
 * children they have already reaped (cutime/cstime), so that a worker exiting between two readings
 * does not make its time vanish.
 */
export function treeCpuMicros(root: number): number {
  const ticks = tree(root, allStats()).reduce((sum, s) => sum + s.ticks, 0);
  return (ticks * 1_000_000) / CLOCK_TICKS;
}
