// PLACEHOLDER (replaced by the i21-secrets branch)
import { Global, Module } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { SecretBox } from './secret-box.js';
@Global()
@Module({ providers: [{ provide: SecretBox, useValue: new SecretBox(randomBytes(32)) }], exports: [SecretBox] })
export class SecretsModule {}
