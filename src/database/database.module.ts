import { DynamicModule, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/config.js';
import { dataSourceOptions, runMigrations } from './data-source.js';

@Module({})
export class DatabaseModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: DatabaseModule,
      imports: [
        TypeOrmModule.forRootAsync({
          useFactory: () => ({ ...dataSourceOptions(config), autoLoadEntities: true, retryAttempts: 5, retryDelay: 2000 }),
          dataSourceFactory: async (options) => {
            const dataSource = await new DataSource(options!).initialize();
            await runMigrations(dataSource);
            return dataSource;
          },
        }),
      ],
    };
  }
}
