import { Global, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { ProblemFilter } from './problem.filter.js';
import { ProblemFormats } from './problem-formats.js';

/** The global problem filter, and the registry where modules put their own error formats. */
@Global()
@Module({
  providers: [ProblemFormats, { provide: APP_FILTER, useClass: ProblemFilter }],
  exports: [ProblemFormats],
})
export class ProblemModule {}
