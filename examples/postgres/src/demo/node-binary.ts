/**
 * The Node that runs the demo's web and worker processes: `NODE_BINARY` when it names one, else
 * this one (`@churn-risk/postgres` runs on every supported Node, 20.19 and later).
 */
export function processNode(): string {
  const chosen = process.env.NODE_BINARY;
  return chosen !== undefined && chosen !== '' ? chosen : process.execPath;
}
