import { Module } from '@nestjs/common';
import { PetsProxyController } from './pets-proxy.controller';
import { UpstreamService } from './upstream.service';

@Module({ controllers: [PetsProxyController], providers: [UpstreamService] })
export class ProxyModule {}
