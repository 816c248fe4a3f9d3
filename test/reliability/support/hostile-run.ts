import { HttpClient } from './http-client.js';
import { benignCalls, type HostileCall } from './hostile-corpus.js';
import { sleep } from './load.js';
import { epochMs, type LoopDelay, type ProbedService } from './probed-service.js';
import { Tally } from './tally.js';

export interface Outcome {
  call: HostileCall;
  /** The status, or why there was none (CLIENT_TIMEOUT: the loop was held longer than the client waits). */
  answer: string;
  ms: number;
  /** The longest event-loop hold that ended while this call was the one in flight (0: none over the probe's 10 ms). */
  holdMs: number;
  started: number;
  /** The holds of the same call sent again, when the first was over the budget. */
  retries?: number[];
}

export interface CorpusRun {
  outcomes: Outcome[];
  /** Calls not sent because an earlier value of the same field had already stuck the service. */
  skipped: HostileCall[];
  /** The delay histogram of each service start whose loop could still answer a dump. */
  delays: LoopDelay[];
  restarts: number;
  /** The sanity figure from outside: a health request every 5 ms, alongside. */
  pings: Tally;
  elapsedMs: number;
}

const PING_EVERY_MS = 5;
const WARM_UP_ROUNDS = 5;
const RETRIES = 2;

/**
 * A fresh start compiles as it goes: its first requests of each kind hold the loop for tens of milliseconds whatever
 * they carry. Those are the start's cost, not a hostile value's, so every start is warmed up before it is measured.
 */
async function warmUp(service: ProbedService, client: HttpClient): Promise<void> {
  for (let round = 0; round < WARM_UP_ROUNDS; round++) for (const call of benignCalls()) await client.send(call);
  await service.dump();
}

/**
 * Sends the calls one at a time, so that each hold the probe reports belongs to the call in flight. A call that gets
 * no answer within `timeoutMs` has stuck the loop: the service is killed and restarted, and the other values of that
 * field are skipped (each would cost the same wait). A call answered over `budgetMs` is sent twice more and keeps its
 * shortest hold: a value's cost comes back every time, a collection or a busy machine's scheduling does not.
 */
export async function runCorpus(
  service: ProbedService,
  calls: HostileCall[],
  { timeoutMs, budgetMs }: { timeoutMs: number; budgetMs: number },
): Promise<CorpusRun> {
  const started = Date.now();
  const outcomes: Outcome[] = [];
  const skipped: HostileCall[] = [];
  const delays: LoopDelay[] = [];
  const stuck = new Set<string>();
  const pings = new Tally();
  let restarts = 0;
  let client = new HttpClient(service.baseUrl, { sockets: 1, timeoutMs });
  let pinger = new HttpClient(service.baseUrl, { sockets: 1, timeoutMs });
  pinger.tally = pings;
  // The histogram counts from here: the start and its first requests are not the corpus.
  await warmUp(service, client);
  let done = false;
  const pinging = (async () => {
    while (!done) {
      await pinger.send({ path: '/api/v1/health' });
      await sleep(PING_EVERY_MS);
    }
  })();
  try {
    for (const call of calls) {
      const key = `${call.surface} ${call.field}`;
      if (stuck.has(key)) {
        skipped.push(call);
        continue;
      }
      const at = epochMs();
      const reply = await client.send(call);
      outcomes.push({ call, answer: reply.error ?? String(reply.status), ms: reply.ms, holdMs: 0, started: at });
      if (reply.error === 'CLIENT_TIMEOUT') {
        stuck.add(key);
        restarts++;
        client.close();
        pinger.close();
        await service.restart();
        client = new HttpClient(service.baseUrl, { sockets: 1, timeoutMs });
        pinger = new HttpClient(service.baseUrl, { sockets: 1, timeoutMs });
        pinger.tally = pings;
        await warmUp(service, client);
      }
    }
    attribute(outcomes, service);
    for (const outcome of outcomes.filter((o) => o.answer !== 'CLIENT_TIMEOUT' && o.holdMs > budgetMs)) {
      const again: Outcome[] = [];
      for (let retry = 0; retry < RETRIES; retry++) {
        const at = epochMs();
        const reply = await client.send(outcome.call);
        const timedOut = reply.error === 'CLIENT_TIMEOUT';
        again.push({ call: outcome.call, answer: reply.error ?? String(reply.status), ms: reply.ms, holdMs: timedOut ? reply.ms : 0, started: at });
        if (timedOut) break; // stuck after all: that is its figure, and nothing more can be measured here
      }
      await sleep(2 * PING_EVERY_MS); // the probe's next tick, which reports a hold that ended with the last one
      attribute(again, service);
      outcome.retries = again.map((o) => o.holdMs);
      outcome.holdMs = Math.min(outcome.holdMs, ...outcome.retries);
    }
  } finally {
    done = true;
    await pinging;
    client.close();
    pinger.close();
  }
  const last = await service.dump();
  if (last) delays.push(last);
  // A stuck loop never lets the probe's timer fire: what is known is that it held at least as long as the client waited.
  for (const outcome of outcomes) if (outcome.answer === 'CLIENT_TIMEOUT') outcome.holdMs = Math.max(outcome.holdMs, outcome.ms);
  return { outcomes, skipped, delays, restarts, pings, elapsedMs: Date.now() - started };
}

/**
 * Each hold goes to the last call started before it ended: calls are sequential, so that one was in flight. Holds that
 * ended before the first of `outcomes` started belong to no call of theirs.
 */
function attribute(outcomes: Outcome[], service: ProbedService): void {
  for (const hold of service.holds()) {
    let owner: Outcome | undefined;
    for (const outcome of outcomes) if (outcome.started <= hold.at) owner = outcome;
    if (owner) owner.holdMs = Math.max(owner.holdMs, hold.ms);
  }
}
