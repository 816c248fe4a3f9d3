import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApp, serverTimeouts } from './app.setup.js';
import { ConfigError, loadConfig } from './config/config.js';
import { startLine, stopLine } from './logging/lifecycle.js';
import { MAILER, type Mailer } from './mail/mailer.js';
import { MetricsServer } from './telemetry/metrics.server.js';

const logger = new Logger('Server');

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
  const app = await createApp(config);
  const server = app.getHttpServer() as Server;
  Object.assign(server, serverTimeouts(config));
  await app.listen(config.port);
  logger.log(startLine(config, (server.address() as AddressInfo).port, app.get<Mailer>(MAILER).destination, app.get(MetricsServer).address()));
  // A second signal while stopping is not caught again: it ends the process at once (Ctrl+C twice).
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, () => void stop(app, signal));
}

/** Stops accepting connections, lets requests in flight finish, closes Redis and the database, then exits. */
async function stop(app: NestExpressApplication, signal: NodeJS.Signals): Promise<void> {
  const start = performance.now();
  try {
    await app.close();
  } catch (error) {
    logger.error(error);
    process.exit(1);
  }
  logger.log(stopLine(signal, performance.now() - start));
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
