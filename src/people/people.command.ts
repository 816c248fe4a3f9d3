// `npm run users:add|list|remove`: the process around peopleCommand (people.cli.ts).
import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { peopleCommand } from './people.cli.js';

// Standard output is for scripts (JSON lines): the command's own words on standard error say what was done.
Logger.overrideLogger(false);
process.exitCode = await peopleCommand(process.argv.slice(2));
