// Which folders may import which (`npm run lint:deps`, in CI). The layers, bottom up:
//   foundations: config, logging, problem, request, body, server, database, telemetry: know nothing of any feature;
//   features: one folder per module (leads, sandbox, identity, oauth, auth, rate-limit, ...), wired by their *.module.ts;
//   app: app.module.ts, app.setup.ts and main.ts put them together.
// The CLI (cli/) runs on the user's machine: it may take pure rules from src/ but nothing that pulls in Nest.
const FOUNDATIONS = '^src/(config|logging|problem|request|body|server|database|telemetry)/';
const FEATURES =
  '^src/(auth|cli-download|discovery|docs|forms|graphql|identity|leads|mail|mcp|meta|notifications|oauth|outbox|rate-limit|sandbox|screening|site|versioning)/';
const SPECS = '\\.spec\\.(ts|mjs)$';

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'A cycle makes load order matter and hides which module owns what.', from: {}, to: { circular: true } },
    {
      name: 'foundations-below-features',
      severity: 'error',
      comment: 'Cross-cutting code serves every module; a module registers into it (entities, problem formats), not the other way round.',
      from: { path: FOUNDATIONS, pathNot: SPECS },
      to: { path: `${FEATURES}|^src/app\\.` },
    },
    {
      name: 'producers-know-the-outbox-not-its-channels',
      severity: 'error',
      comment:
        'Events go out through src/outbox/ (docs/decisions/0034-outbox-channels.md): what produces them, and the outbox itself, never reach into a channel (webhooks/, notifications/).',
      from: { path: '^src/(data-subject|leads|outbox)/' },
      to: { path: '^src/(webhooks|notifications)/' },
    },
    {
      name: 'controllers-are-leaves',
      severity: 'error',
      comment: 'Only a module file wires a controller; shared logic lives in services.',
      from: { pathNot: `\\.module\\.ts$|${SPECS}|^test/` },
      to: { path: '\\.controller\\.ts$' },
    },
    {
      name: 'production-code-stays-out-of-tests',
      severity: 'error',
      comment: 'What ships (src/, cli/, migrations/) never imports test helpers, benchmarks or build scripts.',
      from: { path: '^(src|cli|migrations)/', pathNot: SPECS },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'no-dev-dependencies-at-run-time',
      severity: 'error',
      comment: 'npm prune --omit=dev removes them from the image.',
      from: { path: '^(src|migrations)/', pathNot: SPECS },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'cli-takes-only-pure-rules',
      severity: 'error',
      comment: "The CLI bundle runs on the caller's machine: src/ files it imports must not bring Nest, TypeORM or Express.",
      from: { path: '^cli/' },
      to: { path: '^src/', pathNot: '^src/leads/(lead-rules|lead-context|lead-export\\.headers|csv-cells)\\.ts$' },
    },
    {
      name: 'migrations-are-self-contained',
      severity: 'error',
      comment: 'A migration is history: it must not change when an entity or service does.',
      from: { path: '^migrations/' },
      to: { path: '^(src|cli)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
