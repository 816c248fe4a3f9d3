import { Controller, Get, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { InboxForm, InboxPage } from './inbox-page.guard.js';
import { LeadPagesView } from './lead-pages.view.js';

/**
 * The inbox's lead pages (issue 35): the leads, one lead, the held and spam queue, and their actions, each with the
 * scope the API's route for it demands. Forms post urlencoded with `_csrf` (checked by @InboxPage) and are answered
 * 303 to a page, or with the fragment htmx swaps in.
 */
@Controller('inbox')
export class LeadPagesController {
  constructor(private readonly view: LeadPagesView) {}

  @Get('leads')
  @InboxPage('leads:read')
  leads(@Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.leads(query, req, res);
  }

  @Get('held')
  @InboxPage('leads:read')
  held(@Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.held(query, req, res);
  }

  @Get('requests')
  @InboxPage('leads:read')
  requests(@Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.requests(query, req, res);
  }

  @Post('held/release')
  @InboxPage('leads:screen')
  releaseMany(@InboxForm() form: URLSearchParams, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.decideMany('accepted', form, req, res);
  }

  @Post('held/spam')
  @InboxPage('leads:screen')
  spamMany(@InboxForm() form: URLSearchParams, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.decideMany('spam', form, req, res);
  }

  /** Streamed by the export service, hence @Res(). */
  @Get('export')
  @InboxPage('leads:export')
  export(@Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.export(query, req, res);
  }

  @Get('leads/:id')
  @InboxPage('leads:read')
  lead(@Param('id') id: string, @Query() query: Record<string, unknown>, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.lead(id, query, req, res);
  }

  @Post('leads/:id/release')
  @InboxPage('leads:screen')
  release(@Param('id') id: string, @InboxForm() _form: URLSearchParams, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.decide(id, 'accepted', req, res);
  }

  @Post('leads/:id/spam')
  @InboxPage('leads:screen')
  spam(@Param('id') id: string, @InboxForm() _form: URLSearchParams, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.decide(id, 'spam', req, res);
  }

  @Post('leads/:id/access')
  @InboxPage('leads:read')
  access(@Param('id') id: string, @InboxForm() form: URLSearchParams, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.access(id, form, req, res);
  }

  @Post('leads/:id/erase')
  @InboxPage('leads:erase')
  erase(@Param('id') id: string, @InboxForm() form: URLSearchParams, @Req() req: Request, @Res() res: Response): Promise<void> {
    return this.view.erase(id, form, req, res);
  }
}
