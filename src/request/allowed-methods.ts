import type { Request } from 'express';

interface RouteLayer {
  route?: { _methods(includeAll?: boolean): string[] };
  match(path: string): boolean;
}

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * The methods the app's router serves at the request's path, for 405 + Allow (RFC 9110 §15.5.6).
 * Read from Express's route table so that it can never disagree with the routes that exist.
 */
export function allowedMethods(req: Request): string[] {
  const stack = (req.app as unknown as { router?: { stack?: RouteLayer[] } }).router?.stack ?? [];
  const methods = new Set<string>();
  for (const layer of stack) {
    if (!layer.route || !layer.match(req.path)) continue;
    const routeMethods = layer.route._methods();
    // Middleware mounted for every method (Nest applies it as such a route) says nothing about the resource.
    if (routeMethods.length > ORDER.length) continue;
    for (const method of routeMethods) methods.add(method);
  }
  return [...methods].sort((a, b) => ORDER.indexOf(a) - ORDER.indexOf(b));
}
