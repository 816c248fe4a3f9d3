// The export client of bench/export.mjs, in a process of its own: GET <url> with a bearer token, read the whole body,
// count its records (CRLF line ends; a lead's own line breaks are bare LF in the seeded data) and print one JSON line.
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [url, token] = process.argv.slice(2);
const started = performance.now();
const req = request(url, { headers: { authorization: `Bearer ${token}` } }, (res) => {
  const jsonl = String(res.headers['content-type']).startsWith('application/jsonl');
  let firstByteMs;
  let bytes = 0;
  let lines = 0;
  let carriage = false;
  res.on('data', (chunk) => {
    firstByteMs ??= performance.now() - started;
    bytes += chunk.length;
    if (jsonl) {
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
      return;
    }
    if (carriage && chunk[0] === 10) lines++;
    for (let at = chunk.indexOf('\r\n'); at !== -1; at = chunk.indexOf('\r\n', at + 2)) lines++;
    carriage = chunk[chunk.length - 1] === 13;
  });
  res.on('end', () => {
    const rows = res.statusCode === 200 ? lines - (jsonl ? 0 : 1) : 0;
    process.stdout.write(JSON.stringify({ status: res.statusCode, rows, bytes, firstByteMs, totalMs: performance.now() - started }));
  });
  res.on('error', (error) => {
    console.error(error);
    process.exitCode = 1;
  });
});
req.on('error', (error) => {
  console.error(error);
  process.exitCode = 1;
});
req.end();
