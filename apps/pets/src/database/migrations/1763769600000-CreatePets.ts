import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The pets table. Ids come from an identity capped at 2^53-1 so that every id is exact as a JSON number;
 * (status, id) serves the status-filtered list in id order, the primary key the unfiltered one.
 */
export class CreatePets1763769600000 implements MigrationInterface {
  name = 'CreatePets1763769600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TYPE "public"."pet_status" AS ENUM('available', 'pending', 'sold')`);
    await queryRunner.query(
      `CREATE TABLE "pets" (` +
        `"id" bigint GENERATED ALWAYS AS IDENTITY (MAXVALUE 9007199254740991) NOT NULL, ` +
        `"name" character varying(100) NOT NULL, ` +
        `"category_id" bigint NOT NULL, ` +
        `"status" "public"."pet_status", ` +
        `CONSTRAINT "PK_pets" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE INDEX "IDX_pets_status_id" ON "pets" ("status", "id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."IDX_pets_status_id"`);
    await queryRunner.query(`DROP TABLE "pets"`);
    await queryRunner.query(`DROP TYPE "public"."pet_status"`);
  }
}
