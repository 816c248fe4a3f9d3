// The SMTP sink of bench/notifications.mjs, run as a worker thread (bench/support.mjs startWorker): smtp-server on
// 127.0.0.1 (never any other address), plain (no STARTTLS offered: the service's mailer checks certificates, and a
// loopback sink has none to show), no AUTH, that accepts every message as soon as its data has arrived. It counts
// the messages and their distinct Message-IDs (the service derives a notification's from lead and recipient, so a
// repeated one is a message sent twice), and keeps the raw source only while told to (the confirmation e-mail).
// Messages: { reset, keep } → { count, duplicates, raws }: what arrived since the last ask; `reset` forgets the
// Message-IDs seen (a new service), `keep` says whether to keep the sources of what arrives from now on.
import { parentPort } from 'node:worker_threads';
import { SMTPServer } from 'smtp-server';

const MESSAGE_ID = /^message-id:[ \t]*(\S+)/im;

const seen = new Set();
let count = 0;
let duplicates = 0;
let keep = false;
let raws = [];

const server = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS', 'AUTH'],
  hideSTARTTLS: true,
  logger: false,
  onData: (stream, _session, callback) => {
    const chunks = [];
    stream.on('data', (chunk) => chunks.push(chunk));
    stream.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const head = raw.slice(0, raw.indexOf('\r\n\r\n') >>> 0);
      const id = MESSAGE_ID.exec(head)?.[1];
      count++;
      if (id !== undefined && seen.has(id)) duplicates++;
      else if (id !== undefined) seen.add(id);
      if (keep) raws.push(raw);
      callback();
    });
  },
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ type: 'listening', port: server.server.address().port }));

parentPort.on('message', (message) => {
  if (message.reset) seen.clear();
  parentPort.postMessage({ count, duplicates, raws });
  count = 0;
  duplicates = 0;
  raws = [];
  keep = Boolean(message.keep);
});
