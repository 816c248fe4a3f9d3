import { Injectable } from '@nestjs/common';
import { Resolver, systemResolver } from './webhook-address.js';

/** The client that sends attempts. */
export const WEBHOOK_HTTP_CLIENT = Symbol('WEBHOOK_HTTP_CLIENT');

/**
 * How webhook hosts are looked up, when an endpoint is created or changed and at each attempt: the system's resolver,
 * which tests replace to answer for names this machine cannot look up (it has no internet).
 */
@Injectable()
export class WebhookResolver {
  resolve: Resolver = systemResolver;
}
