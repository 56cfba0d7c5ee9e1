import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

const ROOT = join(__dirname, '../../..');
const README = join(ROOT, 'README.md');
const DOCS = join(ROOT, 'docs');

/** The README is read in five minutes; everything else goes to docs/. */
const README_MAX_BYTES = 15_000;

/**
 * Pages that other branches are adding and that the docs already link to. Missing is allowed for them only;
 * once a page exists it is checked like any other. Remove an entry when its page has landed.
 */
const PAGES_ON_THEIR_WAY = new Set<string>([]);

/** The text of a Markdown page without fenced code blocks and code spans: what is in them is not a link. */
function prose(markdown: string): string {
  return markdown
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '')
    .replace(/``[\s\S]*?``/g, '')
    .replace(/`[^`\n]*`/g, '');
}

/** Targets of inline links and images `[text](target)` and of reference definitions `[label]: target`. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const references = [...text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$/gm)].map((m) => m[1]);
  return [...inline, ...references];
}

/** What is wrong with the relative links of one page (a path from the repository's root): none when all resolve. */
function brokenLinks(page: string, markdown: string): string[] {
  const problems: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#') || target.startsWith('//')) continue;
    const path = decodeURI(target.replace(/[#?].*$/, ''));
    if (path === '') continue;
    const file = path.startsWith('/') ? join(ROOT, path) : resolve(dirname(join(ROOT, page)), path);
    const fromRoot = relative(ROOT, file);
    if (fromRoot === '..' || fromRoot.startsWith(`..${sep}`) || isAbsolute(fromRoot)) {
      problems.push(`${page}: ${target} points outside the repository`);
    } else if (!existsSync(file) && !PAGES_ON_THEIR_WAY.has(fromRoot.split(sep).join('/'))) {
      problems.push(`${page}: ${target} does not exist (${fromRoot})`);
    }
  }
  return problems;
}

const docsPages = readdirSync(DOCS)
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
const pages = ['README.md', ...docsPages];

describe('README and docs/', () => {
  it(`keeps README.md under ${README_MAX_BYTES} bytes`, () => {
    expect(statSync(README).size).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('states the test command CI runs, npm test, in the README', () => {
    expect(readFileSync(README, 'utf8')).toMatch(/```bash\n(?:.*\n)*?npm test\s/);
  });

  it('never sends the README outside the repository (no ../ at all)', () => {
    const lines = readFileSync(README, 'utf8')
      .split('\n')
      .map((line, i) => `README.md:${i + 1}: ${line}`)
      .filter((line) => line.includes('../'));
    expect(lines).toEqual([]);
  });

  it('has relative links that resolve to files in the repository', () => {
    expect(docsPages.length).toBeGreaterThan(1);
    const problems = pages.flatMap((page) => brokenLinks(page, readFileSync(join(ROOT, page), 'utf8')));
    expect(problems).toEqual([]);
  });

  it('catches a missing file, a path outside the repository, and skips code, anchors and URLs', () => {
    const page = [
      '[ok](operations.md#tracing) [up](../package.json) [web](https://example.com/x.md) [here](#top)',
      '[gone](no-such-page.md) [out](../../shared/spec/animals-interface.md)',
      '`[code](nowhere.md)` and',
      '```',
      '[fenced](nowhere-either.md)',
      '```',
      '[ref]: ./missing.md',
    ].join('\n');
    expect(brokenLinks('docs/example.md', page)).toEqual([
      'docs/example.md: no-such-page.md does not exist (docs/no-such-page.md)',
      'docs/example.md: ../../shared/spec/animals-interface.md points outside the repository',
      'docs/example.md: ./missing.md does not exist (docs/missing.md)',
    ]);
  });
});
