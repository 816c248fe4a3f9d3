import { ApolloServer, ApolloServerOptions, BaseContext } from '@apollo/server';
import { ApolloDriver, ApolloDriverConfig } from '@nestjs/apollo';
import { Injectable } from '@nestjs/common';

/**
 * Starts Apollo without mounting it on Express. GraphqlController serves it instead, so that a GraphQL request goes
 * through the same door as REST: body parsing, bearer guard, rate limits and problem details.
 */
@Injectable()
export class InProcessApolloDriver extends ApolloDriver {
  protected override async registerExpress(options: ApolloDriverConfig): Promise<void> {
    const server = new ApolloServer(options as ApolloServerOptions<BaseContext>);
    await server.start();
    this.apolloServer = server;
  }
}
