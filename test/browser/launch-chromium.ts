import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, provisioned by scripts/provision.sh (never `playwright install`). */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Launches headless Chromium with nothing running in the background (no network of its own, no
 * component updates, no sync). Playwright gives every launch a fresh temporary profile
 * (user-data-dir) and deletes it on `close()`.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
