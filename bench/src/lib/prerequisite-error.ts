/** Thrown when a benchmark cannot run here (PostgreSQL or Node 22 missing); run.ts prints its message alone. */
export class BenchPrerequisiteError extends Error {
  override readonly name = 'BenchPrerequisiteError';
}
