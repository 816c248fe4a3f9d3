// The webhook receiver of bench/webhooks.mjs, run as a worker thread so that the load generator's event loop never
// waits on it: an HTTP server on 127.0.0.1 (never any other address) that answers 200 at once and notes, for each
// signed lead.received it gets, the lead's id (data.id) and the arrival time (the whole body read), in milliseconds since
// the epoch with sub-millisecond precision (performance.timeOrigin + performance.now(), comparable across threads).
// Messages: 'take' → { type: 'arrivals', ids, ats, others } (what arrived since the last take; `others` counts anything
// else: a test event, an unsigned or unreadable body).
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { parentPort } from 'node:worker_threads';

let ids = [];
let ats = [];
let others = 0;

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const at = performance.timeOrigin + performance.now();
    res.writeHead(200, { 'content-length': '0' });
    res.end();
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (body.type === 'lead.received' && typeof body.data?.id === 'string' && req.headers['webhook-signature']?.startsWith('v1,')) {
        ids.push(body.data.id);
        ats.push(at);
      } else others++;
    } catch {
      others++;
    }
  });
});
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.address().port }));

parentPort.on('message', (message) => {
  if (message !== 'take') return;
  parentPort.postMessage({ type: 'arrivals', ids, ats, others });
  ids = [];
  ats = [];
  others = 0;
});
