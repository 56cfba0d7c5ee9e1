import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GATEWAY_DATA_SOURCE, schemaOf } from '../database/data-source.options';
import { consumerColumns } from '../consumers/consumer-record';
import { KeyRecord, KeyRow, keyRecordOf } from '../keys/key-lookup.repository';

/**
 * The data plane's read of a client binding: the bound consumer by (issuer, client id) (the unique index), as the
 * record a key gives, so that a token's consumer is built and judged as a key's is. Its `keyId` is the binding's id
 * (the usage history's credential column); a binding neither expires nor is revoked: it is deleted.
 */
@Injectable()
export class ClientBindingLookupRepository {
  constructor(@InjectDataSource(GATEWAY_DATA_SOURCE) private readonly dataSource: DataSource) {}

  async find(issuer: string, clientId: string): Promise<KeyRecord | null> {
    const rows: KeyRow[] = await this.dataSource.query(
      `SELECT '' AS key_hash, b.id AS key_id, c.id AS consumer_id, ${consumerColumns('c')}, c.disabled_at, NULL::timestamptz AS expires_at, NULL::timestamptz AS revoked_at, c.allowed_addresses AS consumer_allowed_addresses, b.allowed_addresses AS credential_allowed_addresses ` +
        `FROM "${schemaOf(this.dataSource)}"."client_bindings" b JOIN "${schemaOf(this.dataSource)}"."consumers" c ON c.id = b.consumer_id WHERE b.issuer = $1 AND b.client_id = $2`,
      [issuer, clientId],
    );
    return rows.length === 0 ? null : keyRecordOf(rows[0]);
  }
}
