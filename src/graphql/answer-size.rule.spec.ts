import { buildSchema, getOperationAST, parse } from 'graphql';
import { AnswerEstimate, estimateAnswer } from './answer-size.rule.js';

const schema = buildSchema(`
  type Query { docs: [Doc!]! doc: Doc tree: Node items(first: Int = 50, after: String): ItemPage! }
  type Doc { slug: String! markdown: String! }
  type Node { name: String child: Node }
  type ItemPage { edges: [ItemEdge!]! info: Info! }
  type ItemEdge { cursor: String! node: Item! }
  type Item { name: String! }
  type Info { more: Boolean! }
`);
const sizes = {
  leaves: { 'Doc.markdown': 1000 },
  lists: { 'Query.docs': 5 },
  pages: { 'Query.items': { argument: 'first', default: 50, max: 200 } },
};

function estimateOf(query: string, variables?: Record<string, unknown>): AnswerEstimate | undefined {
  const document = parse(query);
  return estimateAnswer(schema, document, getOperationAST(document)!, sizes, variables);
}
const estimate = (query: string) => estimateOf(query)!.bytes;
const rows = (query: string, variables?: Record<string, unknown>) => estimateOf(query, variables)!.rows;

describe('estimateAnswer: bytes', () => {
  it('multiplies a large field by the aliases, lists and fragments that repeat it', () => {
    const one = estimate('{ docs { markdown } }');
    expect(one).toBeGreaterThan(5 * 1000);
    expect(estimate('{ a: docs { markdown } b: docs { markdown } }')).toBeGreaterThan(2 * 5 * 1000);
    expect(estimate('{ a: docs { ...F } b: docs { ...F } } fragment F on Doc { x: markdown y: markdown }')).toBeGreaterThan(4 * 5 * 1000);
    expect(estimate('{ docs { ... on Doc { x: markdown } y: markdown } }')).toBeGreaterThan(2 * 5 * 1000);
  });

  it('counts a field once per response key, as execution merges them, and a fragment once per selection', () => {
    const one = estimate('{ docs { markdown } }');
    expect(estimate('{ docs { markdown markdown } docs { markdown } }')).toBe(one);
    expect(estimate('{ docs { ...F ...F markdown } } fragment F on Doc { markdown }')).toBe(one);
  });

  it('ends on fragment cycles (reported by validation) and on recursive types', () => {
    expect(estimate('{ ...A } fragment A on Query { tree { ...B } } fragment B on Node { child { ...B } name }')).toBeGreaterThan(0);
    expect(estimate('{ ...A } fragment A on Query { ...A docs { slug } }')).toBeGreaterThan(0);
  });

  it('sizes the lists of a page by its argument, not by the unknown-list guess', () => {
    const page = (first: number) => estimate(`{ items(first: ${first}) { edges { cursor node { name } } info { more } } }`);
    expect(page(200) - page(100)).toBe(2 * (page(100) - page(50)));
    expect(page(1)).toBeLessThan(page(2));
    // One item's bytes, times the page size: pageInfo is not repeated.
    expect(page(200) - page(199)).toBe(page(2) - page(1));
  });
});

describe('estimateAnswer: rows of paged fields', () => {
  it('counts first as given, the schema default when it is absent or null, and at most the page maximum', () => {
    expect(rows('{ items(first: 7) { edges { cursor } } }')).toBe(7);
    expect(rows('{ items { edges { cursor } } }')).toBe(50);
    expect(rows('{ items(first: null) { edges { cursor } } }')).toBe(50);
    // Out of range: the resolver refuses it; the estimate never counts more than a page.
    expect(rows('{ items(first: 100000) { edges { cursor } } }')).toBe(200);
    expect(rows('{ items(first: -5) { edges { cursor } } }')).toBe(0);
    expect(rows('{ docs { slug } }')).toBe(0);
  });

  it('reads first from the variables, and from the variable default when none is sent', () => {
    const query = 'query Page($n: Int) { items(first: $n) { edges { cursor } } }';
    expect(rows(query, { n: 120 })).toBe(120);
    expect(rows(query, {})).toBe(50);
    expect(rows(query, { n: null })).toBe(50);
    expect(rows('query Page($n: Int = 30) { items(first: $n) { edges { cursor } } }', {})).toBe(30);
    expect(rows('query Page($n: Int = 30) { items(first: $n) { edges { cursor } } }', { n: 3 })).toBe(3);
  });

  it('counts every alias, inline fragment and named fragment that asks for a page', () => {
    const aliases = Array.from({ length: 10 }, (_, i) => `a${i}: items(first: 200) { edges { cursor } }`).join(' ');
    expect(rows(`{ ${aliases} }`)).toBe(2000);
    const viaVariables = Array.from({ length: 10 }, (_, i) => `a${i}: items(first: $n) { edges { cursor } }`).join(' ');
    expect(rows(`query Q($n: Int!) { ${viaVariables} }`, { n: 200 })).toBe(2000);
    expect(rows(`query Q($n: Int!) { ${viaVariables} }`, { n: 5 })).toBe(50);
    expect(
      rows(
        '{ a: items(first: 10) { edges { cursor } } ... on Query { b: items(first: 20) { edges { cursor } } } ...F } fragment F on Query { c: items(first: 30) { edges { cursor } } }',
      ),
    ).toBe(60);
    // One response key, merged by execution: one page.
    expect(rows('{ items(first: 10) { edges { cursor } } items(first: 10) { info { more } } }')).toBe(10);
  });

  it('gives up on variables that do not fit the operation (execution refuses them before reading)', () => {
    expect(estimateOf('query Page($n: Int!) { items(first: $n) { edges { cursor } } }', {})).toBeUndefined();
    expect(estimateOf('query Page($n: Int) { items(first: $n) { edges { cursor } } }', { n: 'many' })).toBeUndefined();
  });
});
