import type { Response } from 'express';
import { ErrorResponse } from './http-error-mapping';

/** Writes an Error body; the only place that serialises one. */
export function writeError(response: Response, error: ErrorResponse): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
  response.status(error.body.status).type('application/json; charset=utf-8').send(JSON.stringify(error.body));
}
