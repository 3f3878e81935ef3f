import { alertBody } from '../lib/alert.js';
import { roundRobin, type CandidateResult } from '../lib/round-robin.js';
import { formatNumber, formatRatio, markdownTable } from '../lib/table.js';
import type { BenchResult, BenchSettings } from '../lib/types.js';
import {
  BARE,
  OURS_NAMES,
  OURS_NODE,
  OURS_VERIFIER_NODE,
  verifiedCandidates,
} from './candidates.js';

const SIZES: readonly { label: string; bytes: number | undefined }[] = [
  { label: '~250 B alert', bytes: undefined },
  { label: '64 KiB', bytes: 64 * 1024 },
  { label: '1 MiB', bytes: 1024 * 1024 },
];

function tableFor(results: readonly CandidateResult[]): string {
  const bare = results.find((r) => r.name === BARE);
  const rows = [...results]
    .sort((a, b) => b.opsPerSecond - a.opsPerSecond)
    .map((r) => [
      r.name,
      formatNumber(r.opsPerSecond),
      formatRatio(r.opsPerSecond / (bare?.opsPerSecond ?? Number.NaN)),
      formatNumber(r.maxOpsPerSecond),
      formatRatio(r.maxOpsPerSecond / (bare?.maxOpsPerSecond ?? Number.NaN)),
      formatNumber(r.minOpsPerSecond),
    ]);
  return markdownTable(
    ['candidate', 'ops/s median', 'vs bare', 'best round', 'vs bare (best)', 'worst round'],
    rows,
  );
}

function goals(results: readonly CandidateResult[]): string[] {
  const rate = (name: string): number => results.find((r) => r.name === name)?.opsPerSecond ?? 0;
  const bare = rate(BARE);
  const fastestPeer = results
    .filter((r) => r.name !== BARE && !OURS_NAMES.includes(r.name))
    .sort((a, b) => b.opsPerSecond - a.opsPerSecond)[0];
  const lines: string[] = [];
  for (const name of [OURS_NODE, OURS_VERIFIER_NODE]) {
    const ours = rate(name);
    const peerOk = fastestPeer === undefined || ours >= fastestPeer.opsPerSecond;
    const bareOk = bare / ours <= 1.3;
    lines.push(
      `- ${name}: ${peerOk ? 'at or above' : 'BELOW'} the fastest peer ` +
        `(${fastestPeer?.name ?? 'none'}, ${formatRatio(ours / (fastestPeer?.opsPerSecond ?? ours))}); ` +
        `bare is ${formatRatio(bare / ours)} ours (goal <= 1.30x: ${bareOk ? 'met' : 'MISSED'})`,
    );
  }
  return lines;
}

/** Verification throughput, one process, candidates interleaved round by round. */
export async function runVerify(settings: BenchSettings): Promise<BenchResult> {
  const sections: string[] = [];
  const data: Record<string, CandidateResult[]> = {};
  for (const size of SIZES) {
    const body = alertBody(size.bytes);
    const candidates = await verifiedCandidates(body);
    console.error(`verify: ${size.label} (${body.length} bytes), ${candidates.length} candidates`);
    const results = await roundRobin(candidates, {
      rounds: settings.quick ? 3 : 10,
      batchMs: settings.quick ? 50 : 100,
    });
    data[size.label] = results;
    sections.push(
      `#### ${size.label} (${formatNumber(body.length)} bytes)\n\n${tableFor(results)}\n\n${goals(results).join('\n')}`,
    );
  }
  return {
    name: 'verify',
    title: 'Verification throughput',
    markdown: sections.join('\n\n'),
    data,
  };
}
