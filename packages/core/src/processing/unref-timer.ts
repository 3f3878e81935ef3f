/**
 * `setTimeout` that never holds a process open (`unref` where the platform has it: Node, Bun,
 * Deno); returns how to cancel it.
 */
export function startTimer(run: () => void, ms: number): () => void {
  const timer = setTimeout(run, ms) as unknown as { unref?: () => void };
  timer.unref?.();
  return () => {
    clearTimeout(timer as unknown as Parameters<typeof clearTimeout>[0]);
  };
}
