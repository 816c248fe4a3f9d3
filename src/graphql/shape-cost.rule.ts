import { type ASTNode, type FragmentDefinitionNode, type OperationDefinitionNode, type ValidationContext, type ValidationRule, visit } from 'graphql';

/** The arguments graphql-armor's cost limit multiplies a field's cost by. */
const PAGE_ARGUMENTS = new Set(['first', 'last']);

/**
 * graphql-armor's cost limit, made to count a query's shape only. Armor multiplies a field's cost by a literal
 * `first`, but a document is validated before (and cached without) its variables, so `leads(first: 200)` cost 200
 * times what `leads(first: $n)` did with n = 200, and a single full page was over the limit. Pages are counted by
 * answerLimits instead (answer-size.rule.ts), from literals, variables and defaults alike: here the rule sees the
 * document without `first` and `last` (docs/decisions/0026-operator-reads-over-graphql-and-mcp.md).
 */
export function shapeCostRule(costRule: ValidationRule): ValidationRule {
  return (context: ValidationContext) => {
    const getFragment = context.getFragment.bind(context);
    // The context as it is, but for the fragments it hands out (armor expands them itself).
    const shaped = Object.create(context, {
      getFragment: { value: (name: string) => withoutPageSizes<FragmentDefinitionNode | null | undefined>(getFragment(name)) },
    }) as ValidationContext;
    const visitor = costRule(shaped) as { OperationDefinition?: { enter?: (node: OperationDefinitionNode) => void } };
    return { OperationDefinition: (node: OperationDefinitionNode) => visitor.OperationDefinition?.enter?.(withoutPageSizes(node)) };
  };
}

function withoutPageSizes<T extends ASTNode | null | undefined>(node: T): T {
  return node && (visit(node, { Argument: (argument) => (PAGE_ARGUMENTS.has(argument.name.value) ? null : undefined) }) as T);
}
