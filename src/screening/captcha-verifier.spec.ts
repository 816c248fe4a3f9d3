import { CaptchaStub, HCAPTCHA_TEST, TURNSTILE_TEST } from '../../test/support/captcha-stub.js';
import { loadConfig } from '../config/config.js';
import { CaptchaVerifier, VERIFY_TIMEOUT_MS } from './captcha-verifier.js';

/** The siteverify client against a local server that answers as each provider documents (test/support/captcha-stub.ts). */
describe('CaptchaVerifier', () => {
  let stub: CaptchaStub;
  beforeEach(async () => {
    stub = await CaptchaStub.start();
  });
  afterEach(() => stub.close());

  const turnstile = (secret: string, env: Record<string, string> = {}) =>
    new CaptchaVerifier(
      loadConfig({
        CAPTCHA_PROVIDER: 'turnstile',
        CAPTCHA_SECRET: secret,
        CAPTCHA_SITE_KEY: TURNSTILE_TEST.siteKeyPasses,
        CAPTCHA_VERIFY_URL: stub.turnstileVerifyUrl,
        ...env,
      }),
    );
  const hcaptcha = (env: Record<string, string> = {}) =>
    new CaptchaVerifier(
      loadConfig({
        CAPTCHA_PROVIDER: 'hcaptcha',
        CAPTCHA_SECRET: HCAPTCHA_TEST.secret,
        CAPTCHA_SITE_KEY: HCAPTCHA_TEST.siteKey,
        CAPTCHA_VERIFY_URL: stub.hcaptchaVerifyUrl,
        ...env,
      }),
    );

  it('posts Turnstile its form (secret, response, remoteip, a UUID idempotency_key) and passes the always-passes secret', async () => {
    expect(await turnstile(TURNSTILE_TEST.secretPasses).verify(TURNSTILE_TEST.dummyToken, '203.0.113.7')).toBe('ok');
    expect(stub.requests).toEqual([
      {
        provider: 'turnstile',
        contentType: 'application/x-www-form-urlencoded;charset=UTF-8',
        form: {
          secret: TURNSTILE_TEST.secretPasses,
          response: TURNSTILE_TEST.dummyToken,
          remoteip: '203.0.113.7',
          idempotency_key: expect.stringMatching(/^[0-9a-f-]{36}$/),
        },
      },
    ]);
  });

  it('sends the same idempotency_key for every attempt at one keyed lead with one token, and another otherwise', async () => {
    const verifier = turnstile(TURNSTILE_TEST.secretPasses);
    await verifier.verify(TURNSTILE_TEST.dummyToken, undefined, 'ip:203.0.113.7\nkey-1\nfingerprint');
    await verifier.verify(TURNSTILE_TEST.dummyToken, undefined, 'ip:203.0.113.7\nkey-1\nfingerprint');
    await verifier.verify('another-token', undefined, 'ip:203.0.113.7\nkey-1\nfingerprint');
    await verifier.verify(TURNSTILE_TEST.dummyToken, undefined, 'ip:203.0.113.7\nkey-2\nfingerprint');
    await verifier.verify(TURNSTILE_TEST.dummyToken, undefined);
    await verifier.verify(TURNSTILE_TEST.dummyToken, undefined);
    const keys = stub.requests.map((request) => request.form.idempotency_key);
    for (const key of keys) expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(new Set(keys).size).toBe(5);
  });

  it('maps Turnstile’s always-fails secret to captcha_failed and its already-spent secret (timeout-or-duplicate) to captcha_expired', async () => {
    expect(await turnstile(TURNSTILE_TEST.secretFails).verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_failed');
    expect(await turnstile(TURNSTILE_TEST.secretSpent).verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_expired');
    expect(await turnstile(TURNSTILE_TEST.secretPasses).verify('forged-token', undefined)).toBe('captcha_failed');
    expect(stub.requests.every((request) => !('remoteip' in request.form))).toBe(true);
  });

  it('calls a wrong secret unavailable, not the visitor’s failure: the lead is held for a person, not called spam', async () => {
    expect(await turnstile('0x4AAAAAAAwrong').verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_unavailable');
  });

  it('sends hCaptcha its sitekey and passes its test pair; another response fails', async () => {
    expect(await hcaptcha().verify(HCAPTCHA_TEST.response, '198.51.100.2')).toBe('ok');
    expect(await hcaptcha().verify('P1_not-a-real-token', '198.51.100.2')).toBe('captcha_failed');
    expect(stub.requests[0].form).toEqual({
      secret: HCAPTCHA_TEST.secret,
      response: HCAPTCHA_TEST.response,
      remoteip: '198.51.100.2',
      sitekey: HCAPTCHA_TEST.siteKey,
    });
  });

  it('checks the answer’s hostname only when CORS_ORIGINS lists origins', async () => {
    stub.hostname = 'www.cliente.com.br';
    const listed = turnstile(TURNSTILE_TEST.secretPasses, { CORS_ORIGINS: 'https://www.cliente.com.br,https://loja.cliente.com.br' });
    expect(await listed.verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('ok');
    stub.hostname = 'spam.example';
    expect(await listed.verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_failed');
    expect(await turnstile(TURNSTILE_TEST.secretPasses).verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('ok');
  });

  it('takes a token solved on a page of the service’s own origin (PUBLIC_BASE_URL), which posts without CORS', async () => {
    stub.hostname = 'contato.cliente.com.br';
    const verifier = turnstile(TURNSTILE_TEST.secretPasses, { CORS_ORIGINS: 'https://www.cliente.com.br', PUBLIC_BASE_URL: 'https://contato.cliente.com.br' });
    expect(await verifier.verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('ok');
  });

  it.each(['fail', 'garbage'] as const)('calls a provider that answers %s unavailable', async (mode) => {
    stub.mode = mode;
    expect(await turnstile(TURNSTILE_TEST.secretPasses).verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_unavailable');
  });

  it('calls a provider that cannot be reached unavailable', async () => {
    const verifier = turnstile(TURNSTILE_TEST.secretPasses, { CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify' });
    expect(await verifier.verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_unavailable');
  });

  it('does not read an answer past its size bound: a 1 MiB "success" from a broken proxy is unavailable', async () => {
    stub.mode = 'huge';
    expect(await turnstile(TURNSTILE_TEST.secretPasses).verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_unavailable');
  });

  it('gives up on an answer whose body stops coming, within its timeout', async () => {
    stub.mode = 'stall';
    const started = Date.now();
    expect(await turnstile(TURNSTILE_TEST.secretPasses).verify(TURNSTILE_TEST.dummyToken, undefined)).toBe('captcha_unavailable');
    expect(Date.now() - started).toBeLessThan(VERIFY_TIMEOUT_MS + 2000);
  }, 10_000);

  it('gives up on a provider that does not answer after its timeout', async () => {
    stub.mode = 'hang';
    const started = Date.now();
    expect(await hcaptcha().verify(HCAPTCHA_TEST.response, undefined)).toBe('captcha_unavailable');
    expect(Date.now() - started).toBeLessThan(VERIFY_TIMEOUT_MS + 2000);
  }, 10_000);
});
