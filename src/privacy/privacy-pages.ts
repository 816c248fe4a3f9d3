import { escapeHtml as e } from '../docs/docs-layout.js';
import { PageLanguage, personPage } from '../docs/person-page.js';
import type { LeadView } from '../leads/lead-reader.service.js';
import type { PrivacySummary } from './privacy-summary.js';

export type RequestType = 'access' | 'erasure' | 'consent_revocation';

/** What a page in each language says. Portuguese first: people read it first. */
const WORDS = {
  'pt-BR': {
    title: 'Seus dados pessoais',
    intro:
      'Pela Lei Geral de Proteção de Dados (LGPD, art. 18), você pode saber quais dados pessoais temos sobre você, pedir que sejam eliminados ou deixar de receber comunicações. Escolha o pedido e informe o seu e-mail: enviaremos um código para confirmar que o endereço é seu.',
    type: 'O que você quer fazer?',
    types: {
      access: 'Ver os dados que vocês têm sobre mim (uma cópia)',
      erasure: 'Eliminar os meus dados',
      consent_revocation: 'Não receber mais comunicações',
    },
    email: 'Seu e-mail',
    send: 'Enviar código',
    sentTitle: 'Digite o código',
    sent: 'Se o endereço estiver certo, um código de 6 dígitos chega a ele em instantes (veja também a caixa de spam). Ele vale por 10 minutos.',
    warning: 'Se você não fez este pedido, não continue: sem o código, nada acontece.',
    code: 'Código do e-mail',
    confirm: 'Confirmar',
    wrongCode: (left: number) => `Código incorreto. Restam ${left} tentativa${left === 1 ? '' : 's'}.`,
    badCode: 'O código tem 6 dígitos: digite-o como veio no e-mail.',
    locked: 'O código foi digitado errado cinco vezes e este pedido foi encerrado. Faça o pedido de novo para receber outro código.',
    expired: 'O código deste pedido expirou (vale 10 minutos). Faça o pedido de novo para receber outro código.',
    notFound: 'Este pedido não existe. Faça o pedido de novo.',
    done: 'Este pedido já foi confirmado: foi atendido, ou será em poucos minutos.',
    tooMany: 'Muitos códigos foram pedidos para este endereço ou a partir desta rede. Tente de novo mais tarde.',
    captcha: 'Confirme que você não é um robô e envie de novo.',
    invalid: 'Escolha um pedido e informe um e-mail válido, como nome@empresa.com.br.',
    again: 'Fazer um novo pedido',
    accessTitle: 'Os dados que temos sobre você',
    holdsNone: 'Não temos nenhum dado pessoal associado a este endereço.',
    holds: (n: number) => `Temos ${n} registro${n === 1 ? '' : 's'} (lead${n === 1 ? '' : 's'}) com este endereço.`,
    since: 'Primeiro registro',
    last: 'Último registro',
    kinds: 'Dados guardados',
    kindNames: {
      nome: 'nome',
      email: 'e-mail',
      telefone: 'telefone',
      empresa: 'empresa',
      mensagem: 'mensagem',
      attribution: 'origem da visita (página e campanha)',
    },
    sources: 'De onde vieram',
    bases: 'Bases legais',
    recipients: 'Quem recebe os dados dos leads',
    noRecipients: 'Ninguém além da nossa equipe.',
    records: 'Os registros',
    download: 'Baixar todos os registros (CSV)',
    downloadNote: 'O download vale por uma hora.',
    erasedTitle: 'Dados eliminados',
    erased: (n: number) => `Eliminamos ${n} registro${n === 1 ? '' : 's'} com este endereço, e avisamos os sistemas que os receberam.`,
    revokedTitle: 'Comunicações canceladas',
    revoked: (n: number) => `Registramos que você não quer mais receber comunicações (${n} registro${n === 1 ? '' : 's'} atualizado${n === 1 ? '' : 's'}).`,
    received: 'Recebido em',
  },
  en: {
    title: 'Your personal data',
    intro:
      "Under Brazil's data protection law (LGPD, art. 18) you may know what personal data we hold on you, ask us to erase it, or stop receiving communications. Choose the request and give your e-mail address: we will send a code to confirm that the address is yours.",
    type: 'What do you want to do?',
    types: {
      access: 'See the data you hold on me (a copy)',
      erasure: 'Erase my data',
      consent_revocation: 'Stop receiving communications',
    },
    email: 'Your e-mail address',
    send: 'Send code',
    sentTitle: 'Enter the code',
    sent: 'If the address is right, a 6-digit code reaches it in a moment (look in the spam folder too). It is valid for 10 minutes.',
    warning: 'If you did not make this request, do not go on: without the code, nothing happens.',
    code: 'Code from the e-mail',
    confirm: 'Confirm',
    wrongCode: (left: number) => `Wrong code. ${left} ${left === 1 ? 'try' : 'tries'} left.`,
    badCode: 'The code has 6 digits: type it as the e-mail gave it.',
    locked: 'The code was entered wrong five times, and this request is closed. Make the request again for a new code.',
    expired: 'The code of this request has expired (it lasts 10 minutes). Make the request again for a new code.',
    notFound: 'This request does not exist. Make the request again.',
    done: 'This request was already confirmed: it has been carried out, or will be within minutes.',
    tooMany: 'Too many codes were asked for this address or from this network. Try again later.',
    captcha: 'Confirm that you are not a robot, and send again.',
    invalid: 'Choose a request and give a valid e-mail address, like name@company.com.',
    again: 'Make a new request',
    accessTitle: 'The data we hold on you',
    holdsNone: 'We hold no personal data linked to this address.',
    holds: (n: number) => `We hold ${n} record${n === 1 ? '' : 's'} (lead${n === 1 ? '' : 's'}) with this address.`,
    since: 'First record',
    last: 'Latest record',
    kinds: 'Data held',
    kindNames: {
      nome: 'name',
      email: 'e-mail',
      telefone: 'telephone',
      empresa: 'company',
      mensagem: 'message',
      attribution: 'where the visit came from (page and campaign)',
    },
    sources: 'Where they came from',
    bases: 'Legal bases',
    recipients: "Who receives leads' data",
    noRecipients: 'Nobody but our own team.',
    records: 'The records',
    download: 'Download every record (CSV)',
    downloadNote: 'The download is valid for one hour.',
    erasedTitle: 'Data erased',
    erased: (n: number) => `We erased ${n} record${n === 1 ? '' : 's'} with this address, and told the systems that received them.`,
    revokedTitle: 'Communications stopped',
    revoked: (n: number) => `We recorded that you no longer want communications (${n} record${n === 1 ? '' : 's'} updated).`,
    received: 'Received',
  },
} as const;

