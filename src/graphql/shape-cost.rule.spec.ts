import { ApolloArmor } from '@escape.tech/graphql-armor';
import { buildSchema, parse, validate, type ValidationRule } from 'graphql';
import { shapeCostRule } from './shape-cost.rule.js';

const schema = buildSchema(`
  type Query { items(first: Int, after: String): Page! }
  type Page { edges: [Edge!]! }
  type Edge { cursor: String! node: Item! }
  type Item { a: String b: String c: String }
`);

/** graphql-armor's own cost rule, as the module takes it. */
function armorCostRule(maxCost: number): ValidationRule {
  const off = { enabled: false };
  const armor = new ApolloArmor({ maxDepth: off, maxAliases: off, maxDirectives: off, maxTokens: off, blockFieldSuggestion: off, costLimit: { maxCost } });
  return (armor.protect() as unknown as { validationRules: ValidationRule[] }).validationRules[0];
}

const messages = (rule: ValidationRule, query: string) => validate(schema, parse(query), [rule]).map((error) => error.message);
const PAGE = 'edges { cursor node { a b c } }';

describe('shapeCostRule', () => {
  it('costs a page the same whether first is a literal or a variable (armor alone multiplies literals only)', () => {
    const armor = armorCostRule(100);
    expect(messages(armor, `{ items(first: 200) { ${PAGE} } }`)).toEqual([expect.stringMatching(/^Syntax Error: Query Cost limit of 100 exceeded/)]);
    expect(messages(armor, `query Q($n: Int) { items(first: $n) { ${PAGE} } }`)).toEqual([]);
    const shaped = shapeCostRule(armor);
    expect(messages(shaped, `{ items(first: 200) { ${PAGE} } }`)).toEqual([]);
    expect(messages(shaped, `{ ...F } fragment F on Query { items(first: 200, after: "x") { ${PAGE} } }`)).toEqual([]);
  });

  it('still refuses a query whose shape costs too much, through fragments too, with armor’s message', () => {
    const shaped = shapeCostRule(armorCostRule(20));
    const wide = `{ ${Array.from({ length: 4 }, (_, i) => `a${i}: items(first: 1) { ${PAGE} }`).join(' ')} }`;
    expect(messages(shaped, wide)).toEqual([expect.stringMatching(/^Syntax Error: Query Cost limit of 20 exceeded, found \d+/)]);
    const viaFragment = `{ ...F } fragment F on Query { ${Array.from({ length: 4 }, (_, i) => `a${i}: items(first: 1) { ${PAGE} }`).join(' ')} }`;
    expect(messages(shaped, viaFragment)).toEqual([expect.stringMatching(/^Syntax Error: Query Cost limit of 20 exceeded/)]);
  });
});
