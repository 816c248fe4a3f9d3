// Every migration, oldest first. A list rather than a folder scan: the production build is one bundle, with no
// migration files beside it to find at run time. src/database/migrations.spec.ts fails when a migration is not listed.
import { InitialSchema1763800000000 } from './1763800000000-initial-schema.js';
import { AgentAuth1763900000000 } from './1763900000000-agent-auth.js';
import { DropIdempotencyResponseStatus1764000000000 } from './1764000000000-drop-idempotency-response-status.js';
import { RegistrationAddress1764100000000 } from './1764100000000-registration-address.js';
import { OperatorClients1764200000000 } from './1764200000000-operator-clients.js';
import { LeadReadColumns1764300000000 } from './1764300000000-lead-read-columns.js';
import { Webhooks1764400000000 } from './1764400000000-webhooks.js';
import { ConsentAndContext1764500000000 } from './1764500000000-consent-and-context.js';
import { DataSubjectRequests1764600000000 } from './1764600000000-data-subject-requests.js';
import { AgentRefreshTokens1764700000000 } from './1764700000000-agent-refresh-tokens.js';
import { CompatibilityAddresses1764850000000 } from './1764850000000-compatibility-addresses.js';
import { RegistrationAddresses1764960000000 } from './1764960000000-registration-addresses.js';
import { LeadScreening1765100000000 } from './1765100000000-lead-screening.js';
import { FormTokensSpent1765400000000 } from './1765400000000-form-tokens-spent.js';
import { OutboxChannels1765600000000 } from './1765600000000-outbox-channels.js';
import { NotificationRecipients1765700000000 } from './1765700000000-notification-recipients.js';
import { NotificationDigests1765800000000 } from './1765800000000-notification-digests.js';
import { InboxPeople1765900000000 } from './1765900000000-inbox-people.js';
import { LeadSearch1766000000000 } from './1766000000000-lead-search.js';
import { LeadReviewIndexes1766100000000 } from './1766100000000-lead-review-indexes.js';
import { OutboxSubscriberChanges1766110000000 } from './1766110000000-outbox-subscriber-changes.js';
import { SelfServiceRequests1766200000000 } from './1766200000000-self-service-requests.js';
import { AgentClaims1766300000000 } from './1766300000000-agent-claims.js';
import { OutboxTraceContext1766400000000 } from './1766400000000-outbox-trace-context.js';
import { InboxPeopleOidcSubject1766500000000 } from './1766500000000-inbox-people-oidc-subject.js';
import { PrivacyRequestResumeClaim1766600000000 } from './1766600000000-privacy-request-resume-claim.js';

export const MIGRATIONS = [
  InitialSchema1763800000000,
  AgentAuth1763900000000,
  DropIdempotencyResponseStatus1764000000000,
  RegistrationAddress1764100000000,
  OperatorClients1764200000000,
  LeadReadColumns1764300000000,
  Webhooks1764400000000,
  ConsentAndContext1764500000000,
  DataSubjectRequests1764600000000,
  AgentRefreshTokens1764700000000,
  CompatibilityAddresses1764850000000,
  RegistrationAddresses1764960000000,
  LeadScreening1765100000000,
  FormTokensSpent1765400000000,
  OutboxChannels1765600000000,
  NotificationRecipients1765700000000,
  NotificationDigests1765800000000,
  InboxPeople1765900000000,
  LeadSearch1766000000000,
  LeadReviewIndexes1766100000000,
  OutboxSubscriberChanges1766110000000,
  SelfServiceRequests1766200000000,
  AgentClaims1766300000000,
  OutboxTraceContext1766400000000,
  InboxPeopleOidcSubject1766500000000,
  PrivacyRequestResumeClaim1766600000000,
];
