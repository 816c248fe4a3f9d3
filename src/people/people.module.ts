import { Module } from '@nestjs/common';
import { PeopleService } from './people.service.js';
import { PeopleStore } from './people.store.js';
import { SessionsStore } from './sessions.store.js';

/** The inbox's people and their sessions' table (the inbox reads sessions through SessionsStore). */
@Module({
  providers: [PeopleStore, SessionsStore, PeopleService],
  exports: [PeopleService, SessionsStore],
})
export class PeopleModule {}
