import { DataSource } from 'typeorm';
import { PetStatus } from '@app/contract';
import { DEVELOPMENT_CURSOR_SECRET, PageCursorCodec } from '../../../apps/pets/src/pets/page-cursor';
import { call, expectErrorBody, postJson, Reply } from '../../support/http';
import { startPetsService } from '../../support/pets-service';
import { withStack } from '../../support/with-stack';

interface Pet {
  id: number;
  name: string;
  status?: string;
}

const SEEDED = 1_000;
const STATUSES = ['available', 'pending', 'sold', undefined] as const;
/** The test service runs without CURSOR_SECRET, so it signs with the development key, as this codec does. */
const codec = new PageCursorCodec(DEVELOPMENT_CURSOR_SECRET);

/** The target of `Link: <...>; rel="next"`, or undefined when the page has none. */
function nextLink(reply: Reply): string | undefined {
  const header = reply.headers.get('link');
  if (header === null) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(header);
  expect(match).not.toBeNull();
  return match![1];
}

/** keyset paging of GET /pets on the pets service: every animal reachable, once, in id order. */
describe('pets service: paging GET /pets', () => {
  const stack = withStack({ pets: {} });

  let db: DataSource;
  const url = (path: string) => new URL(path, stack.pets.url).toString();

  /** Follows rel="next" from `first` to the end; `between` runs after each page (to insert animals). */
  async function walk(first: string, between: (page: number) => Promise<void> = async () => undefined) {
    const pages: Pet[][] = [];
    const links: string[] = [];
    let next: string | undefined = first;
    while (next !== undefined) {
      const reply = await call(url(next));
      expect(reply.status).toBe(200);
      pages.push(reply.body as Pet[]);
      next = nextLink(reply);
      if (next !== undefined) {
        links.push(next);
        await between(pages.length);
      }
      if (pages.length > 10_000) throw new Error('the walk does not end');
    }
    return { pages, links, ids: pages.flat().map((pet) => pet.id) };
  }

  async function idsInStore(status?: string): Promise<number[]> {
    const rows: Array<{ id: string }> = status
      ? await db.query('SELECT id FROM pets WHERE status = $1 ORDER BY id', [status])
      : await db.query('SELECT id FROM pets ORDER BY id');
    return rows.map((row) => Number(row.id));
  }

  let inserted = 0;
  const insert = (status?: string) =>
    postJson(url('/pets'), { name: `Added ${(inserted += 1)}`, categoryId: 1, ...(status ? { status } : {}) }).then(
      (reply) => {
        expect(reply.status).toBe(201);
        return reply.body as Pet;
      },
    );

  beforeAll(async () => {
    db = stack.pets.app.get(DataSource);
    await db.query(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || i, 1 + i % 10, (ARRAY['available','pending','sold',NULL])[1 + i % 4]::pet_status
       FROM generate_series(1, ${SEEDED}) AS i`,
    );
  });

  it('walks 1,000 animals in pages of 7 while others are added: every animal exactly once, in id order', async () => {
    const before = await idsInStore();
    expect(before).toHaveLength(SEEDED);
    const added: Pet[] = [];
    const { pages, links, ids } = await walk('/pets?limit=7', async (page) => {
      added.push(await insert(STATUSES[page % STATUSES.length]));
    });
    const after = await idsInStore();
    // Everything there was, and everything added during the walk (new ids come after the ones already read).
    expect(ids).toEqual(after);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(before));
    expect(ids).toEqual(expect.arrayContaining(added.map((pet) => pet.id)));
    for (const page of pages.slice(0, -1)) expect(page).toHaveLength(7);
    expect(pages[pages.length - 1].length).toBeGreaterThanOrEqual(1);
    expect(pages[pages.length - 1].length).toBeLessThanOrEqual(7);
    expect(links).toHaveLength(pages.length - 1);
    for (const link of links) expect(link).toMatch(/^\/pets\?limit=7&after=[A-Za-z0-9_-]+$/);
  });

  it('keeps the status filter across pages, also while animals of every status are added', async () => {
    const { pages, links, ids } = await walk('/pets?status=sold&limit=7', async (page) => {
      await insert(STATUSES[page % STATUSES.length]);
    });
    expect(ids).toEqual(await idsInStore('sold'));
    for (const pet of pages.flat()) expect(pet.status).toBe('sold');
    for (const link of links) expect(link).toMatch(/^\/pets\?limit=7&status=sold&after=[A-Za-z0-9_-]+$/);
  });

  it('misses nothing while another client inserts concurrently', async () => {
    let stop = false;
    let written = 0;
    const writer = (async () => {
      while (!stop) {
        await insert(STATUSES[inserted % STATUSES.length]);
        written += 1;
      }
    })();
    const { ids } = await walk('/pets?limit=50');
    stop = true;
    await writer;
    expect(written).toBeGreaterThan(0);
    const last = ids[ids.length - 1];
    expect(ids).toEqual((await idsInStore()).filter((id) => id <= last));
  });

  it('ends on a full page without an empty page after it, and without a next link', async () => {
    const pending = await idsInStore('pending');
    const cursorAt = (index: number) => codec.encode({ lastId: pending[index], status: PetStatus.Pending });
    // Exactly 7 left after the cursor: one full page, and nothing announced after it.
    const full = await call(url(`/pets?status=pending&limit=7&after=${cursorAt(pending.length - 8)}`));
    expect((full.body as Pet[]).map((pet) => pet.id)).toEqual(pending.slice(-7));
    expect(full.headers.get('link')).toBeNull();
    // Eight left: a full page that announces the last one, which holds one animal and no link.
    const almost = await call(url(`/pets?status=pending&limit=7&after=${cursorAt(pending.length - 9)}`));
    expect((almost.body as Pet[]).map((pet) => pet.id)).toEqual(pending.slice(-8, -1));
    const last = await call(url(nextLink(almost)!));
    expect((last.body as Pet[]).map((pet) => pet.id)).toEqual(pending.slice(-1));
    expect(last.headers.get('link')).toBeNull();
  });

  it('follows a cursor with another page size: the cursor marks a position, not a page', async () => {
    const first = await call(url('/pets?limit=3'));
    const after = new URL(nextLink(first)!, stack.pets.url).searchParams.get('after')!;
    const wider = await call(url(`/pets?limit=10&after=${after}`));
    const direct = await call(url('/pets?limit=13'));
    expect([...(first.body as Pet[]), ...(wider.body as Pet[])]).toEqual(direct.body);
  });

  it("signs with CURSOR_SECRET: another deployment's cursors are refused, its own followed", async () => {
    const other = await startPetsService({ cursorSecret: 'a-production-secret-of-32-characters!' });
    try {
      await postJson(`${other.url}/pets`, { name: 'One', categoryId: 1 });
      await postJson(`${other.url}/pets`, { name: 'Two', categoryId: 1 });
      const ours = new URL(nextLink(await call(url('/pets?limit=1')))!, stack.pets.url).searchParams.get('after')!;
      expectErrorBody(await call(`${other.url}/pets?after=${ours}`), 400, 'VALIDATION_FAILED');
      const first = await call(`${other.url}/pets?limit=1`);
      const second = await call(new URL(nextLink(first)!, other.url).toString());
      expect((second.body as Pet[]).map((pet) => pet.name)).toEqual(['Two']);
      expectErrorBody(await call(url(nextLink(first)!)), 400, 'VALIDATION_FAILED');
    } finally {
      await other.close();
    }
  });

  describe('refuses cursors that are not the one it gave, with 400 and the Error body', () => {
    let soldCursor: string;
    let allCursor: string;
    beforeAll(async () => {
      soldCursor = new URL(nextLink(await call(url('/pets?status=sold&limit=2')))!, stack.pets.url).searchParams.get(
        'after',
      )!;
      allCursor = new URL(nextLink(await call(url('/pets?limit=2')))!, stack.pets.url).searchParams.get('after')!;
    });

    const tamper = (cursor: string) => {
      const middle = Math.floor(cursor.length / 2);
      return cursor.slice(0, middle) + (cursor[middle] === 'A' ? 'B' : 'A') + cursor.slice(middle + 1);
    };

    it.each([
      ['tampered', () => `/pets?status=sold&after=${tamper(soldCursor)}`, 'after is not a valid cursor'],
      ['truncated', () => `/pets?status=sold&after=${soldCursor.slice(0, -2)}`, 'after is not a valid cursor'],
      ['cut to one character', () => `/pets?after=${allCursor.slice(0, 1)}`, 'after is not a valid cursor'],
      ['made up', () => '/pets?after=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'after is not a valid cursor'],
      [
        'signed with another secret',
        () => `/pets?after=${new PageCursorCodec('x'.repeat(40)).encode({ lastId: 5, status: null })}`,
        'after is not a valid cursor',
      ],
      [
        'for status=sold, used with status=pending',
        () => `/pets?status=pending&after=${soldCursor}`,
        'after belongs to the listing of status=sold',
      ],
      [
        'for status=sold, used without status',
        () => `/pets?after=${soldCursor}`,
        'after belongs to the listing of status=sold',
      ],
      [
        'for every status, used with status=sold',
        () => `/pets?status=sold&after=${allCursor}`,
        'after belongs to the listing of every status',
      ],
      ['empty', () => '/pets?after=', 'after must be the cursor of a Link rel="next"'],
      [
        'with characters outside base64url',
        () => `/pets?after=${encodeURIComponent(`${allCursor}+/=`)}`,
        'after must be the cursor',
      ],
      ['longer than 128 characters', () => `/pets?after=${'A'.repeat(129)}`, 'after must be the cursor'],
      ['repeated', () => `/pets?after=${allCursor}&after=${allCursor}`, 'after must be the cursor'],
    ])('%s', async (_case, path, message) => {
      const reply = await call(url(path()));
      expectErrorBody(reply, 400, 'VALIDATION_FAILED');
      expect((reply.body as { message: string }).message).toContain(message);
    });

    it('still accepts the cursors it gave', async () => {
      expect((await call(url(`/pets?status=sold&after=${soldCursor}`))).status).toBe(200);
      expect((await call(url(`/pets?after=${allCursor}`))).status).toBe(200);
    });
  });
});
