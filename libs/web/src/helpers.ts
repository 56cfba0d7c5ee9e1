import type { HelperOptions } from 'handlebars';
import { describeLimits, planTitle, type PlanCatalogue, type PlanName } from '@app/contract';
import { href } from './base-path';

type Handlebars = { registerHelper(name: string, fn: (...args: never[]) => unknown): void };

/**
 * Template helpers: `{{url "/consumers"}}` (the base path joined), `{{concat a b}}`, `{{eq a b}}`, `{{startsWith s prefix}}`, `{{includes list item}}`,
 * `{{utc iso}}` (a date-time as "2026-11-24 13:05 UTC"), `{{number n}}` (thousands separated), `{{duration seconds}}`
 * ("23 h 56 min", "42 s"), `{{planLimits "free"}}` (a plan's limits in words, from the plan catalogue: a page that
 * names a plan's limits without a model of its own, such as the portal's home page, never spells a number),
 * `{{tokens text}}` (free text in a table cell: wraps between words, never inside one; unbrokenTokens).
 */
export function registerWebHelpers(handlebars: Handlebars, plans?: PlanCatalogue): void {
  handlebars.registerHelper('url', (appPath: string, options: HelperOptions) =>
    href(String((options.data as { root?: { base?: string } }).root?.base ?? ''), String(appPath)),
  );
  handlebars.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  // {{url (concat "/consumers/" name)}}: the last argument is Handlebars' options object.
  handlebars.registerHelper('concat', (...args: unknown[]) =>
    args
      .slice(0, -1)
      .map((a) => String(a ?? ''))
      .join(''),
  );
  // {{#if (startsWith currentPath "/consumers")}}aria-current="page"{{/if}}: the nav's current section.
  handlebars.registerHelper(
    'startsWith',
    (value: unknown, prefix: unknown) =>
      typeof value === 'string' && typeof prefix === 'string' && value.startsWith(prefix),
  );
  handlebars.registerHelper('includes', (list: unknown, item: unknown) => Array.isArray(list) && list.includes(item));
  handlebars.registerHelper('utc', (value: unknown) => formatUtc(value));
  handlebars.registerHelper('number', (value: unknown) =>
    typeof value === 'number' ? value.toLocaleString('en-US') : String(value ?? ''),
  );
  handlebars.registerHelper('duration', (value: unknown) => formatDuration(value));
  handlebars.registerHelper('planTitle', (name: unknown) => planTitle(String(name ?? '')));
  handlebars.registerHelper('planLimits', (name: unknown) => describeLimits(plans?.[name as PlanName]));
  handlebars.registerHelper('tokens', (value: unknown) => unbrokenTokens(value));
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#x27;',
  '`': '&#x60;',
  '=': '&#x3D;',
};

/**
 * `{{tokens text}}`: free text for a table cell that may wrap between its words but never inside one (a date
 * "2026-11-29", a name "portal-e4a71e7cbeea4401", an email, "plan-requests:read" would otherwise break after a
 * hyphen or a slash): each run of non-space characters, escaped, in a `<span class="nobreak">`; the spaces between
 * them stay wrap opportunities. The text a reader copies is the text given. Returns Handlebars' safe-string shape
 * (`toHTML`), so the markup is not escaped again.
 */
export function unbrokenTokens(value: unknown): { toHTML(): string; toString(): string } {
  const text = value === undefined || value === null ? '' : String(value);
  const html = text
    .split(/(\s+)/)
    .map((part, i) =>
      i % 2 === 1 || part === ''
        ? part
        : `<span class="nobreak">${part.replace(/[&<>"'`=]/g, (c) => HTML_ESCAPES[c])}</span>`,
    )
    .join('');
  return { toHTML: () => html, toString: () => html };
}

/** Seconds as a person reads them: "42 s", "3 min 5 s", "23 h 56 min", "2 d 4 h" (the largest unit and the next). */
export function formatDuration(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return String(value ?? '');
  const units: Array<[string, number]> = [
    ['d', 86_400],
    ['h', 3_600],
    ['min', 60],
    ['s', 1],
  ];
  let rest = Math.ceil(value);
  const counts = units.map(([name, size]) => {
    const count = Math.floor(rest / size);
    rest -= count * size;
    return [name, count] as const;
  });
  const first = counts.findIndex(([, count]) => count > 0);
  if (first < 0) return '0 s';
  return counts
    .slice(first, first + 2)
    .filter(([, count], index) => index === 0 || count > 0)
    .map(([name, count]) => `${count} ${name}`)
    .join(' ');
}

export function formatUtc(value: unknown): string {
  if (value === null || value === undefined || value === '') return '';
  const date = new Date(String(value));
  if (Number.isNaN(date.getTime())) return String(value);
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
