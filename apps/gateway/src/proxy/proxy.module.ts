import { Module } from '@nestjs/common';
import { PetsProxyController } from './pets-proxy.controller';
import { SunsetInterceptor } from './sunset.interceptor';
import { UpstreamService } from './upstream.service';

@Module({ controllers: [PetsProxyController], providers: [UpstreamService, SunsetInterceptor] })
export class ProxyModule {}
