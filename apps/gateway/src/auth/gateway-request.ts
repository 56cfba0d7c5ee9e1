import type { Request } from 'express';
import type { Consumer } from '../plans/consumer';

/** The request as it travels through the gateway once the key is known (auth sets it, rate-limit and proxy read it). */
export interface GatewayRequest extends Request {
  consumer?: Consumer;
  /** The id of the key it came with (never the key), for the usage history. */
  usageKeyId?: string;
}
