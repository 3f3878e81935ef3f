import { readFileSync } from 'node:fs';
import os from 'node:os';

/** What the numbers were measured on; printed with every table. */
export interface MachineInfo {
  date: string;
  nproc: number;
  cpuModel: string;
  node: string;
  platform: string;
  loadAverage: string;
}

function cpuModel(): string {
  try {
    const text = readFileSync('/proc/cpuinfo', 'utf8');
    const line = text.split('\n').find((l) => l.startsWith('model name'));
    if (line !== undefined) return line.slice(line.indexOf(':') + 1).trim();
  } catch {
    // Not Linux: fall back to what Node reports.
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

export function machineInfo(): MachineInfo {
  return {
    date: new Date().toISOString(),
    nproc: os.availableParallelism(),
    cpuModel: cpuModel(),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' '),
  };
}

export function machineMarkdown(info: MachineInfo): string {
  return [
    `- date: ${info.date}`,
    `- nproc: ${info.nproc}`,
    `- CPU: ${info.cpuModel}`,
    `- Node: ${info.node} (${info.platform})`,
    `- load average at start (1, 5, 15 min): ${info.loadAverage}`,
  ].join('\n');
}
