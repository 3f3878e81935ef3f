import type { Page } from 'playwright-core';

/** What the dashboard shows for one delivery, read from the page. */
export interface ShownDelivery {
  id: string;
  state: string;
  replayOf: string | null;
  /** The result column of each try: `HTTP 202`, `error: ...`. */
  tries: string[];
}

/** The deliveries the dashboard shows for `userId`, newest first. */
export function shownDeliveries(page: Page, userId: string): Promise<ShownDelivery[]> {
  return page.evaluate(readDeliveries, userId);
}

/**
 * Waits (at most `timeout` ms, polling the page every 50 ms) until the deliveries shown for
 * `userId` pass `check`; rejects with what the page showed last.
 */
export async function waitForDeliveries(
  page: Page,
  userId: string,
  check: (list: ShownDelivery[]) => boolean,
  timeout: number,
): Promise<ShownDelivery[]> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const list = await shownDeliveries(page, userId);
    if (check(list)) return list;
    if (Date.now() > deadline)
      throw new Error(
        `the dashboard did not show the expected deliveries: ${JSON.stringify(list)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function readDeliveries(userId: string): ShownDelivery[] {
  return [...document.querySelectorAll<HTMLElement>('article.delivery')]
    .filter((article) => article.querySelector('header span code')?.textContent === userId)
    .map((article) => ({
      id: article.dataset['delivery'] ?? '',
      state: article.querySelector('.badge')?.textContent ?? '',
      replayOf: article.dataset['replayOf'] ?? null,
      tries: [...article.querySelectorAll('tr.try .result')].map((cell) => cell.textContent ?? ''),
    }));
}
