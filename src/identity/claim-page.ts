import { escapeHtml as e } from '../docs/docs-layout.js';
import { PageLanguage, personPage } from '../docs/person-page.js';

const WORDS = {
  'pt-BR': {
    title: 'Confirmar um agente',
    what: 'Um agente de IA pediu para agir em seu nome neste serviço. Confirmar permite que ele envie e consulte pedidos como sendo seu, com uma cota maior de uso.',
    when: 'O agente se registrou em',
    warning: 'Se não foi você quem pediu isto, não continue: feche esta página. Sem os dois códigos, nada acontece.',
    userCode: 'Código mostrado pelo agente (XXXX-XXXX)',
    emailCode: 'Código de 6 dígitos do e-mail',
    confirm: 'Confirmar o agente',
    wrong: (left: number) => `Um dos códigos está incorreto. Restam ${left} tentativa${left === 1 ? '' : 's'}.`,
    ended:
      'Esta confirmação não está mais aberta: expirou (vale 10 minutos), já foi usada ou foi encerrada após cinco códigos errados. Peça ao agente para começar de novo.',
    unknown: 'Esta página de confirmação não existe. Use o endereço que o agente mostrou.',
    done: 'Pronto: o agente agora age em seu nome. Ele recebe a confirmação na próxima consulta.',
  },
  en: {
    title: 'Confirm an agent',
    what: 'An AI agent asked to act for you at this service. Confirming lets it send and read requests as yours, with a higher quota.',
    when: 'The agent registered on',
    warning: 'If you did not ask for this, do not go on: close this page. Without both codes, nothing happens.',
    userCode: 'Code the agent shows (XXXX-XXXX)',
    emailCode: '6-digit code from the e-mail',
    confirm: 'Confirm the agent',
    wrong: (left: number) => `One of the codes is wrong. ${left} ${left === 1 ? 'try' : 'tries'} left.`,
    ended: 'This confirmation is no longer open: it expired (it lasts 10 minutes), was used, or ended after five wrong codes. Ask the agent to start again.',
    unknown: 'This confirmation page does not exist. Use the address the agent showed you.',
    done: 'Done: the agent now acts for you. It learns so at its next poll.',
  },
} as const;

/** The claim's page: what confirming does, when the agent registered (never its self-chosen name), and the form. */
export function claimPage(lang: PageLanguage, id: string, registeredAt: string, state: { triesLeft?: number } = {}): string {
  const w = WORDS[lang];
  const alert = state.triesLeft !== undefined ? `<p class="notice" role="alert">${e(w.wrong(state.triesLeft))}</p>\n` : '';
  return personPage(
    lang,
    `/claim/${id}`,
    w.title,
    `${alert}<p>${e(w.what)}</p>
<p>${e(w.when)} <strong>${e(registeredAt)}</strong>.</p>
<p><strong>${e(w.warning)}</strong></p>
<form method="post" action="/claim/${e(id)}" class="stack">
<input type="hidden" name="lang" value="${lang}">
<label for="user_code">${e(w.userCode)}</label>
<input id="user_code" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="12" required>
<label for="email_code">${e(w.emailCode)}</label>
<input id="email_code" name="email_code" inputmode="numeric" autocomplete="one-time-code" maxlength="8" required>
<button type="submit">${e(w.confirm)}</button>
</form>`,
  );
}

/** A page that only says something: the claim confirmed, ended, or unknown. */
export function claimMessagePage(lang: PageLanguage, id: string, which: 'done' | 'ended' | 'unknown'): string {
  const w = WORDS[lang];
  return personPage(lang, `/claim/${id}`, w.title, `<p${which === 'done' ? '' : ' role="alert"'}>${e(w[which])}</p>`);
}
