import { spawn } from 'node:child_process';

/** A command Redis ran, as `MONITOR` shows it. */
export interface MonitoredCommand {
  /** Redis' own clock when it ran the command, in ms (microsecond precision). */
  atMs: number;
  /** `127.0.0.1:<port>` of the client that sent it, or `lua` for a command a script ran. */
  source: string;
  /** The command and its arguments. */
  args: string[];
}

/** What `monitorRedis` resolves with. */
export interface RedisMonitor {
  /** The commands seen so far, in the order Redis ran them. */
  readonly commands: MonitoredCommand[];
  /** Stops `redis-cli` (by its pid) and resolves once it exited. */
  stop(): Promise<void>;
}

const LINE = /^(\d+\.\d+) \[\d+ ([^\]]+)\] (.*)$/;
const ARG = /"((?:[^"\\]|\\.)*)"/g;

/**
 * Runs `redis-cli -p <port> monitor` and parses what it prints: every command the server runs,
 * also the ones a Lua script runs (`source: 'lua'`, right after the script's own line). Resolves
 * once the monitor is attached.
 */
export async function monitorRedis(port: number): Promise<RedisMonitor> {
  const child = spawn('redis-cli', ['-p', String(port), 'monitor'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const commands: MonitoredCommand[] = [];
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  let rest = '';
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.stdout.on('data', (chunk: Buffer) => {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (line.trim() === 'OK') resolve();
        const match = LINE.exec(line);
        if (match === null) continue;
        const args = [...(match[3] ?? '').matchAll(ARG)].map((arg) => arg[1] ?? '');
        commands.push({ atMs: Number(match[1]) * 1000, source: match[2] ?? '', args });
      }
    });
  });
  return {
    commands,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** One run of BullMQ's stalled check, as MONITOR showed it. */
export interface StalledCheck {
  /** The client that asked for it. */
  source: string;
  /** When Redis ran it, in ms. */
  atMs: number;
  /** Whether it ran (it set the `stalled-check` key), or was skipped (the key existed). */
  ran: boolean;
}

/**
 * The stalled checks on the queue under `prefix` in `commands`: each call of BullMQ's
 * `moveStalledJobsToWait` script (9 keys, the first the queue's `stalled` set), and whether the
 * script went past its gate (its `SET` of the `stalled-check` key follows it).
 */
export function stalledChecks(
  commands: readonly MonitoredCommand[],
  prefix: string,
): StalledCheck[] {
  const checks: StalledCheck[] = [];
  let current: StalledCheck | undefined;
  for (const { atMs, source, args } of commands) {
    if (source !== 'lua') {
      const command = args[0]?.toLowerCase();
      current = undefined;
      if (
        (command === 'eval' || command === 'evalsha') &&
        args[2] === '9' &&
        args[3] === `${prefix}:alerts:stalled`
      ) {
        current = { source, atMs, ran: false };
        checks.push(current);
      }
    } else if (
      current !== undefined &&
      args[0]?.toUpperCase() === 'SET' &&
      args[1] === `${prefix}:alerts:stalled-check`
    ) {
      current.ran = true;
    }
  }
  return checks;
}
