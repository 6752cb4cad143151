import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import {
  getNamedType,
  GraphQLError,
  isObjectType,
  isInterfaceType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import type { RequestLimits } from '../config.js';
import { maxListsPerOwner } from '../records/lists.js';
import { maxMarkedShown } from '../notifications/notificationService.js';
import { defaultPageSize, maxPageSize } from './connections.js';

/** Lists without page arguments whose length is bounded otherwise: they multiply like a page of that size. */
const unpagedListSizes = new Map([
  ['Query.lists', maxListsPerOwner],
  ['MarkNotificationsReadPayload.notifications', maxMarkedShown],
]);

/** Lists as long as a list argument: they multiply what they select by its length, whatever it is. */
const listArgumentSizes = new Map([['Query.nodes', 'ids']]);

/**
 * The parser's own limit: a query nested thousands deep would exhaust the parser's stack before the
 * depth rule could see it. The largest query a client here sends is under a hundred tokens.
 */
export const parseOptions = { maxTokens: 2000 } as const;

/** Mutations that hash a password: one per request, so a body cannot carry a thousand sign-ups. */
const passwordMutations = new Set(['signUp', 'logIn']);

/** Armor's rules throw or report "Syntax Error: …"; report them as the validation errors they are. */
const reportClean = (context: ValidationContext | null, error: GraphQLError) =>
  context?.reportError(new GraphQLError(error.message.replace(/^Syntax Error: /, '')));

/**
 * Depth and alias limits as validation rules (GraphQL Armor). Both visit each fragment once and
 * remember its result, so a document whose fragments spread each other exponentially is checked in
 * time linear in its size; graphql's own rules reject fragment cycles and unknown fragments.
 * Depth counts fields only: a fragment spread is where a client's components meet (Relay's and
 * codegen's fragments nest one per component), not a level of the answer.
 */
export function limitRules(limits: RequestLimits): ValidationRule[] {
  const common = { propagateOnRejection: false, onReject: [reportClean], exposeLimits: true };
  return [maxDepthRule({ n: limits.maxDepth, flattenFragments: true, ...common }), maxAliasesRule({ n: limits.maxAliases, ...common })];
}

/**
 * What executing the operation may cost, before executing it: every field counts 1, and a
 * connection field (one that takes `first`/`last`) multiplies what is selected below it by its page
 * size, the default when none is given. Fragments are costed once per type and reused, so this is
 * linear in the document too.
 */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
): number {
  const known = costsWithoutVariables.get(operation);
  if (known !== undefined) return known;
  // An operation whose page sizes are variables costs the same for the same sizes: remembered by them.
  const byVariables = costsByVariables.get(operation);
  const sizesKey = byVariables && sizesOf(byVariables.names, variables);
  const remembered = sizesKey !== undefined ? byVariables!.costs.get(sizesKey) : undefined;
  if (remembered !== undefined) return remembered;
  let readsVariables = false;
  const variablesRead = new Set<string>();
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const fragmentCosts = new Map<string, number>();

  const pageSizeOf = (value: ValueNode | undefined): number => {
    if (value?.kind === Kind.VARIABLE) {
      readsVariables = true;
      variablesRead.add(value.name.value);
    }
    const raw = value?.kind === Kind.VARIABLE ? variables[value.name.value] : value?.kind === Kind.INT ? Number(value.value) : undefined;
    return typeof raw === 'number' && Number.isInteger(raw) && raw > 0 ? Math.min(raw, maxPageSize) : defaultPageSize;
  };

  // A list argument's length: a literal's items, or the variable's array (which varies with the variables, as page sizes do).
  const listLengthOf = (value: ValueNode | undefined): number => {
    if (value?.kind === Kind.LIST) return value.values.length;
    if (value?.kind === Kind.VARIABLE) {
      readsVariables = true;
      variablesRead.add(value.name.value);
      const raw = variables[value.name.value];
      return Array.isArray(raw) ? raw.length : 1;
    }
    return 1;
  };

  const selectionCost = (selectionSet: SelectionSetNode | undefined, parent: GraphQLCompositeType | null | undefined): number => {
    if (!selectionSet) return 0;
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const fields = parent && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields() : undefined;
        const definition = fields?.[selection.name.value];
        const child = definition ? (getNamedType(definition.type) as GraphQLCompositeType) : null;
        const paged = definition?.args.some((arg) => arg.name === 'first' || arg.name === 'last') ?? false;
        const argument = (name: string) => selection.arguments?.find((arg) => arg.name.value === name)?.value;
        const coordinate = `${parent?.name}.${selection.name.value}`;
        const listArgument = listArgumentSizes.get(coordinate);
        const size = paged
          ? pageSizeOf(argument('first') ?? argument('last'))
          : listArgument !== undefined
            ? listLengthOf(argument(listArgument))
            : (unpagedListSizes.get(coordinate) ?? 1);
        total += 1 + size * selectionCost(selection.selectionSet, child);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? (schema.getType(selection.typeCondition.name.value) as GraphQLCompositeType) : parent;
        total += selectionCost(selection.selectionSet, condition);
      } else {
        const name = selection.name.value;
        let cost = fragmentCosts.get(name);
        if (cost === undefined) {
          fragmentCosts.set(name, 0); // a cycle (refused by validation anyway) costs nothing more
          const fragment = fragments.get(name);
          const condition = fragment && (schema.getType(fragment.typeCondition.name.value) as GraphQLCompositeType);
          cost = fragment ? selectionCost(fragment.selectionSet, condition) : 0;
          fragmentCosts.set(name, cost);
        }
        total += cost;
      }
    }
    return total;
  };

  const root = schema.getRootType(operation.operation);
  const cost = selectionCost(operation.selectionSet, root);
  if (!readsVariables) {
    costsWithoutVariables.set(operation, cost);
  } else {
    const names = [...variablesRead].sort();
    const remembering = costsByVariables.get(operation) ?? { names, costs: new Map<string, number>() };
    costsByVariables.set(operation, remembering);
    // Bounded: a client sending every page size from 1 to 100 makes 100 entries, no more.
    if (remembering.costs.size < 200) remembering.costs.set(sizesOf(names, variables), cost);
  }
  return cost;
}

