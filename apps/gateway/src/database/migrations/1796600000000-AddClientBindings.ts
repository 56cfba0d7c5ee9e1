import { MigrationInterface, QueryRunner } from 'typeorm';

function schemaOf(queryRunner: QueryRunner): string {
  return (queryRunner.connection.options as { schema?: string }).schema ?? 'public';
}

/** OAuth clients bound to consumers (issue #50): an issuer's client id authenticates as the consumer. */
export class AddClientBindings1796600000000 implements MigrationInterface {
  name = 'AddClientBindings1796600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const schema = schemaOf(queryRunner);
    await queryRunner.query(
      `CREATE TABLE "${schema}"."client_bindings" ("id" uuid NOT NULL, "consumer_id" uuid NOT NULL, ` +
        `"issuer" character varying(2048) NOT NULL, "client_id" character varying(255) NOT NULL, ` +
        `"created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), ` +
        `CONSTRAINT "UQ_client_bindings_issuer_client" UNIQUE ("issuer", "client_id"), ` +
        `CONSTRAINT "PK_client_bindings" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "IDX_client_bindings_consumer_id" ON "${schema}"."client_bindings" ("consumer_id")`,
    );
    await queryRunner.query(
      `ALTER TABLE "${schema}"."client_bindings" ADD CONSTRAINT "FK_client_bindings_consumer" FOREIGN KEY ("consumer_id") ` +
        `REFERENCES "${schema}"."consumers"("id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "${schemaOf(queryRunner)}"."client_bindings"`);
  }
}
