import type { Request } from 'express';
import type { Consumer } from '../plans/consumer';

/** The request as it travels through the gateway once the key is known (auth sets it, rate-limit and proxy read it). */
export interface GatewayRequest extends Request {
  consumer?: Consumer;
}
