import type { ApolloServerPlugin } from '@apollo/server';
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  getArgumentValues,
  getVariableValues,
  type GraphQLCompositeType,
  GraphQLError,
  type GraphQLField,
  type GraphQLOutputType,
  type GraphQLSchema,
  isCompositeType,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';

/** What the estimate knows of the data, by schema coordinate (`Type.field`). */
export interface AnswerSizes {
  /** Most bytes a leaf field's value takes in the answer. */
  leaves: Record<string, number>;
  /** Most items a list field holds. */
  lists: Record<string, number>;
  /**
   * Paged fields (Relay connections): how many rows one returns is an argument of the field (`first`), and each list of
   * its type (`edges`) holds that many. Their rows are also counted against the row limit.
   */
  pages?: Record<string, PageSize>;
}

export interface PageSize {
  argument: string;
  /** When the argument is not given (or null). */
  default: number;
  /** The most the field answers; a larger value is refused by the resolver, so it never reads more. */
  max: number;
}

export interface AnswerEstimate {
  /** Bytes the answer could take. */
  bytes: number;
  /** Rows the paged fields could read, every alias and enclosing list counted. */
  rows: number;
}

/** Any other leaf: enums, numbers and short strings (names, URLs). */
const SMALL_LEAF = 256;
/** A list the estimate knows nothing about. */
const UNKNOWN_LIST = 100;

/**
 * Refuses, before execution, a query whose answer could exceed `maxBytes` or whose paged fields could read more than
 * `maxRows` rows: aliases (and fragments) that repeat a large or paged field multiply it, which no count of aliases or
 * cost bounds by itself. It runs once the operation and its variables are known (Apollo caches validated documents,
 * so a validation rule could not see a `first` given as a variable), and its refusal is a validation error like
 * graphql-armor's: GRAPHQL_VALIDATION_FAILED, 400 for application/graphql-response+json.
 */
export function answerLimits(sizes: AnswerSizes, maxBytes: number, maxRows: number): ApolloServerPlugin {
  const refusal = (message: string) => new GraphQLError(message, { extensions: { code: 'GRAPHQL_VALIDATION_FAILED', http: { status: 400 } } });
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, request }) {
          const estimate = operation && estimateAnswer(schema, document, operation, sizes, request.variables);
          if (!estimate) return;
          if (estimate.rows > maxRows) {
            throw refusal(
              `Row limit of ${maxRows} exceeded: this query could read ${estimate.rows} leads (first, counted for every alias); ask for fewer and page with after.`,
            );
          }
          if (estimate.bytes > maxBytes) {
            throw refusal(
              `Answer size limit of ${maxBytes} bytes exceeded: this query could return about ${estimate.bytes}; ask for fewer copies of large fields (Doc.markdown).`,
            );
          }
        },
      };
    },
  };
}

/**
 * The most an operation could answer, following what execution would return (fields merged by response key,
 * fragments expanded once per selection set) with the largest value of each field and the page sizes its arguments
 * and variables ask for. Introspection is bounded by the schema and left to the byte check after execution. Undefined
 * when the variables do not fit the operation: execution refuses that before reading anything.
 */
export function estimateAnswer(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  sizes: AnswerSizes,
  variables: Record<string, unknown> = {},
): AnswerEstimate | undefined {
  const root = schema.getRootType(operation.operation);
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables);
  if (!root || coerced.errors) return undefined;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  const walk: Walk = { fragments, sizes, variables: coerced.coerced, rows: 0 };
  const bytes = objectBytes(walk, root, [operation.selectionSet], new Set(), 1);
  return { bytes, rows: walk.rows };
}

interface Walk {
  fragments: ReadonlyMap<string, FragmentDefinitionNode>;
  sizes: AnswerSizes;
  variables: Record<string, unknown>;
  /** Rows counted so far. */
  rows: number;
}

/**
 * `path`: the fragments expanded above this selection, never expanded again inside it. `copies`: how many times the
 * enclosing lists repeat this object. `pageRows`: the page size, when this object is a page (its lists hold that many).
 */
function objectBytes(walk: Walk, type: GraphQLCompositeType, sets: SelectionSetNode[], path: ReadonlySet<string>, copies: number, pageRows?: number): number {
  let bytes = 2;
  const expanded = new Set(path);
  for (const [key, nodes] of collect(walk.fragments, sets, expanded)) {
    const name = nodes[0].name.value;
    if (name === '__schema' || name === '__type') continue;
    const field = isObjectType(type) || isInterfaceType(type) ? type.getFields()[name] : undefined;
    if (!field) {
      bytes += key.length + 4 + SMALL_LEAF;
      continue;
    }
    const coordinate = `${type.name}.${name}`;
    const page = walk.sizes.pages?.[coordinate];
    const rows = page && pageSize(walk, page, field, nodes[0]);
    if (rows !== undefined) walk.rows += copies * rows;
    const subsets = nodes.flatMap((node) => (node.selectionSet ? [node.selectionSet] : []));
    bytes += key.length + 4 + valueBytes(walk, coordinate, field.type, subsets, expanded, copies, rows ?? pageRows, rows);
  }
  return bytes;
}

/** `listSize`: how many items a list here holds, when a page says so; `innerPageRows`: the page size of the object inside. */
function valueBytes(
  walk: Walk,
  coordinate: string,
  type: GraphQLOutputType,
  sets: SelectionSetNode[],
  path: ReadonlySet<string>,
  copies: number,
  listSize: number | undefined,
  innerPageRows: number | undefined,
): number {
  if (isNonNullType(type)) return valueBytes(walk, coordinate, type.ofType, sets, path, copies, listSize, innerPageRows);
  if (isListType(type)) {
    const items = listSize ?? walk.sizes.lists[coordinate] ?? UNKNOWN_LIST;
    return items * (1 + valueBytes(walk, coordinate, type.ofType, sets, path, copies * items, listSize, innerPageRows));
  }
  if (isCompositeType(type)) return objectBytes(walk, type, sets, path, copies, innerPageRows);
  return walk.sizes.leaves[coordinate] ?? SMALL_LEAF;
}

/**
 * The rows a paged field asks for: its argument as execution will see it (literal, variable or the schema's default),
 * at most the page maximum (the resolver refuses more). One it cannot read counts as the maximum.
 */
function pageSize(walk: Walk, page: PageSize, field: GraphQLField<unknown, unknown>, node: FieldNode): number {
  let value: unknown;
  try {
    value = getArgumentValues(field, node, walk.variables)[page.argument];
  } catch {
    return page.max;
  }
  if (value === undefined || value === null) return page.default;
  return Number.isInteger(value) ? Math.max(0, Math.min(value as number, page.max)) : page.max;
}

/**
 * The fields of some selection sets by response key, as graphql-js collects them: each named fragment expanded once,
 * and never one in `expanded` (so a cycle, which validation reports, cannot loop). Type conditions are ignored, which
 * can only count more.
 */
function collect(
  fragments: ReadonlyMap<string, FragmentDefinitionNode>,
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
        collect(fragments, [selection.selectionSet], expanded, fields);
      } else if (!expanded.has(selection.name.value)) {
        expanded.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragments, [fragment.selectionSet], expanded, fields);
      }
    }
  }
  return fields;
}
