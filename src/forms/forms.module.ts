import { Module } from '@nestjs/common';
import { FormsController } from './forms.controller.js';
import { FormTokens } from './form-tokens.service.js';
import { SpentFormTokens } from './spent-form-tokens.store.js';

/** The embeddable lead form script, its copy-paste example page, and the form tokens its leads carry. */
@Module({ controllers: [FormsController], providers: [FormTokens, SpentFormTokens], exports: [FormTokens] })
export class FormsModule {}