export type Notice = 'wrongCode' | 'badCode' | 'locked' | 'expired' | 'notFound' | 'done' | 'tooMany' | 'captcha' | 'invalid';

/** The captcha widget a provider renders by itself into the form (no script of ours): its class and script. */
export interface CaptchaWidget {
  className: string;
  siteKey: string;
  scriptUrl: string;
}

const layout = (lang: PageLanguage, title: string, body: string, head = '') => personPage(lang, '/privacy', title, body, head);

function notice(lang: PageLanguage, which: Notice | undefined, triesLeft = 0): string {
  if (!which) return '';
  const w = WORDS[lang];
  const text = which === 'wrongCode' ? w.wrongCode(triesLeft) : w[which];
  return `<p class="notice" role="alert">${e(text)}</p>\n`;
}

/** The start: the request's type and the address; posts to /privacy (no cookie, no script of ours). */
export function startPage(lang: PageLanguage, state: { type?: string; email?: string; notice?: Notice } = {}, captcha?: CaptchaWidget): string {
  const w = WORDS[lang];
  const options = (Object.keys(w.types) as RequestType[])
    .map(
      (type) =>
        `<label class="choice"><input type="radio" name="type" value="${type}"${(state.type ?? 'access') === type ? ' checked' : ''} required> ${e(w.types[type])}</label>`,
    )
    .join('\n');
  const widget = captcha ? `<div class="${captcha.className}" data-sitekey="${e(captcha.siteKey)}"></div>\n` : '';
  const head = captcha ? `<script src="${e(captcha.scriptUrl)}" async defer></script>\n` : '';
  return layout(
    lang,
    w.title,
    `<p>${e(w.intro)}</p>
${notice(lang, state.notice)}<form method="post" action="/privacy" class="stack">
<input type="hidden" name="lang" value="${lang}">
<fieldset>
<legend>${e(w.type)}</legend>
${options}
</fieldset>
<label for="email">${e(w.email)}</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="320" value="${e(state.email ?? '')}">
${widget}<button type="submit">${e(w.send)}</button>
</form>`,
    head,
  );
}

