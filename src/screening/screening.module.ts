import { Module } from '@nestjs/common';
import { FormsModule } from '../forms/forms.module.js';
import { RateLimitStoreModule } from '../rate-limit/rate-limit.module.js';
import { CaptchaVerifier } from './captcha-verifier.js';
import { ScreeningService } from './screening.service.js';

/**
 * The verdict of every new lead (docs/decisions/0033-screening.md). LeadsModule imports it, so it knows leads only by
 * their normalised shape. The rate-limit store counts bursts, shared by every instance when Redis is configured.
 */
@Module({ imports: [FormsModule, RateLimitStoreModule], providers: [ScreeningService, CaptchaVerifier], exports: [ScreeningService, CaptchaVerifier] })
export class ScreeningModule {}
