import { ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, ValidationContext, ValidationRule } from 'graphql';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DocsModule } from '../docs/docs.module.js';
import { DocsService } from '../docs/docs.service.js';
import { LeadsModule } from '../leads/leads.module.js';
import { LEGAL_BASIS_CATEGORIES } from '../leads/legal-bases.js';
import { CONTEXT_MEMBERS } from '../leads/lead-context.js';
import { MAX_PAGE_SIZE } from '../leads/lead-reader.service.js';
import { DEFAULT_PAGE_SIZE } from '../leads/leads-read.service.js';
import { MetaModule } from '../meta/meta.module.js';
import { SCREENING_REASONS } from '../screening/screening.js';
import { answerLimits, AnswerSizes } from './answer-size.rule.js';
import { GraphqlController } from './graphql.controller.js';
import { GraphqlLeadsService } from './graphql-leads.service.js';
import { GRAPHQL_SCHEMA_FILE } from './graphql-explorer.js';
import { QueryResolver } from './graphql.resolver.js';
import { GraphqlService } from './graphql.service.js';
import { InProcessApolloDriver } from './in-process-apollo.driver.js';
import { shapeCostRule } from './shape-cost.rule.js';

/** Leads one query may read, every alias counted: one REST page. */
const MAX_ROWS = MAX_PAGE_SIZE;

/** Tokens in one document: parsing stops there. */
const MAX_TOKENS = 1000;

/** Bounds on the work one query can ask for; each refusal is a GraphQL error naming the limit. */
const armor = new ApolloArmor({
  maxDepth: { n: 6, ignoreIntrospection: true },
  maxAliases: { n: 10 },
  maxDirectives: { n: 10 },
  // Off here: armor's token counter re-parses in a plugin hook, so a syntax error (or too many tokens) escaped as an
  // unexpected error, a 500 for Accept: application/graphql-response+json. graphql-js counts tokens while parsing
  // (parseOptions.maxTokens below), which Apollo answers as GRAPHQL_PARSE_FAILED, 400.
  maxTokens: { enabled: false },
  // Below, on the query's shape only (shape-cost.rule.ts).
  costLimit: { enabled: false },
  // The schema is public; suggesting field names helps people exploring it.
  blockFieldSuggestion: { enabled: false },
});

/** Armor's cost limit alone: its one validation rule, wrapped by shapeCostRule. */
const costArmor = new ApolloArmor({
  maxDepth: { enabled: false },
  maxAliases: { enabled: false },
  maxDirectives: { enabled: false },
  maxTokens: { enabled: false },
  blockFieldSuggestion: { enabled: false },
  costLimit: { maxCost: 500 },
});

/** Read-only: a mutation or subscription is refused before execution with a message that says so. */
const queriesOnly = (context: ValidationContext) => ({
  OperationDefinition(node: { operation: string }) {
    if (node.operation !== 'query') {
      context.reportError(new GraphQLError(`This GraphQL endpoint is read-only: ${node.operation}s are not supported.`, { nodes: [node as never] }));
    }
  },
});

// armor is CommonJS and resolves @apollo/server's CJS type declarations; the runtime objects are the same.
const { plugins, validationRules } = armor.protect() as Pick<ApolloDriverConfig, 'plugins' | 'validationRules'>;
const [costRule] = (costArmor.protect() as Pick<ApolloDriverConfig, 'validationRules'>).validationRules as ValidationRule[];

/** What the answer-size estimate knows of the data: the docs are static, so their largest values are known at start. */
function answerSizes(docs: DocsService): AnswerSizes {
  const pages = docs.search();
  const largest = (field: 'slug' | 'title' | 'summary' | 'url' | 'markdown') =>
    Math.max(0, ...pages.map((page) => Buffer.byteLength(JSON.stringify(page[field]))));
  return {
    leaves: {
      ...Object.fromEntries((['slug', 'title', 'summary', 'url', 'markdown'] as const).map((field) => [`Doc.${field}`, largest(field)])),
      // Short values of a known size: enums, instants and a hex digest.
      ...Object.fromEntries(['category', 'type', 'status', 'recorded_at', 'channel', 'revoked_at'].map((field) => [`LegalBasis.${field}`, 32])),
      'LegalBasis.consent_text_sha256': 66,
      // Counted short like the other lead fields (below): a context is mostly a few UTM words.
      ...Object.fromEntries(CONTEXT_MEMBERS.map((member) => [`LeadContext.${member}`, 32])),
      // A verdict, reason codes, an operator client id (at most 64 characters) and an instant.
      'Screening.verdict': 16,
      'Screening.reasons': Math.max(...Object.keys(SCREENING_REASONS).map((code) => JSON.stringify(code).length + 1)),
      'Screening.decided_by': 66,
      'Screening.decided_at': 32,
    },
    // One legal basis per category at most; each reason once at most.
    lists: { 'Query.docs': pages.length, 'Lead.legal_bases': LEGAL_BASIS_CATEGORIES.length, 'Screening.reasons': Object.keys(SCREENING_REASONS).length },
    // Lead fields count as short leaves: a page of 200 long messages is caught by the byte check after execution.
    pages: { 'Query.leads': { argument: 'first', default: DEFAULT_PAGE_SIZE, max: MAX_PAGE_SIZE } },
  };
}

@Module({
  imports: [
    MetaModule,
    DocsModule,
    LeadsModule,
    GraphQLModule.forRootAsync<ApolloDriverConfig>({
      driver: InProcessApolloDriver,
      imports: [DocsModule],
      inject: [DocsService, APP_CONFIG],
      useFactory: (docs: DocsService, config: AppConfig) => ({
        typePaths: [GRAPHQL_SCHEMA_FILE],
        path: '/api/v1/graphql',
        graphiql: false,
        introspection: true,
        csrfPrevention: true,
        persistedQueries: false,
        plugins: [...(plugins ?? []), answerLimits(answerSizes(docs), config.maxAnswerBytes, MAX_ROWS)],
        validationRules: [queriesOnly, ...(validationRules ?? []), shapeCostRule(costRule)],
        parseOptions: { maxTokens: MAX_TOKENS },
        // armor.protect() returns this too, but only its plugins and rules are taken above; without it Apollo adds stack
        // traces to `extensions` whenever NODE_ENV is neither production nor test.
        includeStacktraceInErrorResponses: false,
      }),
    }),
  ],
  controllers: [GraphqlController],
  providers: [GraphqlService, QueryResolver, GraphqlLeadsService],
})
export class GraphqlModule {}
