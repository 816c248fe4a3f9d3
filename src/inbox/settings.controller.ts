import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { OPERATOR_SCOPES } from '../auth/scopes.js';
import { MANAGE_PEOPLE } from '../people/roles.js';
import { CurrentPerson, InboxForm, InboxPage } from './inbox-page.guard.js';
import type { PersonPrincipal } from './inbox-sessions.service.js';
import { SettingsClients } from './settings-clients.service.js';
import { SettingsPeople } from './settings-people.service.js';
import { SettingsRecipients } from './settings-recipients.service.js';
import { SettingsWebhooks } from './settings-webhooks.service.js';

/**
 * A client may be given any operator scope, so only a person holding them all (an admin) makes, rotates or revokes one.
 */
const CLIENTS = OPERATOR_SCOPES as [string, ...string[]];

/**
 * The inbox's settings pages (issue 35): each area needs the scope its API needs (people and API clients: admins).
 * Changes are POSTed forms answered 303 to their page, except those that show a secret once (their answer is the page).
 */
@Controller('inbox/settings')
export class SettingsController {
  constructor(
    private readonly people: SettingsPeople,
    private readonly recipients: SettingsRecipients,
    private readonly webhooks: SettingsWebhooks,
    private readonly clients: SettingsClients,
  ) {}

  @Get()
  @InboxPage()
  index(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal) {
    return this.people.index(req, res, person);
  }

  @Get('people')
  @InboxPage(MANAGE_PEOPLE)
  listPeople(@Req() req: Request, @Res() res: Response) {
    return this.people.list(req, res);
  }

  @Post('people')
  @InboxPage(MANAGE_PEOPLE)
  addPerson(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @InboxForm() form: URLSearchParams) {
    return this.people.add(req, res, person, form);
  }

  @Post('people/:id/role')
  @InboxPage(MANAGE_PEOPLE)
  changeRole(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string, @InboxForm() form: URLSearchParams) {
    return this.people.changeRole(req, res, person, id, form);
  }

  @Post('people/:id/remove')
  @InboxPage(MANAGE_PEOPLE)
  removePerson(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string) {
    return this.people.remove(req, res, person, id);
  }

  @Get('recipients')
  @InboxPage('notifications:manage')
  listRecipients(@Req() req: Request, @Res() res: Response) {
    return this.recipients.list(req, res);
  }

  @Post('recipients')
  @InboxPage('notifications:manage')
  addRecipient(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @InboxForm() form: URLSearchParams) {
    return this.recipients.add(req, res, person, form);
  }

  @Post('recipients/:id/resend')
  @InboxPage('notifications:manage')
  resendConfirmation(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string) {
    return this.recipients.resend(req, res, person, id);
  }

  @Post('recipients/:id/remove')
  @InboxPage('notifications:manage')
  removeRecipient(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string) {
    return this.recipients.remove(req, res, person, id);
  }

  @Get('webhooks')
  @InboxPage('webhooks:manage')
  listWebhooks(@Req() req: Request, @Res() res: Response) {
    return this.webhooks.list(req, res);
  }

  @Post('webhooks')
  @InboxPage('webhooks:manage')
  createWebhook(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @InboxForm() form: URLSearchParams) {
    return this.webhooks.create(req, res, person, form);
  }

  @Get('webhooks/:id')
  @InboxPage('webhooks:manage')
  showWebhook(@Req() req: Request, @Res() res: Response, @Param('id') id: string) {
    return this.webhooks.show(req, res, id);
  }

  @Post('webhooks/:id/test')
  @InboxPage('webhooks:manage')
  testWebhook(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string) {
    return this.webhooks.test(req, res, person, id);
  }

  @Post('webhooks/:id/replay')
  @InboxPage('webhooks:manage')
  replayWebhook(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPerson() person: PersonPrincipal,
    @Param('id') id: string,
    @InboxForm() form: URLSearchParams,
  ) {
    return this.webhooks.replay(req, res, person, id, form);
  }

  @Post('webhooks/:id/rotate')
  @InboxPage('webhooks:manage')
  rotateWebhook(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string) {
    return this.webhooks.rotate(req, res, person, id);
  }

  @Post('webhooks/:id/status')
  @InboxPage('webhooks:manage')
  webhookStatus(
    @Req() req: Request,
    @Res() res: Response,
    @CurrentPerson() person: PersonPrincipal,
    @Param('id') id: string,
    @InboxForm() form: URLSearchParams,
  ) {
    return this.webhooks.setStatus(req, res, person, id, form);
  }

  @Get('clients')
  @InboxPage(...CLIENTS)
  listClients(@Req() req: Request, @Res() res: Response) {
    return this.clients.list(req, res);
  }

  @Post('clients')
  @InboxPage(...CLIENTS)
  createClient(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @InboxForm() form: URLSearchParams) {
    return this.clients.create(req, res, person, form);
  }

  @Post('clients/:id/rotate')
  @InboxPage(...CLIENTS)
  rotateClient(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string) {
    return this.clients.rotate(req, res, person, id);
  }

  @Post('clients/:id/revoke')
  @InboxPage(...CLIENTS)
  revokeClient(@Req() req: Request, @Res() res: Response, @CurrentPerson() person: PersonPrincipal, @Param('id') id: string) {
    return this.clients.revoke(req, res, person, id);
  }
}
