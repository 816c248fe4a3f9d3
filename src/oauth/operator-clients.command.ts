// `npm run clients:create|list|rotate|revoke`: the process around clientsCommand (operator-clients.cli.ts).
import 'reflect-metadata';
import { clientsCommand } from './operator-clients.cli.js';

process.exitCode = await clientsCommand(process.argv.slice(2));
