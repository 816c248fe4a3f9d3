import { Module, OnModuleInit } from '@nestjs/common';
import { OutboxModule } from '../outbox/outbox.module.js';
import { Outbox } from '../outbox/outbox.service.js';
import { VerificationMailChannel } from './verification-mail.channel.js';
import { VerificationService } from './verification.service.js';
import { VerificationStore } from './verification.store.js';

/** Codes sent to an address (issue 35): the inbox's sign-in uses it, and so may any flow that verifies an address. */
@Module({
  imports: [OutboxModule],
  providers: [VerificationStore, VerificationService, VerificationMailChannel],
  exports: [VerificationService],
})
export class VerificationModule implements OnModuleInit {
  constructor(
    private readonly outbox: Outbox,
    private readonly channel: VerificationMailChannel,
  ) {}

  onModuleInit(): void {
    this.outbox.register(this.channel);
  }
}
