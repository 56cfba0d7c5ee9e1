import { PGlite } from '@electric-sql/pglite';
import { Client, Pool } from 'pg';
import { PgliteWireServer } from '../../../libs/database/src/pglite-wire-server';
import { newPglite } from '../../support/fixtures';

/** One PGlite, many connections: what the gateway and the tests rely on to share the embedded database. */
describe('PgliteWireServer', () => {
  let db: PGlite;
  let server: PgliteWireServer;
  let url: string;

  beforeAll(async () => {
    db = await newPglite('empty');
    server = new PgliteWireServer(db);
    url = `postgres://postgres@${await server.listen()}/postgres`;
  });
  afterAll(async () => {
    await server.close();
    await db.close();
  });

  it('keeps concurrent parameterised queries and transactions of several connections apart', async () => {
    const pool = new Pool({ connectionString: url, max: 6 });
    try {
      await pool.query('CREATE TABLE t (id int PRIMARY KEY, v text)');
      const transaction = async (i: number) => {
        const client = await pool.connect();
        try {
          await client.query('BEGIN');
          await client.query('INSERT INTO t VALUES ($1, $2)', [i, `v${i}`]);
          await client.query(i % 3 === 0 ? 'ROLLBACK' : 'COMMIT');
        } finally {
          client.release();
        }
      };
      // Each read has its own statement text: a Bind meeting another connection's statement would show.
      const reads = Array.from({ length: 200 }, (_, i) =>
        pool.query(`SELECT $1::int AS n, ${i}::int AS k`, [i]).then((r) => [r.rows[0].n, r.rows[0].k]),
      );
      const [answers] = await Promise.all([
        Promise.all(reads),
        Promise.all(Array.from({ length: 45 }, (_, i) => transaction(i))),
      ]);
      expect(answers).toEqual(Array.from({ length: 200 }, (_, i) => [i, i]));
      expect((await pool.query('SELECT count(*)::int AS n FROM t')).rows[0].n).toBe(30);
    } finally {
      await pool.end();
    }
  });

  it('rolls back the transaction of a connection that drops, so that the others go on', async () => {
    const dropping = new Client({ connectionString: url });
    dropping.on('error', () => undefined);
    await dropping.connect();
    await dropping.query('CREATE TABLE u (id int)');
    await dropping.query('BEGIN');
    await dropping.query('INSERT INTO u VALUES (1)');
    (dropping as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const other = new Client({ connectionString: url });
    await other.connect();
    expect((await other.query('SELECT count(*)::int AS n FROM u')).rows[0].n).toBe(0);
    await other.end();
  });

  it('delivers a NOTIFY to the connections that LISTEN, as a server does', async () => {
    const listener = new Client({ connectionString: url });
    const notifier = new Client({ connectionString: url });
    await listener.connect();
    await notifier.connect();
    const heard = new Promise<string | undefined>((resolve) => listener.on('notification', (n) => resolve(n.payload)));
    await listener.query('LISTEN changes');
    await notifier.query(`SELECT pg_notify('changes', 'hello')`);
    expect(await heard).toBe('hello');
    await listener.end();
    await notifier.end();
  });
});
