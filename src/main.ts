import 'reflect-metadata';
import type { Server } from 'node:http';
import { createApp, serverTimeouts } from './app.setup.js';
import { ConfigError, loadConfig } from './config/config.js';

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
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
