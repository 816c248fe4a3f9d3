import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { BodyMediaType, formBodyOf, JSON_MEDIA_TYPE, jsonBodyOf, jsonObjectBodyOf } from './request-body.js';

export interface RouteBody {
  mediaType: BodyMediaType;
  /** JSON only: any JSON value rather than an object (the route answers non-objects itself). */
  anyValue: boolean;
}

const CONSUMES = Symbol('consumes');

/**
 * The route reads its body, with @Body(), as this media type: JSON routes answer any other with 415, and a JSON value
 * that is not an object with 400 body_not_object unless `anyValue`; form routes (OAuth) answer 400 invalid_request.
 * The media type is the one of the operation's requestBody in the contract (test/route-contract.e2e-spec.ts).
 */
export const Consumes = (mediaType: BodyMediaType, options: { anyValue?: boolean } = {}) =>
  SetMetadata(CONSUMES, { mediaType, anyValue: options.anyValue ?? false } satisfies RouteBody);

export function routeBody(reflector: Reflector, context: Pick<ExecutionContext, 'getHandler' | 'getClass'>): RouteBody | undefined {
  return reflector.getAllAndOverride<RouteBody | undefined>(CONSUMES, [context.getHandler(), context.getClass()]);
}

/**
 * Refuses, on routes marked @Consumes, a body that is not of the declared media type or that failed its rules in the
 * body middleware. A guard so that it runs after authentication and rate limiting (registered after them in
 * AppModule) and before pipes: the ValidationPipe then only ever sees a parsed object.
 */
@Injectable()
export class BodyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const body = routeBody(this.reflector, context);
    if (!body) return true;
    const req = context.switchToHttp().getRequest<Request>();
    if (body.mediaType !== JSON_MEDIA_TYPE) formBodyOf(req);
    else if (body.anyValue) jsonBodyOf(req);
    else jsonObjectBodyOf(req);
    return true;
  }
}
