// `leads export`: the service's streamed export written as it arrives, to a file (through a temporary file renamed at
// the end, so a failed export leaves nothing behind) or to standard output.
import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { finished } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { CliError, EXIT } from './http.js';

/** Counts the records of the bytes seen: lines, except newlines inside CSV quotes; the CSV header is not a record. */
export class RecordCounter {
  bytes = 0;
  private lines = 0;
  private quoted = false;
  private last = 0x0a;

  constructor(private readonly csv: boolean) {}

  add(chunk: Uint8Array): void {
    this.bytes += chunk.length;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === 0x22 && this.csv) this.quoted = !this.quoted;
      else if (byte === 0x0a && !this.quoted) this.lines++;
    }
    if (chunk.length) this.last = chunk[chunk.length - 1];
  }

  get records(): number {
    const lines = this.lines + (this.last === 0x0a ? 0 : 1);
    return Math.max(0, this.csv ? lines - 1 : lines);
  }
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

async function writeAll(sink: Writable, chunks: AsyncIterable<Uint8Array>, counter: RecordCounter): Promise<void> {
  let failure: Error | undefined;
  const onError = (error: Error) => (failure ??= error);
  sink.on('error', onError);
  try {
    for await (const chunk of chunks) {
      if (failure) throw failure;
      counter.add(chunk);
      // Back-pressure: the next chunk is read from the network only once this one is written.
      if (!sink.write(chunk)) await once(sink, 'drain');
    }
    if (failure) throw failure;
  } finally {
    sink.off('error', onError);
  }
}

/**
 * Writes the chunks to `output` (a temporary file beside it, mode 0600 since it holds personal data, renamed when
 * complete; removed on failure or Ctrl-C) or to standard output, with a progress line on stderr when `progress`.
 */
export async function exportTo(chunks: AsyncIterable<Uint8Array>, format: string, output: string | undefined, progress: boolean): Promise<RecordCounter> {
  const counter = new RecordCounter(format === 'csv');
  const show = () => process.stderr.write(`\rexporting: ${counter.records} rows, ${formatBytes(counter.bytes)}\u001b[K`);
  const ticker = progress ? setInterval(show, 250) : undefined;
  const temp = output === undefined ? undefined : join(dirname(output), `.${basename(output)}.${process.pid}.part`);
  const discard = () => temp && rmSync(temp, { force: true });
  const interrupted = () => {
    discard();
    process.stderr.write('\nexport interrupted; no file written\n');
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  try {
    if (temp === undefined) {
      await writeAll(process.stdout, chunks, counter);
    } else {
      const file = createWriteStream(temp, { mode: 0o600, flags: 'wx' });
      try {
        await writeAll(file, chunks, counter);
        file.end();
        await finished(file);
      } catch (error) {
        file.destroy();
        throw error;
      }
      renameSync(temp, output!);
    }
  } catch (error) {
    discard();
    if (error instanceof CliError) throw error;
    throw new CliError(`cannot write ${output ?? 'standard output'}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, EXIT.usage);
  } finally {
    process.off('SIGINT', interrupted);
    if (ticker) {
      clearInterval(ticker);
      show();
      process.stderr.write('\n');
    }
  }
  return counter;
}
