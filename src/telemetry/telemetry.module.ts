import { Global, Inject, Module, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '../config/config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from './metrics.js';
import { MetricsServer } from './metrics.server.js';
import { Tracing } from './tracing.js';

/** The tracing of this process, or null when no OTLP endpoint is set. */
export const TRACING = Symbol('TRACING');

/** Metrics for every module to count into, their listener, and traces (docs/decisions/0042-observability.md). */
@Global()
@Module({
  providers: [
    { provide: Metrics, inject: [APP_CONFIG], useFactory: (config: AppConfig) => new Metrics(config.observability.metrics !== null) },
    MetricsServer,
    {
      provide: TRACING,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => (config.observability.tracing ? Tracing.start(config.observability.tracing, config.version) : null),
    },
  ],
  exports: [Metrics, MetricsServer, TRACING],
})
export class TelemetryModule implements OnApplicationShutdown {
  constructor(@Inject(TRACING) private readonly tracing: Tracing | null) {}

  /** After the server has answered the last requests: their spans go out before the process ends. */
  async onApplicationShutdown(): Promise<void> {
    await this.tracing?.shutdown();
  }
}
