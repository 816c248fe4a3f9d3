// Reports the (operation, status) pairs the contract documents that no e2e test exercised. expectContract
// (test/support/contract.ts) records each pair it validates, into one file per jest project (CONTRACT_COVERAGE_PROJECT,
// a project global in jest.config.cjs) and process, in a folder this reporter makes; at the end of the run the pairs
// are compared with the contract as served (dist/openapi-leads.json). It reports; it never fails the run. One line,
// unless CONTRACT_COVERAGE=1 (`npm run test:coverage-contract`) asks for the pairs.
const { mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

class ContractCoverageReporter {
  constructor(globalConfig) {
    this.globalConfig = globalConfig;
    this.dir = mkdtempSync(join(tmpdir(), 'contract-coverage-'));
    // Test workers are started after the reporters and inherit this; an in-band run reads it in this process.
    process.env.CONTRACT_COVERAGE_DIR = this.dir;
  }

  onRunComplete(contexts) {
    try {
      const projects = [...contexts].map((context) => context.config.globals?.CONTRACT_COVERAGE_PROJECT).filter(Boolean);
      if (projects.length) process.stderr.write(this.report([...new Set(projects)].sort()));
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  report(projects) {
    const contract = JSON.parse(readFileSync(join(this.globalConfig.rootDir, 'dist/openapi-leads.json'), 'utf8'));
    const documented = Object.entries(contract.paths).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).flatMap((method) =>
        Object.keys(item[method].responses).map((status) => `${method.toUpperCase()} ${path} ${status}`),
      ),
    );
    const seen = new Map(projects.map((project) => [project, new Set()]));
    for (const file of readdirSync(this.dir)) {
      const pairs = seen.get(file.slice(0, file.indexOf('.')));
      for (const pair of readFileSync(join(this.dir, file), 'utf8').split('\n').filter(Boolean)) pairs?.add(pair);
    }
    const never = documented.filter((pair) => projects.every((project) => !seen.get(project).has(pair)));
    const { testPathPatterns, testNamePattern, onlyChanged, findRelatedTests } = this.globalConfig;
    const partial = testPathPatterns?.isSet?.() || testNamePattern || onlyChanged || findRelatedTests;
    const summary = `Contract coverage: documented (operation, status) pairs exercised by the e2e suites (through expectContract): ${projects
      .map((project) => `${project} ${documented.filter((pair) => seen.get(project).has(pair)).length}/${documented.length}`)
      .join(', ')}`;
    if (!process.env.CONTRACT_COVERAGE) return `${summary}; ${never.length} never (CONTRACT_COVERAGE=1 lists them).\n`;
    const lines = ['', `${summary}.`];
    if (partial) {
      lines.push(`A partial run: ${never.length} pairs not exercised here (run every suite for the list).`);
    } else {
      lines.push(never.length ? `Never exercised (${never.length}):` : 'Every documented pair was exercised.', ...never.map((pair) => `  ${pair}`));
      for (const project of projects) {
        const elsewhere = documented.filter((pair) => !never.includes(pair) && !seen.get(project).has(pair));
        if (elsewhere.length) lines.push(`Exercised, but not on ${project} (${elsewhere.length}):`, ...elsewhere.map((pair) => `  ${pair}`));
      }
    }
    return `${lines.join('\n')}\n\n`;
  }
}

module.exports = ContractCoverageReporter;
