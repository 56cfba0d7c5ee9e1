import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { PORTAL_CONFIG, PortalConfig } from '../config/portal.config';

/** Where swagger-ui-dist is (a dependency of @nestjs/swagger): served from here, never a CDN. */
export const SWAGGER_UI_DIST = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The files of swagger-ui-dist the reference page loads (views/reference.hbs): the only ones served. */
export const SWAGGER_UI_FILES: ReadonlySet<string> = new Set(['/swagger-ui.css', '/swagger-ui-bundle.js']);

/**
 * The API reference: Swagger UI over the gateway's own public document (gateway/openapi.json, read once at start),
 * its servers replaced by PORTAL_API_URL, so "Try it out" calls the gateway this portal belongs to. The page's script
 * (assets/reference.js) authorises it with the key last shown in this browser tab.
 */
@Controller('reference')
export class ReferenceController {
  private readonly document: string;
  private readonly apiOrigin: string;

  constructor(@Inject(PORTAL_CONFIG) config: PortalConfig) {
    const document = JSON.parse(readFileSync(path.resolve(config.openApiFile), 'utf8')) as Record<string, unknown>;
    document.servers = [{ url: config.apiUrl, description: 'This gateway' }];
    this.document = JSON.stringify(document);
    this.apiOrigin = new URL(config.apiUrl).origin;
  }

  @Get()
  page(@Res() response: Response): void {
    // Try it out calls the gateway: its origin joins the page's connect-src (the rest of the policy stays).
    const policy = String(response.getHeader('Content-Security-Policy') ?? "default-src 'self'");
    response.setHeader('Content-Security-Policy', `${policy};connect-src 'self' ${this.apiOrigin}`);
    response.render('reference', {
      title: 'API reference',
      reference: true,
      apiUrl: new URL('.', `${this.apiOrigin}/`).href,
    });
  }

  @Get('openapi.json')
  spec(@Res() response: Response): void {
    response.type('application/json').send(this.document);
  }
}
