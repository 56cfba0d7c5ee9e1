import { join } from 'node:path';
import { Browser, chromium } from 'playwright-core';

/** Debian's Chromium (never a downloaded browser); CHROMIUM_PATH points elsewhere when needed. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots the browser tests leave for a reader (CI keeps the folder). */
export const ARTIFACTS = join(__dirname, '../../artifacts');

/**
 * Headless Chromium as every browser test runs it: no sandbox (CI runs as root), no GPU, and none of the
 * background traffic (QUIC, updates, sync, first-run) that would reach for the network this machine does not have.
 */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}
