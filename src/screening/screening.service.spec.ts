import { CONTRACT } from '../../test/support/contract.js';
import type { Caller } from '../auth/caller.decorator.js';
import { loadConfig } from '../config/config.js';
import { FormTokens, type FormTokenCheck } from '../forms/form-tokens.service.js';
import type { NormalisedLead } from '../leads/normalised-lead.js';
import { RateLimitStore } from '../rate-limit/rate-limit.store.js';
import { CaptchaVerifier, CaptchaOutcome } from './captcha-verifier.js';
import type { LeadEvidence } from './lead-evidence.js';
import { SCREENING_REASONS } from './screening.js';
import { BURST_LIMIT, ScreeningService } from './screening.service.js';

const ANONYMOUS: Caller = { scope: 'ip:203.0.113.7', registrationId: null, clientId: null };
const AGENT: Caller = { scope: 'agent:r1', registrationId: '019ab5f6-3a07-7c1e-9a55-2f0e4b8d6c21', clientId: null };
const FROM = (address = '203.0.113.7', extra: Partial<LeadEvidence> = {}): LeadEvidence => ({ address, remoteIp: address, ...extra });

/** Real leads, as Brazilian people and companies write them: each must be accepted by every rule. */
const REAL_LEADS: NormalisedLead[] = [
  {
    nome: 'Maria da Conceição D’Ávila',
    email: 'maria.davila@souzaefilhos.com.br',
    telefone: '+55 (11) 98765-4321',
    telefone_e164: '+5511987654321',
    empresa: 'Souza & Filhos Comércio Ltda.',
    mensagem:
      'Olá! Vi o site https://www.souzaefilhos.com.br/beneficios e queria uma proposta de vale-refeição para 40 pessoas. ' +
      'Meu LinkedIn: linkedin.com/in/maria-davila. Orçamento < 10 mil por mês? Obrigada =)',
    origem: 'site-contato',
  },
  { nome: 'José Antônio Nóbrega Jr.', email: 'jose@padaria-sao-jose.com.br', empresa: 'Padaria São José (filial 2)', mensagem: '-- Enviado do meu iPhone' },
  { nome: "João O'Neil", email: 'joao.oneil@gmail.com', mensagem: '+ informações sobre o plano de 12 meses, por favor (a partir de 01/12).' },
  // Pasted from a mail client; a company's site beside its name.
  {
    nome: 'Carlos Eduardo <carlos@metalurgicasilva.ind.br>',
    email: 'carlos@metalurgicasilva.ind.br',
    empresa: 'Metalúrgica Silva Ltda. (www.metalurgicasilva.ind.br)',
  },
  {
    nome: 'Rafael Costa',
    email: 'rafael@costa.eng.br',
    mensagem: 'Nosso site: https://www.costa.eng.br. Meu perfil: https://www.linkedin.com/in/rafael-costa',
  },
  { nome: 'Beatriz Lima', email: 'bia@lima.arq.br', empresa: 'https://lima.arq.br', mensagem: 'Orçamento para 3 salas.' },
  { nome: 'Ana Paula', email: 'ana@uol.com.br', mensagem: '@Equipe comercial: podem ligar depois das 14h? Site: www.anapaula.adv.br' },
  { nome: 'Thaís Ximenes', email: 'thais@empresa.com.br', mensagem: 'Preciso de 3 cotações: 1) VR, 2) VA, 3) saúde. Vejam http://empresa.com.br/rh' },
];

class FakeFormTokens implements Pick<FormTokens, 'redeem'> {
  readonly redeemed: string[] = [];
  answer: FormTokenCheck | Error = 'valid';
  redeem(token: string): Promise<FormTokenCheck> {
    this.redeemed.push(token);
    return this.answer instanceof Error ? Promise.reject(this.answer) : Promise.resolve(this.answer);
  }
}

class FakeCaptcha {
  readonly asked: [string, string | undefined][] = [];
  outcome: CaptchaOutcome = 'ok';
  verify(token: string, remoteIp: string | undefined): Promise<CaptchaOutcome> {
    this.asked.push([token, remoteIp]);
    return Promise.resolve(this.outcome);
  }
}

