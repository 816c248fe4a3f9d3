import { Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { SecretBox } from './secret-box.js';
import { secretsKey } from './secrets-key.js';

/** One SecretBox for every module that stores secrets it must read back; the service does not start without its key. */
@Global()
@Module({
  providers: [{ provide: SecretBox, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new SecretBox(secretsKey(config)) }],
  exports: [SecretBox],
})
export class SecretsModule {}
