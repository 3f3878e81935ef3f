import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The command that installs the example's dependencies, among them the npm package node@22. */
export const INSTALL_DEPENDENCIES = 'npx -y pnpm@10 install --frozen-lockfile';

/** Whether this Node can load pg-boss 12 (it declares Node >= 22.12). */
export function runsPgBoss(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

/** The binary of the npm package `node@22`, a devDependency of this example (`node22`). */
export const NODE22_BINARY = fileURLToPath(
  new URL('../../node_modules/node22/bin/node', import.meta.url),
);

/**
 * The Node that runs the processes that load pg-boss (the web and worker processes): this one
 * when it is Node >= 22.12, else the example's own Node 22 (the npm package `node@22`), so that
 * the demo also runs from a shell whose `node` is 20. `NODE_BINARY` names another one.
 */
export function pgBossNode(): string {
  const chosen = process.env.NODE_BINARY;
  if (chosen !== undefined && chosen !== '') return chosen;
  if (runsPgBoss()) return process.execPath;
  if (!existsSync(NODE22_BINARY)) {
    throw new Error(
      `pg-boss 12 needs Node >= 22.12 and this is Node ${process.versions.node}; the example's ` +
        `Node 22 (${NODE22_BINARY}) is missing. Run \`${INSTALL_DEPENDENCIES}\` at the ` +
        'repository root, or run the demo with Node >= 22.12.',
    );
  }
  return NODE22_BINARY;
}
