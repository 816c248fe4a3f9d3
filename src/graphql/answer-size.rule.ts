import {
  type ASTVisitor,
  type FieldNode,
  type GraphQLCompositeType,
  GraphQLError,
  type GraphQLOutputType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type SelectionSetNode,
  type ValidationContext,
} from 'graphql';

/** What the estimate knows of the data, by schema coordinate (`Type.field`). */
export interface AnswerSizes {
  /** Most bytes a leaf field's value takes in the answer. */
  leaves: Record<string, number>;
  /** Most items a list field holds. */
  lists: Record<string, number>;
}

/** Any other leaf: enums, numbers and short strings (names, URLs). */
const SMALL_LEAF = 256;
/** A list the estimate knows nothing about. */
const UNKNOWN_LIST = 100;

/**
 * Refuses, before execution, a query whose answer could exceed `maxBytes`: aliases (and fragments) that repeat a large
 * field multiply its size, which no count of aliases or cost bounds by itself. The estimate follows what execution
 * would return (fields merged by response key, fragments expanded once per selection set) with the largest value
 * of each field; introspection is bounded by the schema and left to the byte check after execution.
 */
export function answerSizeRule(sizes: AnswerSizes, maxBytes: number) {
  return (context: ValidationContext): ASTVisitor => ({
    OperationDefinition(node) {
      const root = context.getSchema().getRootType(node.operation);
      if (!root) return;
      const bytes = objectBytes(context, sizes, root, [node.selectionSet], new Set());
      if (bytes > maxBytes) {
        context.reportError(
          new GraphQLError(
            `Answer size limit of ${maxBytes} bytes exceeded: this query could return about ${bytes}; ask for fewer copies of large fields (Doc.markdown).`,
            {
              nodes: [node],
            },
          ),
        );
      }
    },
  });
}

/** `path`: the fragments expanded above this selection, never expanded again inside it. */
function objectBytes(context: ValidationContext, sizes: AnswerSizes, type: GraphQLCompositeType, sets: SelectionSetNode[], path: ReadonlySet<string>): number {
  let bytes = 2;
  const expanded = new Set(path);
  for (const [key, nodes] of collect(context, sets, expanded)) {
    const name = nodes[0].name.value;
    if (name === '__schema' || name === '__type') continue;
    const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[name] : undefined;
    const subsets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
    bytes += key.length + 4 + (field ? valueBytes(context, sizes, `${type.name}.${name}`, field.type, subsets, expanded) : SMALL_LEAF);
  }
  return bytes;
}

function valueBytes(
  context: ValidationContext,
  sizes: AnswerSizes,
  coordinate: string,
  type: GraphQLOutputType,
  sets: SelectionSetNode[],
  path: ReadonlySet<string>,
): number {
  if (isNonNullType(type)) return valueBytes(context, sizes, coordinate, type.ofType, sets, path);
  if (isListType(type)) return (sizes.lists[coordinate] ?? UNKNOWN_LIST) * (1 + valueBytes(context, sizes, coordinate, type.ofType, sets, path));
  if (isCompositeType(type)) return objectBytes(context, sizes, type, sets, path);
  return sizes.leaves[coordinate] ?? SMALL_LEAF;
}

/**
 * The fields of some selection sets by response key, as graphql-js collects them: each named fragment expanded once,
 * and never one in `expanded` (so a cycle, which another rule reports, cannot loop). Type conditions are ignored, which
 * can only count more.
 */
function collect(
  context: ValidationContext,
  sets: SelectionSetNode[],
  expanded: Set<string>,
  fields = new Map<string, FieldNode[]>(),
): Map<string, FieldNode[]> {
  for (const set of sets) {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = (selection.alias ?? selection.name).value;
        const same = fields.get(key);
        if (same) same.push(selection);
        else fields.set(key, [selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        collect(context, [selection.selectionSet], expanded, fields);
      } else if (!expanded.has(selection.name.value)) {
        expanded.add(selection.name.value);
        const fragment = context.getFragment(selection.name.value);
        if (fragment) collect(context, [fragment.selectionSet], expanded, fields);
      }
    }
  }
  return fields;
}
