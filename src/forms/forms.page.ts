import { docsLayout, escapeHtml } from '../docs/docs-layout.js';
import { LEAD_FIELD_NAMES } from '../leads/lead-rules.js';

/** The words of one form, in one language. */
interface FormWords {
  lang: string;
  success: string;
  trialSuccess: string;
  nome: string;
  email: string;
  telefone: string;
  empresa: string;
  mensagem: string;
  consent: string;
  /** The link to /privacy, where the people whose leads are kept see, erase or stop them themselves. */
  privacy: string;
  send: string;
}

const PT_BR: FormWords = {
  lang: 'pt-BR',
  success: 'Obrigado! Entraremos em contato em breve.',
  trialSuccess: 'Válido. Nada foi armazenado; este é o lead como o serviço o armazenaria:',
  nome: 'Nome',
  email: 'E-mail',
  telefone: 'Telefone',
  empresa: 'Empresa',
  mensagem: 'Mensagem',
  consent: 'Aceito receber comunicações da empresa por e-mail e telefone.',
  privacy: 'Seus dados e seus direitos (LGPD)',
  send: 'Enviar',
};

const EN: FormWords = {
  lang: 'en',
  success: 'Thank you! We will be in touch soon.',
  trialSuccess: 'Valid. Nothing was stored; this is the lead as the service would store it:',
  nome: 'Name',
  email: 'E-mail',
  telefone: 'Phone',
  empresa: 'Company',
  mensagem: 'Message',
  consent: 'I agree to receive communications from the company by e-mail and phone.',
  privacy: 'Your data and your rights (LGPD)',
  send: 'Send',
};

/** A form's markup; `trial` makes the example page's copy, checked by the sandbox; `idPrefix` keeps two copies' ids apart. */
function formMarkup(base: string, w: FormWords, options: { trial?: boolean; idPrefix?: string } = {}): string {
  const id = (name: string) => `${options.idPrefix ?? ''}${name}`;
  const attributes = options.trial
    ? `data-origem="forms-example" data-leads-sandbox data-success="${w.trialSuccess}"`
    : `data-origem="site" data-success="${w.success}"`;
  return `<form data-leads data-leads-lang="${w.lang}" ${attributes}>
  <label for="${id('nome')}">${w.nome}</label>
  <input id="${id('nome')}" name="nome" autocomplete="name" required>
  <label for="${id('email')}">${w.email}</label>
  <input id="${id('email')}" name="email" type="email" autocomplete="email" required>
  <label for="${id('telefone')}">${w.telefone}</label>
  <input id="${id('telefone')}" name="telefone" type="tel" autocomplete="tel">
  <label for="${id('empresa')}">${w.empresa}</label>
  <input id="${id('empresa')}" name="empresa" autocomplete="organization">
  <label for="${id('mensagem')}">${w.mensagem}</label>
  <textarea id="${id('mensagem')}" name="mensagem" rows="4"></textarea>
  <label><input type="checkbox" data-leads-consent="communications">
    ${w.consent}</label>
  <p><a href="${base}/privacy?lang=${w.lang}">${w.privacy}</a></p>
  <button type="submit">${w.send}</button>
</form>`;
}

/** The two things a site owner pastes: the script tag and the form markup. */
export function pasteSnippet(base: string): { script: string; form: string } {
  return { script: `<script src="${base}/forms/leads.js" defer></script>`, form: formMarkup(base, PT_BR) };
}

/** The page's layout of its two live forms; the forms themselves look as the script's default style makes them. */
const EXAMPLE_CSS = `<style>
.examples{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,22rem),1fr));gap:1rem 2rem}
</style>`;

/** GET /forms/example: the copy-paste instructions and a working form using the script from this origin. */
export function examplePage(base: string): string {
  const snippet = pasteSnippet(base);
  const body = `${EXAMPLE_CSS}
<h1>Lead form for your site</h1>
<p>Paste these two pieces into any page. The script finds every <code>&lt;form data-leads&gt;</code>, sends it as JSON
to <code>${escapeHtml(base)}/api/v1/lead</code>, shows errors under the fields in the visitor's language, and never sends a
form twice. It brings a small default style that any CSS of your page overrides.</p>
<h2>1. The script (once per page)</h2>
<pre><code id="snippet-script">${escapeHtml(snippet.script)}</code></pre>
<h2>2. The form</h2>
<pre><code id="snippet-form">${escapeHtml(snippet.form)}</code></pre>
<p class="meta">Fields are read by <code>name</code>: ${LEAD_FIELD_NAMES.map((name) => `<code>${name}</code>`).join(', ')}. Optional attributes: <code>data-origem</code> (where
the lead came from, unless the form has an <code>origem</code> field), <code>data-success</code> (the thank-you text),
<code>data-leads-api</code> (another API origin), <code>data-leads-style="none"</code> (no default style: your page's CSS
alone).</p>
<p class="meta"><strong>Language.</strong> Messages are in Brazilian Portuguese or English: the form's
<code>data-leads-lang</code> (<code>pt-BR</code>, <code>en</code>) decides, else the page's <code>&lt;html lang&gt;</code>, else
Portuguese. They name each field by its <code>&lt;label&gt;</code>.</p>
<p class="meta"><strong>Consent.</strong> A checkbox with <code>data-leads-consent="communications"</code> (or
<code>"data_processing"</code>) is not a field: it sends <code>legal_bases</code> (consent <code>granted</code> when checked,
<code>declined</code> when not) and its label's text as <code>consent_text</code>. Give it <code>required</code> if the form may not be
sent without it. Beside it, link <code>${escapeHtml(base)}/privacy</code>: the page where the people whose leads are kept see them,
erase them or stop communications themselves, in Portuguese or English (<code>?lang=en</code>).</p>
<p class="meta"><strong>Context.</strong> The lead also carries where it came from: the page's address without query or fragment,
its title, the referring page (likewise reduced), and the <code>utm_source</code>, <code>utm_medium</code>, <code>utm_campaign</code>,
<code>utm_term</code>, <code>utm_content</code>, <code>gclid</code> and <code>fbclid</code> parameters of the page's address. No cookies,
no storage.</p>
<p class="meta"><strong>Screening.</strong> When it shows the form the script takes a single-use form token from
<code>${escapeHtml(base)}/forms/token</code> and sends it with the lead, with the value of a hidden trap field that only bots fill;
every lead gets the same answer, and the service decides whether it reaches people. When the service uses a captcha, the script
renders its widget before the submit button (or inside an element with <code>data-leads-captcha</code>): your page's
Content-Security-Policy must then allow the widget's script and frame.</p>
<h2>Try it</h2>
<p>These copies of the form carry <code>data-leads-sandbox</code>: they are validated by <code>/api/v1/sandbox</code>, which
stores nothing, and show the lead as it would be stored. The form you paste has no such attribute and sends real leads.
Send one empty to see the messages in each language.</p>
<div class="examples">
<section lang="pt-BR" aria-labelledby="try-pt">
<h3 id="try-pt">Fale conosco</h3>
${formMarkup(escapeHtml(base), PT_BR, { trial: true })}
</section>
<section lang="en" aria-labelledby="try-en">
<h3 id="try-en">Contact us (in English)</h3>
${formMarkup(escapeHtml(base), EN, { trial: true, idPrefix: 'en-' })}
</section>
</div>
<script src="/forms/leads.js" defer></script>`;
  return docsLayout('Lead form for your site', body, '/forms/example');
}
