import { MigrationInterface, QueryRunner } from 'typeorm';

/** The schema the data source names (GATEWAY_DB_SCHEMA): the migrations follow it rather than hard-code it. */
function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/**
 * Consumers and their keys. A key is found by its SHA-256 through the unique index (the data plane's one query
 * on a cache miss); a consumer's keys through the consumer_id index; names are unique (create is race-free).
 */
export class CreateConsumers1763942400000 implements MigrationInterface {
  name = 'CreateConsumers1763942400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`CREATE TYPE "${s}"."consumer_plan" AS ENUM('free', 'pro', 'business', 'enterprise')`);
    await queryRunner.query(
      `CREATE TABLE "${s}"."consumers" (` +
        `"id" uuid NOT NULL, ` +
        `"name" character varying(64) NOT NULL, ` +
        `"plan" "${s}"."consumer_plan" NOT NULL, ` +
        `"limit_per_minute" integer, ` +
        `"limit_per_day" integer, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"disabled_at" TIMESTAMP WITH TIME ZONE, ` +
        `CONSTRAINT "UQ_consumers_name" UNIQUE ("name"), ` +
        `CONSTRAINT "PK_consumers" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE TABLE "${s}"."api_keys" (` +
        `"id" uuid NOT NULL, ` +
        `"consumer_id" uuid NOT NULL, ` +
        `"key_hash" character(64) NOT NULL, ` +
        `"hint" character varying(16) NOT NULL, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `"expires_at" TIMESTAMP WITH TIME ZONE, ` +
        `"revoked_at" TIMESTAMP WITH TIME ZONE, ` +
        `CONSTRAINT "UQ_api_keys_key_hash" UNIQUE ("key_hash"), ` +
        `CONSTRAINT "PK_api_keys" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_api_keys_consumer_id" ON "${s}"."api_keys" ("consumer_id")`);
    await queryRunner.query(
      `ALTER TABLE "${s}"."api_keys" ADD CONSTRAINT "FK_api_keys_consumer" FOREIGN KEY ("consumer_id") ` +
        `REFERENCES "${s}"."consumers"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const s = schemaOf(queryRunner);
    await queryRunner.query(`ALTER TABLE "${s}"."api_keys" DROP CONSTRAINT "FK_api_keys_consumer"`);
    await queryRunner.query(`DROP INDEX "${s}"."IDX_api_keys_consumer_id"`);
    await queryRunner.query(`DROP TABLE "${s}"."api_keys"`);
    await queryRunner.query(`DROP TABLE "${s}"."consumers"`);
    await queryRunner.query(`DROP TYPE "${s}"."consumer_plan"`);
  }
}
