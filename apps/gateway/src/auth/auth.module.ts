import { Global, Module } from '@nestjs/common';
import { ConsumerRegistry } from './consumer-registry.service';

@Global()
@Module({ providers: [ConsumerRegistry], exports: [ConsumerRegistry] })
export class AuthModule {}