describe('ScreeningService', () => {
  let stores: RateLimitStore[] = [];
  let formTokens: FakeFormTokens;
  let captcha: FakeCaptcha;
  afterEach(async () => {
    for (const store of stores) await store.onModuleDestroy();
    stores = [];
  });

  function screening(env: Record<string, string> = {}): ScreeningService {
    const config = loadConfig({ LOG_LEVEL: 'silent', ...env });
    const store = new RateLimitStore(config);
    stores.push(store);
    formTokens = new FakeFormTokens();
    captcha = new FakeCaptcha();
    return new ScreeningService(config, captcha as unknown as CaptchaVerifier, formTokens as unknown as FormTokens, store);
  }
  const WITH_CAPTCHA = { CAPTCHA_PROVIDER: 'turnstile', CAPTCHA_SECRET: 's', CAPTCHA_SITE_KEY: 'k' };

  it('lists the same reason codes as the contract’s ScreeningReason', () => {
    const schema = (CONTRACT as { components: { schemas: Record<string, { enum: string[] }> } }).components.schemas.ScreeningReason;
    expect(schema.enum).toEqual(Object.keys(SCREENING_REASONS));
  });

  it.each(REAL_LEADS.map((lead) => [lead.nome, lead]))('accepts a real lead: %s', async (_name, lead) => {
    expect(await screening().judge(lead, ANONYMOUS, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
  });

  it.each([
    ['too_many_links', { mensagem: 'BUY CHEAP VIAGRA http://a.example http://b.example www.c.example' }],
    ['too_many_links', { mensagem: 'Promoção: HTTPS://A.EXAMPLE/x, www.b.example e https://c.example/oferta' }],
    ['markup', { nome: '<script>alert(1)</script>' }],
    ['markup', { nome: 'Cheap pills https://pills.example' }],
    ['markup', { empresa: '<b>Loja</b>' }],
    ['markup', { nome: 'Ana<img src=x onerror=alert(1)>' }],
    ['markup', { empresa: '<svg/onload=alert(1)>' }],
    ['markup', { nome: 'Ana <!-- x -->' }],
    ['markup', { mensagem: 'Veja <a href="https://x.example">aqui</a>' }],
    ['spreadsheet_formula', { mensagem: '=HYPERLINK("https://x.example","Clique")' }],
    ['spreadsheet_formula', { nome: "=cmd|' /C calc'!A0" }],
    ['spreadsheet_formula', { empresa: '@SUM(1+1)*cmd' }],
    ['spreadsheet_formula', { origem: '-IMPORTXML(A1)' }],
  ])('holds a lead for %s: %j', async (reason, fields) => {
    const lead = { nome: 'Ana', email: 'ana@empresa.com.br', ...fields } as NormalisedLead;
    expect(await screening().judge(lead, ANONYMOUS, FROM())).toEqual({ verdict: 'held', reasons: [reason] });
    expect(await screening().judge(lead, AGENT, FROM())).toEqual({ verdict: 'held', reasons: [reason] });
  });

  it('holds an address on the disposable list, its subdomains too, unless SCREENING_ALLOW_DOMAINS lists it', async () => {
    const lead = (email: string): NormalisedLead => ({ nome: 'Ana', email });
    expect(await screening().judge(lead('test7@mailinator.com'), ANONYMOUS, FROM())).toEqual({ verdict: 'held', reasons: ['disposable_email'] });
    expect(await screening().judge(lead('x@inbox.mailinator.com'), AGENT, FROM())).toEqual({ verdict: 'held', reasons: ['disposable_email'] });
    // The list writes internationalised domains in punycode (xn--d-bga.net); a lead may carry the Unicode form.
    expect(await screening().judge(lead('x@dé.net'), ANONYMOUS, FROM('198.51.100.20'))).toEqual({ verdict: 'held', reasons: ['disposable_email'] });
    // A domain alone holds nothing unless the list names it: test.com is a real company's.
    expect(await screening().judge(lead('test7@test.com'), ANONYMOUS, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
    const allowed = screening({ SCREENING_ALLOW_DOMAINS: 'mailinator.com' });
    expect(await allowed.judge(lead('qa@mailinator.com'), ANONYMOUS, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
    expect(await allowed.judge(lead('qa@yopmail.com'), ANONYMOUS, FROM())).toEqual({ verdict: 'held', reasons: ['disposable_email'] });
  });

  it('calls a filled trap field spam, whatever else the lead is', async () => {
    const lead = { nome: 'Ana', email: 'a@mailinator.com' };
    expect(await screening().judge(lead, ANONYMOUS, FROM(undefined, { formTrap: 'https://spam.example' }))).toEqual({
      verdict: 'spam',
      reasons: ['disposable_email', 'honeypot', 'form_token_invalid'],
    });
  });

  it('redeems a Form-Token only when one is sent, and holds a lead whose token is too fresh, invalid or cannot be redeemed', async () => {
    const service = screening();
    const lead = REAL_LEADS[0];
    expect(await service.judge(lead, ANONYMOUS, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
    expect(formTokens.redeemed).toEqual([]);
    expect(await service.judge(lead, ANONYMOUS, FROM(undefined, { formToken: 't1' }))).toEqual({ verdict: 'accepted', reasons: [] });
    formTokens.answer = 'too_fast';
    expect(await service.judge(lead, ANONYMOUS, FROM(undefined, { formToken: 't2' }))).toEqual({ verdict: 'held', reasons: ['too_fast'] });
    formTokens.answer = 'invalid';
    expect(await service.judge(lead, ANONYMOUS, FROM(undefined, { formToken: 't3' }))).toEqual({ verdict: 'held', reasons: ['form_token_invalid'] });
    formTokens.answer = new Error('database gone');
    expect(await service.judge(lead, ANONYMOUS, FROM(undefined, { formToken: 't4' }))).toEqual({ verdict: 'held', reasons: ['form_token_invalid'] });
    expect(formTokens.redeemed).toEqual(['t1', 't2', 't3', 't4']);
    // The form's trap field, left empty, without a token: a form lead that proves nothing.
    expect(await service.judge(lead, ANONYMOUS, FROM('198.51.100.5', { formTrap: '' }))).toEqual({ verdict: 'held', reasons: ['form_token_invalid'] });
    formTokens.answer = 'valid';
    expect(await service.judge(lead, ANONYMOUS, FROM('198.51.100.6', { formTrap: '', formToken: 't5' }))).toEqual({ verdict: 'accepted', reasons: [] });
  });

  it('asks for a captcha only from anonymous callers, and only with a provider configured', async () => {
    const lead = REAL_LEADS[1];
    expect(await screening().judge(lead, ANONYMOUS, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
    const service = screening(WITH_CAPTCHA);
    expect(await service.judge(lead, ANONYMOUS, FROM())).toEqual({ verdict: 'held', reasons: ['captcha_missing'] });
    expect(await service.judge(lead, AGENT, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
    expect(await service.judge(lead, ANONYMOUS, FROM('203.0.113.9', { captchaToken: 'tok' }))).toEqual({ verdict: 'accepted', reasons: [] });
    expect(captcha.asked).toEqual([['tok', '203.0.113.9']]);
    for (const [outcome, verdict] of [
      ['captcha_failed', 'spam'],
      ['captcha_expired', 'held'],
      ['captcha_unavailable', 'held'],
    ] as const) {
      captcha.outcome = outcome;
      expect(await service.judge(lead, ANONYMOUS, FROM(undefined, { captchaToken: 'tok' }))).toEqual({ verdict, reasons: [outcome] });
    }
  });

  it(`holds the same nome, email and mensagem from one address after ${BURST_LIMIT} in 10 minutes; other addresses and bodies count apart`, async () => {
    const service = screening();
    const lead = REAL_LEADS[2];
    for (let i = 0; i < BURST_LIMIT; i++) expect((await service.judge(lead, ANONYMOUS, FROM())).verdict).toBe('accepted');
    expect(await service.judge(lead, ANONYMOUS, FROM())).toEqual({ verdict: 'held', reasons: ['duplicate_burst'] });
    expect(await service.judge(lead, ANONYMOUS, FROM('198.51.100.1'))).toEqual({ verdict: 'accepted', reasons: [] });
    expect(await service.judge({ ...lead, mensagem: `${lead.mensagem} Obrigado.` }, ANONYMOUS, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
    expect(await service.judge({ ...lead, telefone: '+55 11 3333-4444' }, ANONYMOUS, FROM())).toEqual({ verdict: 'held', reasons: ['duplicate_burst'] });
  });

  it('gives the verdict at once when nothing waits (no provider, no Form-Token, counters in memory), else as a promise', async () => {
    const service = screening();
    expect(service.judge(REAL_LEADS[0], ANONYMOUS, FROM())).toEqual({ verdict: 'accepted', reasons: [] });
    const withToken = service.judge(REAL_LEADS[0], ANONYMOUS, FROM(undefined, { formToken: 't' }));
    expect(withToken).toBeInstanceOf(Promise);
    expect(await withToken).toEqual({ verdict: 'accepted', reasons: [] });
    expect(screening(WITH_CAPTCHA).judge(REAL_LEADS[0], ANONYMOUS, FROM())).toBeInstanceOf(Promise);
  });

  it('switches each rule off by SCREENING_RULES', async () => {
    const junk: NormalisedLead = { nome: '<b>=HYPERLINK("x")</b>', email: 'a@mailinator.com', mensagem: 'http://a http://b http://c' };
    const evidence = FROM(undefined, { formTrap: 'x', formToken: 't' });
    const all = screening(WITH_CAPTCHA);
    formTokens.answer = 'invalid';
    expect(await all.judge(junk, ANONYMOUS, evidence)).toEqual({
      verdict: 'spam',
      reasons: ['captcha_missing', 'disposable_email', 'honeypot', 'form_token_invalid', 'too_many_links', 'markup'],
    });
    const none = screening({ ...WITH_CAPTCHA, SCREENING_RULES: 'none' });
    formTokens.answer = 'invalid';
    for (let i = 0; i <= BURST_LIMIT; i++) expect(await none.judge(junk, ANONYMOUS, evidence)).toEqual({ verdict: 'accepted', reasons: [] });
    expect(formTokens.redeemed).toEqual([]);
    const some = screening({ ...WITH_CAPTCHA, SCREENING_RULES: 'markup,spreadsheet_formula' });
    expect(await some.judge({ ...junk, nome: '=HYPERLINK("x")' }, ANONYMOUS, evidence)).toEqual({ verdict: 'held', reasons: ['spreadsheet_formula'] });
  });
});
