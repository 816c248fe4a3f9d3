import { ApolloDriverConfig } from '@nestjs/apollo';
import { Module } from '@nestjs/common';
import { GraphQLModule } from '@nestjs/graphql';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { GraphQLError, ValidationContext } from 'graphql';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DocsModule } from '../docs/docs.module.js';
import { DocsService } from '../docs/docs.service.js';
import { MetaModule } from '../meta/meta.module.js';
import { AnswerSizes, answerSizeRule } from './answer-size.rule.js';
import { GraphqlController } from './graphql.controller.js';
import { GRAPHQL_SCHEMA_FILE } from './graphql-explorer.js';
import { QueryResolver } from './graphql.resolver.js';
import { GraphqlService } from './graphql.service.js';
import { InProcessApolloDriver } from './in-process-apollo.driver.js';

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
  costLimit: { maxCost: 500 },
  // The schema is public; suggesting field names helps people exploring it.
  blockFieldSuggestion: { enabled: false },
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

/** What the answer-size estimate knows of the data: the docs are static, so their largest values are known at start. */
function answerSizes(docs: DocsService): AnswerSizes {
  const pages = docs.search();
  const largest = (field: 'slug' | 'title' | 'summary' | 'url' | 'markdown') =>
    Math.max(0, ...pages.map((page) => Buffer.byteLength(JSON.stringify(page[field]))));
  return {
    leaves: Object.fromEntries((['slug', 'title', 'summary', 'url', 'markdown'] as const).map((field) => [`Doc.${field}`, largest(field)])),
    lists: { 'Query.docs': pages.length },
  };
}

@Module({
  imports: [
    MetaModule,
    DocsModule,
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
        plugins,
        validationRules: [queriesOnly, answerSizeRule(answerSizes(docs), config.maxAnswerBytes), ...(validationRules ?? [])],
        parseOptions: { maxTokens: MAX_TOKENS },
        // armor.protect() returns this too, but only its plugins and rules are taken above; without it Apollo adds stack
        // traces to `extensions` whenever NODE_ENV is neither production nor test.
        includeStacktraceInErrorResponses: false,
      }),
    }),
  ],
  controllers: [GraphqlController],
  providers: [GraphqlService, QueryResolver],
})
export class GraphqlModule {}
