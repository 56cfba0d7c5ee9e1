import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Webhook delivery order follows creation order exactly (issue #49, docs/webhooks.md): outbox messages get a
 * sequence (`seq`, set by the database at insert), each delivery carries its message's (`message_seq`), and the
 * deliveries to an endpoint are held and ordered by it. The order was the message's `created_at`, then its id: two
 * messages written in the same millisecond were ordered by their random uuids. Existing messages are numbered in
 * (created_at, id) order, the order they were delivered in until now.
 */
export class AddOutboxMessageSeq1797200000000 implements MigrationInterface {
  name = 'AddOutboxMessageSeq1797200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    // Adding a BIGSERIAL numbers the existing rows 1..n in no particular order (and moves the sequence past n);
    // they are renumbered 1..n in the old order, so the next insert takes n + 1.
    await queryRunner.query(`ALTER TABLE "${s}"."outbox_messages" ADD "seq" BIGSERIAL NOT NULL`);
    await queryRunner.query(
      `UPDATE "${s}"."outbox_messages" m SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n ` +
        `FROM "${s}"."outbox_messages") o WHERE m."id" = o."id"`,
    );
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_deliveries" ADD "message_seq" bigint`);
    await queryRunner.query(
      `UPDATE "${s}"."webhook_deliveries" d SET "message_seq" = m."seq" FROM "${s}"."outbox_messages" m WHERE m."id" = d."message_id"`,
    );
    // Retention deletes no message a delivery refers to: none is left without one; were one, it would go first.
    await queryRunner.query(`UPDATE "${s}"."webhook_deliveries" SET "message_seq" = 0 WHERE "message_seq" IS NULL`);
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_deliveries" ALTER COLUMN "message_seq" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_deliveries" DROP COLUMN "message_created_at"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(
      `ALTER TABLE "${s}"."webhook_deliveries" ADD "message_created_at" TIMESTAMP WITH TIME ZONE`,
    );
    await queryRunner.query(
      `UPDATE "${s}"."webhook_deliveries" d SET "message_created_at" = COALESCE(` +
        `(SELECT m."created_at" FROM "${s}"."outbox_messages" m WHERE m."id" = d."message_id"), d."created_at")`,
    );
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_deliveries" ALTER COLUMN "message_created_at" SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE "${s}"."webhook_deliveries" DROP COLUMN "message_seq"`);
    await queryRunner.query(`ALTER TABLE "${s}"."outbox_messages" DROP COLUMN "seq"`);
  }
}
