import { readFileSync } from 'node:fs';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

/** Where every page's screenshots at both widths go (looked at by a person before a page change is done). */
export const SHOTS = process.env.PAGE_SHOTS_DIR ?? join(__dirname, '../../artifacts/pages');

/** The widths every page is looked at: a laptop and a phone. */
export const WIDTHS = [1280, 390] as const;

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core's violations of impact serious or critical on the page as it is now. The script is evaluated through the
 * DevTools protocol (page.evaluate), not added as a <script>: the apps' CSP allows no inline script, and the test must
 * not switch the CSP off to look at the page.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<unknown> } }).axe;
    const result = (await axe.run((globalThis as unknown as { document: unknown }).document, {
      resultTypes: ['violations'],
    })) as { violations: AxeViolation[] };
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

/** The page's own horizontal overflow (a page that scrolls sideways), in CSS pixels; 0 when it fits. */
export function pageOverflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return Math.max(0, root.scrollWidth - root.clientWidth);
  });
}

/** The innermost elements that reach past the page's right edge, for a failure's message. */
function widest(page: Page): Promise<string> {
  return page.evaluate(() => {
    type El = {
      tagName: string;
      className: unknown;
      children: ArrayLike<El>;
      getBoundingClientRect(): { right: number };
    };
    const doc = (
      globalThis as unknown as {
        document: { documentElement: { clientWidth: number }; querySelectorAll(s: string): ArrayLike<El> };
      }
    ).document;
    const limit = doc.documentElement.clientWidth + 1;
    const past = (el: El) => el.getBoundingClientRect().right > limit;
    return Array.from(doc.querySelectorAll('body *'))
      .filter((el) => past(el) && !Array.from(el.children).some(past))
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className)}`)
      .join(', ');
  });
}

/**
 * Every check a visited page passes, at each width: no serious or critical axe violation, the page itself never
 * scrolls sideways; a full-page screenshot per width (`<name>-1280.png`, `<name>-390.png`). The viewport is put back.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const before = page.viewportSize() ?? { width: 1280, height: 900 };
  const problems: string[] = [];
  try {
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: before.height });
      await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
      for (const violation of await seriousViolations(page)) problems.push(`${width} px: ${violation}`);
      const overflow = await pageOverflow(page);
      if (overflow > 0)
        problems.push(`${width} px: the page scrolls sideways by ${overflow} px (${await widest(page)})`);
    }
  } finally {
    await page.setViewportSize(before);
  }
  if (problems.length > 0) throw new Error(`${name} (${page.url()}):\n${problems.join('\n')}`);
}

/** Whether an element's content is cut: it scrolls inside its box (scrollWidth > clientWidth). */
export function isCut(page: Page, selector: string): Promise<boolean[]> {
  return page
    .locator(selector)
    .evaluateAll((elements) =>
      elements.map(
        (el) =>
          (el as unknown as { scrollWidth: number }).scrollWidth >
          (el as unknown as { clientWidth: number }).clientWidth,
      ),
    );
}

/** For each element matched: whether its visible children sit on more than one line (a wrapped row of buttons). */
export function wrapsOntoTwoLines(page: Page, selector: string): Promise<boolean[]> {
  return page.locator(selector).evaluateAll((rows) =>
    rows.map((row) => {
      type Box = { top: number; bottom: number; width: number; height: number };
      const children = (row as unknown as { children: ArrayLike<{ getBoundingClientRect(): Box }> }).children;
      const boxes = Array.from(children)
        .map((child) => child.getBoundingClientRect())
        .filter((box) => box.width > 0 && box.height > 0);
      return boxes.some((box) => box.top >= boxes[0].bottom - 1);
    }),
  );
}
