import { escapeHtml } from '../docs/docs-layout.js';
import { personPageHead } from '../docs/person-page.js';

/** The words of one page, Portuguese first, then English (people read Portuguese first). */
interface Words {
  title: string;
  pt: string[];
  en: string[];
}

/** A page in both languages, with an optional form between the Portuguese and the English: the page's first form. */
function page(words: Words, form = ''): string {
  const paragraphs = (lines: string[]) => lines.map((line) => `<p>${line}</p>`).join('\n');
  return `${personPageHead('pt-BR', words.title)}
<body>
<main>
<h1>${escapeHtml(words.title)}</h1>
${paragraphs(words.pt)}
${form}
<section lang="en">
${paragraphs(words.en)}
</section>
</main>
</body>
</html>
`;
}

/** A form that posts, with no script and no cookie; its fields in hidden inputs. */
function postForm(action: string, fields: Record<string, string>, button: string): string {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('\n');
  return `<form method="post" action="${escapeHtml(action)}">
${inputs}
<button type="submit">${escapeHtml(button)}</button>
</form>`;
}

/** The confirmation link's page: opening it confirms nothing (mail scanners open links); its first form does. */
export function confirmationPage(action: string, token: string): string {
  return page(
    {
      title: 'Confirmar endereço · Confirm address',
      pt: [
        'Confirme que este endereço deve receber por e-mail os novos leads do site. Nada muda até você apertar o botão.',
        'Se você não pediu isso, feche esta página: este endereço não receberá nada.',
      ],
      en: [
        "Confirm that this address should receive the site's new leads by e-mail: press the button above (Confirm). Nothing changes until you do.",
        'If you did not ask for this, close this page: this address will get nothing.',
      ],
    },
    postForm(action, { token }, 'Confirmar · Confirm'),
  );
}

export function confirmedPage(): string {
  return page({
    title: 'Endereço confirmado · Address confirmed',
    pt: ['Pronto: este endereço passa a receber os novos leads por e-mail. Cada e-mail traz um link para parar de recebê-los.'],
    en: ['Done: this address now receives the new leads by e-mail. Every e-mail carries a link to stop them.'],
  });
}

/** The same page for every link that does nothing: unknown, altered, expired, used, replaced, its recipient gone. */
export function invalidLinkPage(): string {
  return page({
    title: 'Link inválido · Link not valid',
    pt: [
      'Este link não é válido: pode ter expirado (um link de confirmação vale 7 dias), já ter sido usado ou ter sido substituído por um mais novo.',
      'Use o link do e-mail mais recente, ou peça a quem cadastrou este endereço que envie outro.',
    ],
    en: [
      'This link is not valid: it may have expired (a confirmation link lasts 7 days), been used already, or been replaced by a newer one.',
      'Use the link of the newest e-mail, or ask whoever added this address to send another.',
    ],
  });
}

/** The unsubscribe link's page: its button posts the RFC 8058 one-click body. */
export function unsubscribePage(action: string): string {
  return page(
    {
      title: 'Parar de receber · Unsubscribe',
      pt: ['Aperte o botão para que este endereço pare de receber os e-mails de novos leads.'],
      en: ['Press the button (Unsubscribe) so that this address stops receiving the e-mails about new leads.'],
    },
    postForm(action, { 'List-Unsubscribe': 'One-Click' }, 'Parar de receber · Unsubscribe'),
  );
}

export function unsubscribedPage(): string {
  return page({
    title: 'Inscrição cancelada · Unsubscribed',
    pt: ['Pronto: este endereço não receberá mais e-mails de novos leads. Para voltar a recebê-los, peça a quem o cadastrou.'],
    en: ['Done: this address will get no more e-mails about new leads. To get them again, ask whoever added it.'],
  });
}
