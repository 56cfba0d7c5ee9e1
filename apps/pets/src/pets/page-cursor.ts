import { ID_RANGE, PET_STATUS_VALUES, PetStatus } from '@app/contract';
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Where a page of GET /pets ended, and which listing (status filter, or all statuses) it belongs to. */
export interface PagePosition {
  lastId: number;
  status: PetStatus | null;
}

/**
 * Signs cursors when CURSOR_SECRET is unset. It is public (it is in this file), so such cursors are still
 * checked for integrity (truncation, edits, foreign listings) but could be minted by someone who reads the
 * source; that gains nothing but a page they could reach by paging. Production sets CURSOR_SECRET.
 */
export const DEVELOPMENT_CURSOR_SECRET = 'petstore-development-cursor-secret';

const VERSION = 1;
const MAC_BYTES = 16;
/** Binds the MAC to this use, so that the secret's MACs mean nothing anywhere else. */
const DOMAIN = 'petstore/list-pets/cursor';
const PAYLOAD = new RegExp(`^([1-9][0-9]{0,15}):(${PET_STATUS_VALUES.join('|')})?$`);

/**
 * The cursor of listPets: base64url of `version (1 byte) | HMAC-SHA256 (first 16 bytes) | "<lastId>:<status>"`.
 * Versioned so that the format can change without breaking cursors in flight; signed so that clients treat it
 * as opaque and every altered, truncated or invented cursor is recognised (and refused with 400) before any
 * query runs.
 */
export class PageCursorCodec {
  constructor(private readonly secret: string) {}

  encode(position: PagePosition): string {
    const payload = Buffer.from(`${position.lastId}:${position.status ?? ''}`, 'ascii');
    const version = Buffer.of(VERSION);
    return Buffer.concat([version, this.mac(version, payload), payload]).toString('base64url');
  }

  /** The position a cursor stands for; undefined when it is not a cursor this service issued. */
  decode(token: string): PagePosition | undefined {
    const bytes = Buffer.from(token, 'base64url');
    // Node decodes leniently: only the canonical spelling of the bytes is accepted (catches truncation).
    if (bytes.toString('base64url') !== token || bytes.length <= 1 + MAC_BYTES) return undefined;
    const version = bytes.subarray(0, 1);
    if (version[0] !== VERSION) return undefined;
    const mac = bytes.subarray(1, 1 + MAC_BYTES);
    const payload = bytes.subarray(1 + MAC_BYTES);
    if (!timingSafeEqual(mac, this.mac(version, payload))) return undefined;
    const match = PAYLOAD.exec(payload.toString('ascii'));
    if (!match) return undefined;
    const lastId = Number(match[1]);
    if (!Number.isSafeInteger(lastId) || lastId < ID_RANGE.min || lastId > ID_RANGE.max) return undefined;
    return { lastId, status: (match[2] as PetStatus | undefined) ?? null };
  }

  private mac(version: Buffer, payload: Buffer): Buffer {
    return createHmac('sha256', this.secret)
      .update(DOMAIN)
      .update(version)
      .update(payload)
      .digest()
      .subarray(0, MAC_BYTES);
  }
}
