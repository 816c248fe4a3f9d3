import { once } from 'node:events';
import { createServer, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * Cloudflare Turnstile's documented test keys: the secrets answer as a real siteverify would for any site, and accept
 * only the dummy token the test site keys' widgets produce.
 */
export const TURNSTILE_TEST = {
  siteKeyPasses: '1x00000000000000000000AA',
  siteKeyFails: '2x00000000000000000000AB',
  secretPasses: '1x0000000000000000000000000000000AA',
  secretFails: '2x0000000000000000000000000000000AA',
  secretSpent: '3x0000000000000000000000000000000AA',
  dummyToken: 'XXXX.DUMMY.TOKEN.XXXX',
} as const;

/** hCaptcha's documented test key pair and the response token its test widget gives. */
export const HCAPTCHA_TEST = {
  siteKey: '10000000-ffff-ffff-ffff-000000000001',
  secret: '0x0000000000000000000000000000000000000000',
  response: '10000000-aaaa-bbbb-cccc-000000000001',
} as const;

/**
 * How the stub answers: as the provider would, or as an outage does (no answer, a 500, an answer that is not JSON, a
 * passing answer padded to 1 MiB, headers and a few bytes of the answer and then nothing).
 */
export type CaptchaStubMode = 'normal' | 'hang' | 'fail' | 'garbage' | 'huge' | 'stall';

export interface SiteverifyRequest {
  provider: 'turnstile' | 'hcaptcha';
  contentType: string | undefined;
  form: Record<string, string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A local server speaking each provider's siteverify: Turnstile at /turnstile/v0/siteverify (form-encoded or JSON, with
 * its three test secrets) and hCaptcha at /siteverify (its test key pair), recording every request. It also serves a
 * stand-in for each widget script (/turnstile/v0/api.js, /hcaptcha/api.js) whose render() hands the callback the test
 * token at once, so that browser tests need no outside host. `mode` switches to an outage.
 */
export class CaptchaStub {
  mode: CaptchaStubMode = 'normal';
  /** The `hostname` a successful answer names (the site the widget was solved on). */
  hostname: string | undefined;
  readonly requests: SiteverifyRequest[] = [];
  private server!: Server;
  private readonly sockets = new Set<Socket>();

  static async start(options: { hostname?: string } = {}): Promise<CaptchaStub> {
    const stub = new CaptchaStub();
    stub.hostname = options.hostname;
    stub.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        if (req.method === 'GET' && (path === '/turnstile/v0/api.js' || path === '/hcaptcha/api.js')) {
          res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8', 'access-control-allow-origin': '*' });
          res.end(widgetStandIn(path === '/turnstile/v0/api.js' ? 'turnstile' : 'hcaptcha'));
          return;
        }
        const provider = path === '/turnstile/v0/siteverify' ? 'turnstile' : path === '/siteverify' ? 'hcaptcha' : undefined;
        if (req.method !== 'POST' || !provider) {
          res.writeHead(404).end();
          return;
        }
        const text = Buffer.concat(chunks).toString('utf8');
        const contentType = req.headers['content-type'];
        const form = contentType?.startsWith('application/json') ? (JSON.parse(text) as Record<string, string>) : Object.fromEntries(new URLSearchParams(text));
        stub.requests.push({ provider, contentType, form });
        if (stub.mode === 'hang') return; // no answer, until the caller gives up or the stub closes
        if (stub.mode === 'fail') {
          res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
          return;
        }
        if (stub.mode === 'garbage') {
          res.writeHead(200, { 'content-type': 'text/html' }).end('<html>maintenance</html>');
          return;
        }
        const answer = provider === 'turnstile' ? stub.turnstile(form) : stub.hcaptcha(form);
        if (stub.mode === 'huge') {
          // A passing answer padded to 1 MiB, in chunks and without a length, as a hostile or broken proxy might send it.
          const text = JSON.stringify({ ...answer, padding: 'x'.repeat(1024 * 1024) });
          res.writeHead(200, { 'content-type': 'application/json' });
          for (let i = 0; i < text.length; i += 64 * 1024) res.write(text.slice(i, i + 64 * 1024));
          res.end();
          return;
        }
        if (stub.mode === 'stall') {
          // Headers and the start of the answer at once, the rest never.
          res.writeHead(200, { 'content-type': 'application/json' }).write(JSON.stringify(answer).slice(0, 10));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    stub.server.on('connection', (socket: Socket) => {
      stub.sockets.add(socket);
      socket.on('close', () => stub.sockets.delete(socket));
    });
    stub.server.listen(0, '127.0.0.1');
    await once(stub.server, 'listening');
    return stub;
  }

  get origin(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get turnstileVerifyUrl(): string {
    return `${this.origin}/turnstile/v0/siteverify`;
  }

  get hcaptchaVerifyUrl(): string {
    return `${this.origin}/siteverify`;
  }

  /** The widget stand-in's script URL, for CAPTCHA_SCRIPT_URL. */
  scriptUrl(provider: 'turnstile' | 'hcaptcha'): string {
    return provider === 'turnstile' ? `${this.origin}/turnstile/v0/api.js?render=explicit` : `${this.origin}/hcaptcha/api.js?render=explicit`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, 'close');
  }

  /** Turnstile's documented answers for its test secrets; any other secret is not one this stub knows. */
  private turnstile(form: Record<string, string>): object {
    const failure = (code: string) => ({ success: false, 'error-codes': [code], messages: [] });
    if (!form.secret) return failure('missing-input-secret');
    if (!form.response) return failure('missing-input-response');
    if (form.response.length > 2048) return failure('invalid-input-response');
    if (form.idempotency_key !== undefined && !UUID.test(form.idempotency_key)) return failure('bad-request');
    switch (form.secret) {
      case TURNSTILE_TEST.secretPasses:
        if (form.response !== TURNSTILE_TEST.dummyToken) return failure('invalid-input-response');
        return {
          success: true,
          'error-codes': [],
          challenge_ts: new Date().toISOString(),
          hostname: this.hostname ?? 'example.com',
          action: '',
          cdata: '',
          metadata: { interactive: false },
          messages: [],
        };
      case TURNSTILE_TEST.secretFails:
        return failure('invalid-input-response');
      case TURNSTILE_TEST.secretSpent:
        return failure('timeout-or-duplicate');
      default:
        return failure('invalid-input-secret');
    }
  }

  /** hCaptcha's answers for its test key pair. */
  private hcaptcha(form: Record<string, string>): object {
    const failure = (code: string) => ({ success: false, 'error-codes': [code] });
    if (!form.secret) return failure('missing-input-secret');
    if (form.secret !== HCAPTCHA_TEST.secret) return failure('invalid-input-secret');
    if (form.sitekey !== undefined && form.sitekey !== HCAPTCHA_TEST.siteKey) return failure('sitekey-secret-mismatch');
    if (!form.response) return failure('missing-input-response');
    if (form.response !== HCAPTCHA_TEST.response) return failure('invalid-input-response');
    return { success: true, challenge_ts: new Date().toISOString(), hostname: this.hostname ?? 'dummy-key-pass', credit: false };
  }
}

/** A widget that renders a checkbox-free box and hands its callback the provider's test token straight away. */
function widgetStandIn(provider: 'turnstile' | 'hcaptcha'): string {
  const token = provider === 'turnstile' ? TURNSTILE_TEST.dummyToken : HCAPTCHA_TEST.response;
  return `(() => {
  const widgets = new Map();
  let next = 0;
  const api = {
    render(container, options) {
      const element = typeof container === 'string' ? document.querySelector(container) : container;
      const id = String(++next);
      const box = document.createElement('div');
      box.setAttribute('data-captcha-stand-in', ${JSON.stringify(provider)});
      element.appendChild(box);
      widgets.set(id, { box, token: ${JSON.stringify(token)} });
      setTimeout(() => options && typeof options.callback === 'function' && options.callback(${JSON.stringify(token)}), 0);
      return id;
    },
    getResponse(id) { const w = widgets.get(String(id ?? next)); return w ? w.token : undefined; },
    reset(id) { const w = widgets.get(String(id ?? next)); if (w) w.token = ${JSON.stringify(token)}; },
    remove(id) { const w = widgets.get(String(id ?? next)); if (w) { w.box.remove(); widgets.delete(String(id ?? next)); } },
    execute() {},
  };
  window.${provider} = api;
})();
`;
}
