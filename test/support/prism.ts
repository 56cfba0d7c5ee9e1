import { ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../../scripts/free-port';

const PRISM = join(__dirname, '../../node_modules/.bin/prism');

/** Prism is a dev dependency: a suite that needs it is skipped (with that reason) where it is not installed. */
export const prismInstalled = existsSync(PRISM);

export interface PrismProxy {
  url: string;
  process: ChildProcess;
}

/**
 * Stoplight Prism in proxy mode in front of a real server: it validates every request and response against the
 * document. With `errors`, a violation becomes Prism's own problem+json answer; without, it is reported in the
 * `sl-violations` header of the server's answer.
 */
export async function startPrism(documentFile: string, upstream: string, errors: boolean): Promise<PrismProxy> {
  const port = await freePort();
  const child = spawn(
    PRISM,
    ['proxy', documentFile, upstream, '--port', String(port), '--host', '127.0.0.1', ...(errors ? ['--errors'] : [])],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 60_000;
  while (!output.includes('Prism is listening')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`Prism did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url: `http://127.0.0.1:${port}`, process: child };
}

export interface PrismAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

export async function send(url: string, init: RequestInit = {}): Promise<PrismAnswer> {
  const response = await fetch(url, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as unknown) : undefined };
}

/** An answer the server behind Prism gave and Prism let through: not one of Prism's own problem+json errors. */
export function expectFromUpstream(answer: PrismAnswer, status: number, code?: string): void {
  expect(JSON.stringify(answer.body)).not.toContain('stoplight.io/prism/errors');
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.status).toBe(status);
  if (code) expect((answer.body as { code: string }).code).toBe(code);
}

/** Violations Prism found in the server's response (reported in `sl-violations` when it runs without --errors). */
export function responseViolations(answer: PrismAnswer): unknown[] {
  const header = answer.headers.get('sl-violations');
  const violations = header ? (JSON.parse(header) as Array<{ location: string[] }>) : [];
  return violations.filter((v) => v.location[0] === 'response');
}
