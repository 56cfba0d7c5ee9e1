import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { PersonSignIn } from './person-sign-in';

/** Operators' sign-in with their identity provider (docs/sso.md): an ID token exchanged for a short-lived admin token. */
@Module({ imports: [AccessModule], providers: [PersonSignIn], exports: [PersonSignIn] })
export class SsoModule {}
