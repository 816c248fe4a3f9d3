import { Module } from '@nestjs/common';
import { FormsController } from './forms.controller.js';

/** The embeddable lead form script and its copy-paste example page. */
@Module({ controllers: [FormsController] })
export class FormsModule {}
