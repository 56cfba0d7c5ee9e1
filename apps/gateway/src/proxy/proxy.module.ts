import { Module } from '@nestjs/common';
import { PetsProxyController } from './pets-proxy.controller';
import { UpstreamService } from './upstream.service';

/** The pets operations (the /v1 routes and their OpenAPI description) and the forwarding to the pets service. */
@Module({
  controllers: [PetsProxyController],
  providers: [UpstreamService],
})
export class ProxyModule {}
