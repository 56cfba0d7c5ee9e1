import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * A consumer's threshold events are listed newest first in the order they were written (docs/alerts.md): they get a
 * sequence (`seq`, set by the database at insert), as the outbox messages have. The order was their `created_at`,
 * then their random id: two events written in the same millisecond (80 % and 100 % crossed by one flush) came in
 * either order. Existing events are numbered in (created_at, id) order, the order they were listed in until now.
 */
export class AddThresholdEventSeq1797400000000 implements MigrationInterface {
  name = 'AddThresholdEventSeq1797400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    // Adding a BIGSERIAL numbers the existing rows 1..n in no particular order (and moves the sequence past n);
    // they are renumbered 1..n in the old order, so the next insert takes n + 1.
    await queryRunner.query(`ALTER TABLE "${s}"."threshold_events" ADD "seq" BIGSERIAL NOT NULL`);
    await queryRunner.query(
      `UPDATE "${s}"."threshold_events" e SET "seq" = o.n FROM (SELECT "id", row_number() OVER (ORDER BY "created_at", "id") AS n ` +
        `FROM "${s}"."threshold_events") o WHERE e."id" = o."id"`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."threshold_events" DROP COLUMN "seq"`);
  }
}