/** The values of the page-size variables, as a key: a string "50" costs the default page, the number 50 costs 50. */
const sizesOf = (names: readonly string[], variables: Record<string, unknown>) =>
  names.map((name) => (Array.isArray(variables[name]) ? `array:${(variables[name] as unknown[]).length}` : `${typeof variables[name]}:${String(variables[name])}`)).join('\u0000');

/** The cost of operations whose page sizes are variables, by the values of those variables. */
const costsByVariables = new WeakMap<OperationDefinitionNode, { names: string[]; costs: Map<string, number> }>();

/**
 * The cost of operations whose page sizes are all literals, by the operation's node: Apollo keeps
 * the parsed document of a query sent again, so its cost is worked out once rather than on every
 * request (3 % of a timeline page's CPU in the profile). One schema per process, so the node is key enough.
 */
const costsWithoutVariables = new WeakMap<OperationDefinitionNode, number>();

/**
 * The checks that need the variables and who is asking: the cost budget and the mutations per
 * request. Null when the operation may run.
 */
export function checkOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  options: { signedIn: boolean; limits: RequestLimits },
): GraphQLError | null {
  const { limits } = options;
  if (operation.operation === 'mutation') {
    const roots = rootFields(document, operation);
    if (roots.size > limits.maxRootMutations) {
      return limitError(`At most ${limits.maxRootMutations} mutations per request`, 'BAD_REQUEST', {});
    }
    if ([...roots.values()].filter((name) => passwordMutations.has(name)).length > 1) {
      return limitError('At most one signUp or logIn per request', 'BAD_REQUEST', {});
    }
  }
  const limit = options.signedIn ? limits.maxCost : limits.maxCostAnonymous;
  const cost = operationCost(schema, document, operation, variables);
  if (cost > limit) {
    const hint = options.signedIn ? '' : ' (sign in for a larger budget)';
    return limitError(`Query too complex: its cost is ${cost}, the limit is ${limit}${hint}`, 'QUERY_TOO_COMPLEX', { cost, limit });
  }
  return null;
}

/**
 * The root fields an operation runs, by response name to field name: fragments at the root (inline
 * or spread) select root fields too, and fields of one response name are merged and run once.
 */
function rootFields(document: DocumentNode, operation: OperationDefinitionNode): Map<string, string> {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const fields = new Map<string, string>();
  const spread = new Set<string>();
  const collect = (selectionSet: SelectionSetNode) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) fields.set(selection.alias?.value ?? selection.name.value, selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) collect(selection.selectionSet);
      else if (!spread.has(selection.name.value)) {
        spread.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) collect(fragment.selectionSet);
      }
    }
  };
  collect(operation.selectionSet);
  return fields;
}

function limitError(message: string, code: string, details: Record<string, number>): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...details, http: { status: 400 } } });
}
