import { freshDatabase } from '../../support/database.js';
import { GENEROUS_LIMITS } from '../../support/server-process.js';
import { hostileCorpus } from './hostile-corpus.js';
import { HttpClient } from './http-client.js';
import { ProbedService } from './probed-service.js';

async function main() {
  const db = await freshDatabase('sqlite');
  const s = await new ProbedService({ ...GENEROUS_LIMITS, ...db.env, LOG_LEVEL: 'warn' }).start();
  const c = new HttpClient(s.baseUrl, { sockets: 1, timeoutMs: 2000 });
  const calls = hostileCorpus({ short: true }).filter((x) => !/telefone/.test(x.field));
  const seen = new Map<string, number>();
  for (const call of calls) {
    const r = await c.send(call);
    const k = `${call.surface} ${call.field} ${r.status}`;
    if (!seen.has(k)) console.log(k, call.variant, r.body.slice(0, 140).replace(/\n/g, ' '));
    seen.set(k, (seen.get(k) ?? 0) + 1);
  }
  c.close();
  await s.stop();
}
main();
