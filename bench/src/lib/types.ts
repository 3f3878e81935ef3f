import type { BeforeBuild } from './packages.js';

/** Settings every benchmark receives from run.ts. */
export interface BenchSettings {
  /** Shorter runs (fewer rounds, shorter durations): a check that everything works. */
  quick: boolean;
  /** `--only=<text>`: run only the cases whose name contains it (http: `express`, `fastify`, `next`). */
  only?: string;
  /**
   * `--before=<git-ref>`: the packages built at that commit (`lib/before-build.ts`); `receiver`,
   * `http` and `redis` then measure a "before" twin of each of our cases in the same rounds.
   */
  before?: BeforeBuild;
}

/** What one benchmark hands back: a Markdown section and its raw numbers. */
export interface BenchResult {
  name: string;
  title: string;
  markdown: string;
  data: unknown;
  /** Set when the benchmark could not run (a package it needs is not written yet). */
  skipped?: string;
}
