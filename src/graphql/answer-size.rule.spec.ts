import { buildSchema, parse, validate } from 'graphql';
import { answerSizeRule } from './answer-size.rule.js';

const schema = buildSchema(`
  type Query { docs: [Doc!]! doc: Doc tree: Node }
  type Doc { slug: String! markdown: String! }
  type Node { name: String child: Node }
`);
const sizes = { leaves: { 'Doc.markdown': 1000 }, lists: { 'Query.docs': 5 } };

/** The estimate the rule makes for a query, read from its refusal with a limit of 0. */
function estimate(query: string): number {
  const [error] = validate(schema, parse(query), [answerSizeRule(sizes, 0)]);
  return Number(/about (\d+)/.exec(error.message)![1]);
}

const refused = (query: string, limit: number) => validate(schema, parse(query), [answerSizeRule(sizes, limit)]).map((error) => error.message);

describe('answerSizeRule', () => {
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

  it('ends on fragment cycles (reported by another rule) and on recursive types', () => {
    expect(estimate('{ ...A } fragment A on Query { tree { ...B } } fragment B on Node { child { ...B } name }')).toBeGreaterThan(0);
    expect(estimate('{ ...A } fragment A on Query { ...A docs { slug } }')).toBeGreaterThan(0);
  });

  it('refuses only past the limit, naming it', () => {
    const query = '{ a: docs { markdown } b: docs { markdown } }';
    const bytes = estimate(query);
    expect(refused(query, bytes)).toEqual([]);
    expect(refused(query, bytes - 1)).toEqual([
      `Answer size limit of ${bytes - 1} bytes exceeded: this query could return about ${bytes}; ask for fewer copies of large fields (Doc.markdown).`,
    ]);
  });
});
