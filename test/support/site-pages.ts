/** Every HTML page of the documentation site: each must carry the one navigation. Listed here, not read from the code, so that a page dropped from the site fails the tests. */
export const SITE_PAGES = [
  '/docs',
  '/docs/quickstart',
  '/docs/agents',
  '/docs/operators',
  '/docs/webhooks',
  '/docs/privacy',
  '/docs/errors',
  '/docs/api-versioning',
  '/api/v1/graphql',
  '/cli/',
  '/forms/example',
] as const;
