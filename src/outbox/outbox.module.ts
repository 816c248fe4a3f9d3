import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LeadsModule } from '../leads/leads.module.js';
import { OutboxDelivery } from './outbox-delivery.entity.js';
import { OutboxMessage } from './outbox-message.entity.js';
import { OutboxStore } from './outbox-store.js';
import { OutboxWorker } from './outbox-worker.service.js';
import { Outbox } from './outbox.service.js';

/**
 * The transactional outbox (docs/decisions/0034-outbox-channels.md): producers write through Outbox, channels
 * (src/webhooks/ first) plug into it, one worker delivers. The store is exported for what reads the tables whole
 * (health's backlog, a channel's attempt log and replay).
 */
@Module({
  imports: [TypeOrmModule.forFeature([OutboxMessage, OutboxDelivery]), LeadsModule],
  providers: [Outbox, OutboxStore, OutboxWorker],
  exports: [Outbox, OutboxStore],
})
export class OutboxModule {}
