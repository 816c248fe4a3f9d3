import { applyDecorators, Controller, Get, Header } from '@nestjs/common';
import { PublicJwk } from '../oauth/key-store.service.js';
import { DiscoveryService } from './discovery.service.js';

/** Cacheable and readable from any origin (docs/decisions/0010-discovery-documents.md). */
const discovery = () => applyDecorators(Header('Cache-Control', 'public, max-age=300'), Header('Access-Control-Allow-Origin', '*'));

@Controller('.well-known')
export class DiscoveryController {
  constructor(private readonly discovery: DiscoveryService) {}

  @Get('oauth-protected-resource')
  @discovery()
  protectedResource(): Record<string, unknown> {
    return this.discovery.protectedResource;
  }

  @Get('oauth-authorization-server')
  @discovery()
  authorizationServer(): Record<string, unknown> {
    return this.discovery.authorizationServer;
  }

  /** The same document: the service has no authorization endpoint and issues no ID tokens, and says only that. */
  @Get('openid-configuration')
  @discovery()
  openidConfiguration(): Record<string, unknown> {
    return this.discovery.authorizationServer;
  }

  @Get('jwks.json')
  @discovery()
  jwks(): Promise<{ keys: PublicJwk[] }> {
    return this.discovery.jwks();
  }
}
