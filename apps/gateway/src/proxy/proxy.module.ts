import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { PetsProxyController } from './pets-proxy.controller';
import { ProxyFastPath } from './proxy-fast-path';
import { SunsetInterceptor } from './sunset.interceptor';
import { UpstreamService } from './upstream.service';

@Module({
  imports: [AuthModule],
  controllers: [PetsProxyController],
  providers: [UpstreamService, SunsetInterceptor, ProxyFastPath],
  exports: [ProxyFastPath],
})
export class ProxyModule {}
