import { Module } from '@nestjs/common';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { OAuthModule } from '../oauth/oauth.module.js';
import { PeopleModule } from '../people/people.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { InboxModule } from './inbox.module.js';
import { SettingsClients } from './settings-clients.service.js';
import { SettingsPage } from './settings-page.js';
import { SettingsPeople } from './settings-people.service.js';
import { SettingsRecipients } from './settings-recipients.service.js';
import { SettingsWebhooks } from './settings-webhooks.service.js';
import { SettingsController } from './settings.controller.js';

/** The inbox's settings pages (issue 35) over the services of the API and of src/people/. */
@Module({
  imports: [InboxModule, PeopleModule, NotificationsModule, WebhooksModule, OAuthModule],
  controllers: [SettingsController],
  providers: [SettingsPage, SettingsPeople, SettingsRecipients, SettingsWebhooks, SettingsClients],
})
export class SettingsModule {}
