// `npm run users:add|list|remove` (people.command.ts runs it): the inbox's people, in the configured database (DATA_DIR
// or DATABASE_URL, as the service). What a script reads goes to standard output, one JSON object a line; what a person
// reads to standard error. Exit codes: 0 done, 1 refused (the address is a person already, no such person, database),
// 2 usage (unknown command or option, an address that is not one, an unknown role).
import { commandArgs, type CommandOutput, type DatabaseCommand, Refused, runDatabaseCommand, UsageError } from '../database/database-command.js';
import { fieldFailure } from '../leads/lead-rules.js';
import { PeopleService } from './people.service.js';
import { PeopleStore } from './people.store.js';
import type { Person } from './person.js';
import { isRole, ROLES } from './roles.js';
import { SessionsStore } from './sessions.store.js';

const USAGE = `Usage:
  npm run users:add -- --email <address> --role <${ROLES.join('|')}>
  npm run users:list
  npm run users:remove -- <id or address>`;

type Run = (people: PeopleService, io: CommandOutput) => Promise<void>;

const listing = (person: Person) => ({ id: person.id, email: person.email, role: person.role, created_at: new Date(person.createdAt).toISOString() });

function parse(argv: string[]): Run {
  const [command, ...rest] = argv;
  const args = (options?: Parameters<typeof commandArgs>[1], positionals = 0) => commandArgs(rest, options, positionals, 'Give one id or address.');
  switch (command) {
    case 'add': {
      const { values } = args({ email: { type: 'string' }, role: { type: 'string' } });
      const email = (values.email as string | undefined)?.trim() ?? '';
      const role = values.role;
      if (fieldFailure('email', email) !== undefined) throw new UsageError('Give the address the person signs in with: --email <address>.');
      if (!isRole(role)) throw new UsageError(`Give a role: --role ${ROLES.join(', --role ')}.`);
      return async (people, io) => {
        const added = await people.add(email, role);
        if (!added.added) throw new Refused(`${email} is a person of the inbox already (npm run users:list).`);
        io.err(`Added ${added.person.email} as ${role}: they sign in at /inbox with a code sent to that address.`);
        io.out(JSON.stringify(listing(added.person)));
      };
    }
    case 'list': {
      args();
      return async (people, io) => {
        const everyone = await people.list();
        for (const person of everyone) io.out(JSON.stringify(listing(person)));
        io.err(`${everyone.length} ${everyone.length === 1 ? 'person' : 'people'}, one JSON line each on standard output.`);
      };
    }
    case 'remove': {
      const [who] = args({}, 1).positionals;
      return async (people, io) => {
        const person = who.includes('@') ? await people.byAddress(who) : await people.byId(who);
        const change = person ? await people.remove(person.id) : 'missing';
        if (change === 'last_admin') throw new Refused(`${who} is the last admin: make another person admin first.`);
        if (!person || change === 'missing') throw new Refused(`No person ${who} (npm run users:list).`);
        io.err(`Removed ${person.email}: every session of theirs has ended, on every instance.`);
      };
    }
    default:
      throw new UsageError(command ? `Unknown command "${command}".` : 'Name a command.');
  }
}

const PEOPLE: DatabaseCommand<PeopleService> = {
  usage: USAGE,
  parse,
  entities: [],
  service: (dataSource) => new PeopleService(new PeopleStore(dataSource), new SessionsStore(dataSource)),
};

/** Runs one command line against the database `env` (else the process environment) names; resolves to the exit code. */
export function peopleCommand(argv: string[], env?: Record<string, string | undefined>, io?: CommandOutput): Promise<number> {
  return runDatabaseCommand(PEOPLE, argv, env, io);
}
