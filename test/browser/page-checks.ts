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

/**
 * The rule every table of both apps keeps, at 1366 and 390 px (issue #48.8), checked on the page's geometry:
 *
 * 1. **No column clipped.** Every cell (`th`, `td`) ends at or before the right edge of what shows the table: its
 *    scroll container (the nearest ancestor whose `overflow-x` is not `visible`, e.g. `.table-scroll-x`) or, without
 *    one, the viewport, and never past the viewport; and that container does not scroll sideways. A table that needs sideways scrolling to show a column fails:
 *    a column one must scroll to find is a column a reader does not see (the audit log's Change at 1366 px).
 * 2. **No value wraps inside a token.** Every token of a cell's text (a run of non-space characters: "2026-11-29",
 *    "23", "petk_F7WF…", "portal-e4a71e7cbeea4401") lies on one line: its characters' boxes share one line box.
 *    Cells may wrap between tokens ("23 h" / "59 min" is allowed, "23 h 59" / "min" too; "2026-11-" / "29" is not).
 *
 * A phone layout that shows each row as a block (table.stack, table.keys) passes the same rule: its cells are blocks
 * within the viewport. A cell hidden on purpose (the header row a phone layout keeps only for screen readers, 1 px)
 * is not looked at.
 */
export function tableProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    type Rect = { left: number; right: number; top: number; bottom: number; width: number; height: number };
    type Node = { nodeType: number; textContent: string | null; childNodes: ArrayLike<Node> };
    type El = Node & {
      tagName: string;
      parentElement: El | null;
      clientLeft: number;
      clientWidth: number;
      scrollWidth: number;
      getBoundingClientRect(): Rect;
      getClientRects(): ArrayLike<Rect>;
      getAttribute(name: string): string | null;
      querySelectorAll(selector: string): ArrayLike<El>;
      closest(selector: string): El | null;
    };
    const g = globalThis as unknown as {
      document: {
        body: El;
        documentElement: { clientWidth: number };
        querySelectorAll(s: string): ArrayLike<El>;
        createRange(): {
          setStart(n: Node, o: number): void;
          setEnd(n: Node, o: number): void;
          getClientRects(): ArrayLike<Rect>;
        };
      };
      getComputedStyle(el: El): { overflowX: string };
    };
    const doc = g.document;
    const viewport = doc.documentElement.clientWidth;
    const problems: string[] = [];
    const tables = Array.from(doc.querySelectorAll('main table'));
    tables.forEach((table, index) => {
      if (table.getClientRects().length === 0) return;
      const name = table.getAttribute('data-testid') ?? table.getAttribute('aria-label') ?? `table ${index + 1}`;
      let box: El | null = null;
      for (let el = table.parentElement; el && el !== doc.body; el = el.parentElement)
        if (g.getComputedStyle(el).overflowX !== 'visible') {
          box = el;
          break;
        }
      const boxRight = box ? box.getBoundingClientRect().left + box.clientLeft + box.clientWidth : viewport;
      if (box && box.scrollWidth > box.clientWidth)
        problems.push(`${name}: its box scrolls sideways by ${box.scrollWidth - box.clientWidth} px`);
      const limit = Math.min(boxRight, viewport) + 1;
      for (const cell of Array.from(table.querySelectorAll('th, td'))) {
        const rect = cell.getBoundingClientRect();
        const head = cell.closest('thead');
        if (rect.width < 2 || rect.height < 2 || (head && head.getBoundingClientRect().width < 2)) continue;
        const text = (cell.textContent ?? '').replace(/\s+/g, ' ').trim();
        if (rect.right > limit)
          problems.push(`${name}: "${text.slice(0, 40)}" ends at ${Math.round(rect.right)} px, past ${limit - 1} px`);
        const walk = (node: Node) => {
          if (node.nodeType === 3) {
            const value = node.textContent ?? '';
            for (const match of value.matchAll(/\S+/g)) {
              const range = doc.createRange();
              range.setStart(node, match.index!);
              range.setEnd(node, match.index! + match[0].length);
              const lines = new Set(
                Array.from(range.getClientRects())
                  .filter((r) => r.width > 0)
                  .map((r) => Math.round(r.bottom)),
              );
              if (lines.size > 1)
                problems.push(`${name}: "${match[0]}" wraps inside itself (in "${text.slice(0, 60)}")`);
            }
          } else Array.from(node.childNodes).forEach(walk);
        };
        walk(cell);
      }
    });
    return problems;
  });
}
