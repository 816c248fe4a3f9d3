import { RequestMethod, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { DiscoveryService, MetadataScanner, ModulesContainer, Reflector } from '@nestjs/core';
import { openApiSecurity, routeAuth } from '../src/auth/bearer.guard.js';
import { routeBody } from '../src/body/body.guard.js';
import { inboxSecurity, pageRule } from '../src/inbox/inbox-page.guard.js';
import { CONTRACT } from './support/contract.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * The contract's operations against the application's routes, both ways: every route is documented, every operation
 * is served (or documented as answered by the router alone: only 405), each operation's `security` is what the
 * route's auth decorator says (bearer.guard.ts), and a route that reads @Body() declares the requestBody's media type.
 */

interface Route {
  method: string;
  path: string;
  name: string;
  security: unknown;
  consumes?: string;
  readsBody: boolean;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

function routesOf(t: TestApp): Route[] {
  const reflector = t.app.get(Reflector);
  const scanner = new MetadataScanner();
  const join = (...parts: string[]) =>
    `/${parts
      .flatMap((part) => part.split('/'))
      .filter(Boolean)
      .join('/')}`;
  const asList = (value: string | string[] | undefined) => (Array.isArray(value) ? value : [value ?? '']);
  const routes: Route[] = [];
  for (const wrapper of new DiscoveryService(t.app.get(ModulesContainer)).getControllers()) {
    const controller = wrapper.metatype as Type;
    for (const methodName of scanner.getAllMethodNames(controller.prototype)) {
      const handler = (controller.prototype as Record<string, () => unknown>)[methodName];
      const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (paths === undefined) continue;
      const context = { getHandler: () => handler, getClass: () => controller };
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, methodName) ?? {}) as Record<string, unknown>;
      for (const prefix of asList(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined)) {
        for (const path of asList(paths)) {
          routes.push({
            method: RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod].toLowerCase(),
            path: join(prefix, path),
            name: `${controller.name}.${methodName}`,
            security: inboxSecurity(pageRule(reflector, context)) ?? openApiSecurity(routeAuth(reflector, context)),
            consumes: routeBody(reflector, context)?.mediaType,
            readsBody: Object.keys(args).some((key) => key.split(':')[0] === String(RouteParamtypes.BODY)),
          });
        }
      }
    }
  }
  return routes;
}

/** Does the route's path (`:param` segments) serve this contract path (a literal, or `{param}` segments)? */
function serves(route: Route, contractPath: string): boolean {
  const pattern = new RegExp(`^${route.path.replace(/[.]/g, '\\.').replace(/:[^/]+/g, '[^/]+')}$`);
  return pattern.test(contractPath.replace(/\/$/, '') || '/');
}

describe('routes and the contract', () => {
  let t: TestApp;
  let routes: Route[];
  const operations = Object.entries(
    CONTRACT.paths as Record<string, Record<string, { operationId: string; security?: unknown; responses: object; requestBody?: { content: object } }>>,
  ).flatMap(([path, item]) => METHODS.filter((method) => item[method]).map((method) => ({ path, method, ...item[method] })));

  beforeAll(async () => {
    t = await startTestApp();
    routes = routesOf(t);
  });
  afterAll(() => t.close());

  /** The route that answers an operation: a literal path before a `:param` one, as Express matches them here. */
  const routeFor = (operation: { path: string; method: string }) =>
    routes
      .filter((route) => route.method === operation.method && serves(route, operation.path))
      .sort((a, b) => Number(a.path.includes(':')) - Number(b.path.includes(':')))[0];

  it('finds the application routes', () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(routes).toContainEqual(expect.objectContaining({ method: 'post', path: '/api/v1/sandbox', consumes: 'application/json', readsBody: true }));
  });

  it('documents every route', () => {
    const undocumented = routes.filter((route) => !operations.some((operation) => operation.method === route.method && serves(route, operation.path)));
    expect(undocumented.map((route) => `${route.method.toUpperCase()} ${route.path} (${route.name})`)).toEqual([]);
  });

  it('serves every operation, except those documented as the router’s 405 alone', () => {
    const unserved = operations.filter((operation) => !routeFor(operation) && Object.keys(operation.responses).join() !== '405');
    expect(unserved.map((operation) => operation.operationId)).toEqual([]);
  });

  it('states for each operation the security its route’s decorator gives (none, @OptionalBearer(), @RequireScopes(), @InboxPage())', () => {
    const found = operations.filter(routeFor).map((operation) => [operation.operationId, operation.security ?? CONTRACT.security]);
    const expected = operations.filter(routeFor).map((operation) => [operation.operationId, routeFor(operation).security]);
    expect(found).toEqual(expected);
  });

  it('gives every route that reads @Body() a @Consumes() media type that its operation documents', () => {
    const mismatched = operations
      .filter((operation) => routeFor(operation)?.readsBody || routeFor(operation)?.consumes)
      .filter((operation) => {
        const route = routeFor(operation);
        return !route.consumes || !Object.keys(operation.requestBody?.content ?? {}).includes(route.consumes);
      });
    expect(
      mismatched.map((operation) => `${operation.operationId}: ${routeFor(operation).consumes} / ${Object.keys(operation.requestBody?.content ?? {})}`),
    ).toEqual([]);
  });
});