/** The code's form: needs no cookie, the request's id is in the action. */
export function codePage(lang: PageLanguage, id: string, state: { notice?: Notice; triesLeft?: number } = {}): string {
  const w = WORDS[lang];
  return layout(
    lang,
    w.sentTitle,
    `${notice(lang, state.notice, state.triesLeft)}<p>${e(w.sent)}</p>
<p><strong>${e(w.warning)}</strong></p>
<form method="post" action="/privacy/requests/${e(id)}/verify" class="stack">
<input type="hidden" name="lang" value="${lang}">
<label for="code">${e(w.code)}</label>
<input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,8}" maxlength="8" required>
<button type="submit">${e(w.confirm)}</button>
</form>`,
  );
}

/** A request that cannot go on (locked, expired, unknown, done, too many codes): the way to start again. */
export function endPage(lang: PageLanguage, which: Notice): string {
  const w = WORDS[lang];
  return layout(lang, w.title, `${notice(lang, which)}<p><a href="/privacy?lang=${lang}">${e(w.again)}</a></p>`);
}

export function accessPage(
  lang: PageLanguage,
  id: string,
  result: { summary: PrivacySummary; data: LeadView[]; downloadToken: string },
  format: (iso: string) => string,
): string {
  const w = WORDS[lang];
  const s = result.summary;
  if (!s.holds_data) return layout(lang, w.accessTitle, `<p>${e(w.holdsNone)}</p>\n<p><a href="/privacy?lang=${lang}">${e(w.again)}</a></p>`);
  const list = (items: string[]) => `<ul>\n${items.map((item) => `<li>${e(item)}</li>`).join('\n')}\n</ul>`;
  const recipients = s.recipients.length ? list(s.recipients.map((r) => r.name)) : `<p>${e(w.noRecipients)}</p>`;
  const leads = result.data
    .map(
      (lead) =>
        `<tr><td>${e(format(lead.received_at))}</td><td>${e(lead.nome)}</td><td>${e(lead.email)}</td><td>${e(lead.telefone ?? '')}</td><td>${e(
          lead.empresa ?? '',
        )}</td><td>${e(lead.mensagem ?? '')}</td></tr>`,
    )
    .join('\n');
  const k = w.kindNames as Record<string, string>;
  return layout(
    lang,
    w.accessTitle,
    `<p>${e(w.holds(s.leads))}</p>
<dl>
<dt>${e(w.since)}</dt><dd>${e(format(s.first_received_at!))}</dd>
<dt>${e(w.last)}</dt><dd>${e(format(s.last_received_at!))}</dd>
<dt>${e(w.kinds)}</dt><dd>${e(s.data_held.map((kind) => k[kind] ?? kind).join(', '))}</dd>
</dl>
<h2>${e(w.sources)}</h2>
${list(s.sources.map((source) => `${source.origem ?? '—'} (${source.channel}): ${source.leads}`))}
<h2>${e(w.bases)}</h2>
${s.legal_bases.length ? list(s.legal_bases.map((basis) => `${basis.category}: ${basis.type}, ${basis.status} (${basis.leads})`)) : '<p>—</p>'}
<h2>${e(w.recipients)}</h2>
${recipients}
<h2>${e(w.records)}</h2>
<form method="post" action="/privacy/requests/${e(id)}/download">
<input type="hidden" name="download_token" value="${e(result.downloadToken)}">
<button type="submit">${e(w.download)}</button>
</form>
<p class="meta">${e(w.downloadNote)}</p>
<table>
<thead><tr><th>${e(w.received)}</th>${(['nome', 'email', 'telefone', 'empresa', 'mensagem'] as const).map((kind) => `<th>${e(k[kind])}</th>`).join('')}</tr></thead>
<tbody>
${leads}
</tbody>
</table>`,
  );
}

export function erasedPage(lang: PageLanguage, leads: number): string {
  const w = WORDS[lang];
  return layout(lang, w.erasedTitle, `<p>${e(w.erased(leads))}</p>`);
}

export function revokedPage(lang: PageLanguage, revoked: number): string {
  const w = WORDS[lang];
  return layout(lang, w.revokedTitle, `<p>${e(w.revoked(revoked))}</p>`);
}
