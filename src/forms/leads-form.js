// @ts-check
/* The embeddable form script served as it is at /forms/leads.js: plain ES5-compatible JavaScript for customer pages, no
 * dependencies, no cookies, no storage. Every `<form data-leads>` on the page is posted as JSON to `{api}/api/v1/lead`, where
 * {api} is the origin the script was loaded from unless the form's `data-leads-api` names another. With the lead fields go the
 * consent checkboxes' answers (`data-leads-consent`) and where the visitor came from (`context`, read from the page's address,
 * title and referrer). Messages follow the form's `data-leads-lang`, else `<html lang>`: English, or Brazilian Portuguese.
 * With each lead go the screening signals (issue 33): a single-use form token from `{api}/forms/token`, taken when the form
 * is shown, in `Form-Token`; the hidden trap field's value in `Form-Trap`; and, when the service names a captcha provider,
 * the widget's token in `Captcha-Token`. Type-checked by tsconfig.form.json and linted with the rest of src/. */
(function () {
  'use strict';
  // The service serves this file with the lead fields of src/leads/lead-rules.ts and their length bounds (in code points)
  // written in here (src/forms/forms.script.ts).
  var FIELDS = /** @type {string[]} */ ([]);
  var LIMITS = /** @type {Record<string, {min: number, max: number}>} */ ({});
  var HONEYPOT = 'website';
  var TRAP_MAX = 256;
  // The service refuses a form token two hours after issue: a new one is taken ten minutes before that.
  var TOKEN_REFRESH_MS = (120 - 10) * 60 * 1000;
  // A lead sent sooner than 3 s after its token was issued is screened as too fast; a token taken anew while the person
  // was already on the page is held back this long before it is sent (the first one is not: nobody fills a form that fast).
  var TOKEN_MIN_AGE_MS = 3500;
  // How long a widget's token is good for (Turnstile: 300 s, hCaptcha: 120 s), less a margin.
  /** @type {Record<string, number>} */
  var CAPTCHA_LIFETIME_MS = { turnstile: 280 * 1000, hcaptcha: 100 * 1000 };
  var MAX_AUTO_RETRY_SECONDS = 120;
  var CONSENT_CATEGORIES = ['communications', 'data_processing'];
  var CONSENT_TEXT_MAX = 2000;
  var URL_MAX = 2048;
  var TEXT_MAX = 256;
  var CAMPAIGN_PARAMETERS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'gclid', 'fbclid'];

  /**
   * Everything the script says, by language. {label} is the field's label; {min}, {max}, {seconds}, {status} are filled in.
   * "error." and a code words a field error; "error.code.field" words one field's more precisely.
   * @type {Record<string, Record<string, string>>}
   */
  var TEXTS = {
    'pt-BR': {
      success: 'Obrigado! Recebemos sua mensagem e entraremos em contato em breve.',
      sending: 'Enviando…',
      fix: 'Corrija os campos destacados.',
      not_sent: 'Não foi possível enviar o formulário.',
      network: 'Não foi possível enviar o formulário: verifique sua conexão e tente de novo.',
      wait_retry: 'Muitos envios neste momento. Aguarde {seconds}; enviaremos de novo automaticamente.',
      wait_again: 'Muitos envios neste momento. Aguarde {seconds} e envie de novo.',
      second: 'segundo',
      seconds: 'segundos',
      in_progress: 'Seu envio anterior ainda está sendo processado. Aguarde um instante e envie de novo.',
      too_large: 'O formulário é grande demais para ser enviado. Encurte a mensagem e tente de novo.',
      unavailable: 'O serviço está indisponível no momento. Tente de novo em alguns minutos.',
      failed: 'Não foi possível enviar o formulário (HTTP {status}). Tente de novo.',
      consent_required: 'Marque esta caixa se deseja continuar.',
      captcha: 'Conclua a verificação abaixo; o formulário será enviado em seguida.',
      trap: 'Deixe este campo vazio',
      'error.required': 'Informe {label}.',
      'error.invalid_type': '{label} tem um valor de tipo inválido.',
      'error.invalid_characters': '{label} contém caracteres não permitidos.',
      'error.blank': '{label} não pode ficar em branco.',
      'error.too_short': '{label} precisa de pelo menos {min} caracteres.',
      'error.too_short.telefone': '{label} precisa de pelo menos {min} dígitos.',
      'error.too_long': '{label} pode ter no máximo {max} caracteres.',
      'error.longer': '{label} passa do tamanho permitido.',
      'error.invalid_format': '{label} não está em um formato válido.',
      'error.invalid_format.email': '{label} não parece um endereço válido, como nome@empresa.com.br.',
      'error.invalid_format.telefone': '{label} precisa de pelo menos 8 dígitos, só com espaços e + - ( ) . entre eles.',
      'error.unknown_field': '{label} não é um campo aceito pelo serviço.',
      'error.invalid_url': '{label} não é um endereço web válido.',
      'error.scheme_not_allowed': '{label} precisa começar com http:// ou https://.',
      'error.duplicate': '{label} tem itens repetidos.',
      'error.invalid_value': '{label} tem um valor não permitido.',
      'error.too_many': '{label} tem itens demais.',
      'error.invalid': '{label} tem um valor inválido.',
      // The members that have no field of their own.
      'member.legal_bases': 'Consentimento',
      'member.consent_text': 'Texto do consentimento',
      'member.context': 'Contexto da página',
      'member.context.page_url': 'Endereço da página',
      'member.context.page_title': 'Título da página',
      'member.context.referrer': 'Endereço de origem',
    },
    en: {
      success: 'Thank you! We received your message and will be in touch soon.',
      sending: 'Sending…',
      fix: 'Please correct the highlighted fields.',
      not_sent: 'The form could not be sent.',
      network: 'The form could not be sent: check your connection and try again.',
      wait_retry: 'Too many submissions right now. Please wait {seconds}; we will send it again automatically.',
      wait_again: 'Too many submissions right now. Please wait {seconds} and send again.',
      second: 'second',
      seconds: 'seconds',
      in_progress: 'Your previous submission is still being processed. Wait a moment and send again.',
      too_large: 'The form is too large to send. Shorten the message and try again.',
      unavailable: 'The service is unavailable right now. Please try again in a few minutes.',
      failed: 'The form could not be sent (HTTP {status}). Please try again.',
      consent_required: 'Please check this box if you want to proceed.',
      captcha: 'Complete the verification below; the form will then be sent.',
      trap: 'Leave this field empty',
      'error.required': '{label} is required.',
      'error.invalid_type': '{label} has a value of the wrong type.',
      'error.invalid_characters': '{label} contains characters that are not allowed.',
      'error.blank': '{label} cannot be blank.',
      'error.too_short': '{label} needs at least {min} characters.',
      'error.too_short.telefone': '{label} needs at least {min} digits.',
      'error.too_long': '{label} can have at most {max} characters.',
      'error.longer': '{label} is too long.',
      'error.invalid_format': '{label} is not in a valid format.',
      'error.invalid_format.email': '{label} does not look like a valid address, such as name@company.com.',
      'error.invalid_format.telefone': '{label} needs at least 8 digits, with only spaces and + - ( ) . between them.',
      'error.unknown_field': '{label} is not a field the service accepts.',
      'error.invalid_url': '{label} is not a valid web address.',
      'error.scheme_not_allowed': '{label} must start with http:// or https://.',
      'error.duplicate': '{label} has repeated entries.',
      'error.invalid_value': '{label} has a value that is not allowed.',
      'error.too_many': '{label} has too many entries.',
      'error.invalid': '{label} has an invalid value.',
      'member.legal_bases': 'Consent',
      'member.consent_text': 'Consent text',
      'member.context': 'Page context',
      'member.context.page_url': 'Page address',
      'member.context.page_title': 'Page title',
      'member.context.referrer': 'Referring address',
    },
  };

  /**
   * The default look, for forms without `data-leads-style="none"`: labels above full-width fields, each error under its
   * field, invalid fields and the form's error message in one colour (a border and a shadow: outline is left to focus).
   * Every selector is inside :where(), so it weighs nothing and any rule of the page (even `label {}`) wins over it; and
   * the sheet is one cascade layer, so the page's rules of no weight either (`* {margin:0}`, `:where(input) {}`) win
   * too, although a constructed sheet comes after the page's own in the cascade (unlayered rules beat layered ones).
   */
  var FORM = 'form[data-leads]:not([data-leads-style="none"])';
  var CONTROL =
    'textarea, select, input:not([type=checkbox]):not([type=radio]):not([type=submit]):not([type=button]):not([type=reset])' +
    ':not([type=image]):not([type=file]):not([type=range]):not([type=color]):not([type=hidden])';
  var BOX = ':is(input[type=checkbox], input[type=radio])';
  var RED = '#c62828';
  var STYLE =
    '@layer leads-form {\n' +
    [
      [FORM, 'max-width:36rem'],
      [FORM + ' > :first-child', 'margin-top:0'],
      [FORM + ' label', 'display:block;margin:.9rem 0 .3rem;font-weight:600'],
      [
        FORM + ' :is(' + CONTROL + ')',
        'display:block;box-sizing:border-box;width:100%;margin:0;padding:.5rem .6rem;font:inherit;font-weight:400;border:1px solid #8c959f;border-radius:4px',
      ],
      [FORM + ' label > :is(' + CONTROL + ')', 'margin-top:.3rem'],
      [FORM + ' textarea', 'resize:vertical'],
      // A checkbox's label: the box before the words, which wrap beside it, not under it.
      [FORM + ' label:has(> ' + BOX + ')', 'position:relative;padding-left:1.5em;font-weight:400'],
      [FORM + ' label:has(> ' + BOX + ') > ' + BOX, 'position:absolute;left:0;top:.15em;width:1em;height:1em;margin:0'],
      [FORM + ' [aria-invalid="true"]', 'border-color:' + RED + ';box-shadow:0 0 0 1px ' + RED],
      [FORM + ' [data-leads-error]:not([hidden])', 'display:block;margin-top:.3rem;color:' + RED + ';font-size:.875em;font-weight:400'],
      [FORM + ' :is(button, input[type=submit])', 'margin-top:1.1rem;padding:.55rem 1.3rem;font:inherit;cursor:pointer'],
      [FORM + ' :is(button, input[type=submit]):disabled', 'cursor:progress;opacity:.65'],
      [FORM + ' [data-leads-captcha]', 'margin-top:1.1rem'],
      [FORM + ' [data-leads-status]', 'margin:.9rem 0 0'],
      [FORM + ' [data-leads-status]:not(:empty)', 'padding-left:.6rem;border-left:3px solid'],
      [FORM + ' [data-leads-status][data-state="error"]', 'color:' + RED + ';font-weight:600'],
      [FORM + ' [data-leads-status][data-state="success"]', 'border-left-color:#1a7f37'],
      [FORM + ' [data-leads-preview]', 'margin:.5rem 0 0;white-space:pre-wrap;overflow-wrap:anywhere;font-weight:400'],
    ]
      .map(function (rule) {
        return ':where(' + rule[0] + '){' + rule[1] + '}';
      })
      .join('\n') +
    '\n}';
  var STYLE_ID = 'leads-form-style';

  var script = /** @type {HTMLScriptElement | null} */ (document.currentScript);
  var scriptOrigin = location.origin;
  try {
    if (script && script.src) scriptOrigin = new URL(script.src, location.href).origin;
  } catch (e) {
    /* keep the page origin */
  }
  var counter = 0;

  /**
   * @param {object} object
   * @param {string} key
   */
  function has(object, key) {
    return Object.prototype.hasOwnProperty.call(object, key);
  }

  /**
   * The form's language: English when it or the page says so, Brazilian Portuguese otherwise (most visitors are).
   * @param {HTMLFormElement} form
   */
  function language(form) {
    var tag = (form.getAttribute('data-leads-lang') || document.documentElement.getAttribute('lang') || '').trim().toLowerCase();
    return tag === 'en' || tag.indexOf('en-') === 0 ? 'en' : 'pt-BR';
  }

  /**
   * @param {string} template
   * @param {Record<string, string | number>} values
   */
  function fill(template, values) {
    // split and join, not replace: a label may hold `$&` and the like.
    for (var name in values) if (has(values, name)) template = template.split('{' + name + '}').join(String(values[name]));
    return template;
  }

  /**
   * Text without what the API refuses in a single-line value: controls (line breaks and tabs become spaces), lone
   * surrogates, bidi controls, noncharacters and Unicode tag characters.
   * @param {string} text
   */
  function plain(text) {
    var out = '';
    for (var i = 0; i < text.length; i++) {
      var c = text.charCodeAt(i);
      var next = text.charCodeAt(i + 1);
      if (c >= 0xd800 && c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        var point = (c - 0xd800) * 0x400 + (next - 0xdc00) + 0x10000;
        if ((point < 0xe0000 || point > 0xe007f) && (point & 0xfffe) !== 0xfffe) out += text.charAt(i) + text.charAt(i + 1);
        i++;
      } else if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) {
        if (c >= 0x09 && c <= 0x0d) out += ' ';
      } else if (
        !(c >= 0xd800 && c <= 0xdfff) &&
        c !== 0x061c &&
        c !== 0x200e &&
        c !== 0x200f &&
        !(c >= 0x202a && c <= 0x202e) &&
        !(c >= 0x2066 && c <= 0x2069) &&
        !(c >= 0xfdd0 && c <= 0xfdef) &&
        c < 0xfffe
      ) {
        out += text.charAt(i);
      }
    }
    return out;
  }

  /**
   * Clean text, trimmed, of at most `max` code points (the API's unit); '' when nothing is left.
   * @param {string} text
   * @param {number} max
   */
  function bounded(text, max) {
    text = plain(text).trim();
    var count = 0;
    for (var i = 0; i < text.length; i++) {
      var c = text.charCodeAt(i);
      // After plain() a low surrogate always ends a pair, counted at its high half.
      if (c >= 0xdc00 && c <= 0xdfff) continue;
      if (++count > max) return text.slice(0, i).trim();
    }
    return text;
  }

  /**
   * An http(s) address reduced to origin and path: no credentials, query or fragment, which can carry personal data.
   * @param {string} address
   */
  function webAddress(address) {
    try {
      var url = new URL(address);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return '';
      var reduced = url.origin + url.pathname;
      return reduced.length <= URL_MAX ? reduced : '';
    } catch (e) {
      return '';
    }
  }

  /** What the page tells about the visit: its address and title, the referrer, the campaign parameters. */
  function pageContext() {
    /** @type {Record<string, string>} */
    var context = {};
    var pageUrl = webAddress(location.href);
    if (pageUrl) context.page_url = pageUrl;
    var title = bounded(document.title || '', TEXT_MAX);
    if (title) context.page_title = title;
    var referrer = document.referrer ? webAddress(document.referrer) : '';
    if (referrer) context.referrer = referrer;
    try {
      var query = new URL(location.href).searchParams;
      for (var i = 0; i < CAMPAIGN_PARAMETERS.length; i++) {
        var value = bounded(query.get(CAMPAIGN_PARAMETERS[i]) || '', TEXT_MAX);
        if (value) context[CAMPAIGN_PARAMETERS[i]] = value;
      }
    } catch (e) {
      /* a browser without URLSearchParams sends no campaign */
    }
    return context;
  }

  /**
   * A label's words: without the controls inside it or our error text, whitespace collapsed.
   * @param {Element} label
   */
  function words(label) {
    var copy = /** @type {Element} */ (label.cloneNode(true));
    var inner = copy.querySelectorAll('input, select, textarea, button, script, style, [hidden], [data-leads-error]');
    for (var i = 0; i < inner.length; i++) {
      var parent = inner[i].parentNode;
      if (parent) parent.removeChild(inner[i]);
    }
    return plain(copy.textContent || '')
      .replace(/\s+/g, ' ')
      .trim();
  }

  /**
   * The text of the first label of a control that has any (`<label for>` or a wrapping label).
   * @param {HTMLInputElement} el
   */
  function labelText(el) {
    var labels = el.labels || [];
    for (var i = 0; i < labels.length; i++) {
      var text = words(labels[i]);
      if (text) return text;
    }
    return '';
  }

  function newKey() {
    if (window.crypto && typeof window.crypto.randomUUID === 'function') return window.crypto.randomUUID();
    var bytes = new Uint8Array(16);
    if (window.crypto && window.crypto.getRandomValues) window.crypto.getRandomValues(bytes);
    else for (var i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
    var hex = '';
    for (var j = 0; j < 16; j++) hex += (bytes[j] + 256).toString(16).slice(1);
    return hex;
  }

  /** @param {string} prefix */
  function uid(prefix) {
    counter += 1;
    return 'leads-' + prefix + '-' + counter + '-' + Math.random().toString(36).slice(2, 7);
  }

  /**
   * The form's control of that name (the first, for a group of radio buttons or checkboxes).
   * @param {HTMLFormElement} form
   * @param {string} name
   * @returns {HTMLInputElement | null}
   */
  function field(form, name) {
    /** @type {any} */
    var el = form.elements.namedItem(name);
    if (el && typeof el.length === 'number' && !el.tagName) el = el[0];
    return el || null;
  }

  /** @type {Record<string, {state: string, waiting: Array<function(boolean): void>}>} */
  var widgetScripts = {};

  /**
   * Loads a captcha widget's script once per page, whichever forms need it, and says whether it loaded.
   * @param {string} url
   * @param {function(boolean): void} done
   */
  function widgetScript(url, done) {
    var entry = widgetScripts[url];
    if (entry && entry.state !== 'loading') return done(entry.state === 'ready');
    if (entry) return void entry.waiting.push(done);
    var loading = (widgetScripts[url] = { state: 'loading', waiting: [done] });
    /** @param {boolean} ok */
    function finish(ok) {
      loading.state = ok ? 'ready' : 'failed';
      var waiting = loading.waiting;
      loading.waiting = [];
      for (var i = 0; i < waiting.length; i++) waiting[i](ok);
    }
    var el = document.createElement('script');
    el.src = url;
    el.async = true;
    el.onload = function () {
      finish(true);
    };
    el.onerror = function () {
      finish(false);
    };
    (document.head || document.documentElement).appendChild(el);
  }

  /**
   * A value fit for a request header: printable ASCII (anything else becomes "?"), at most TRAP_MAX characters; a value
   * that had anything in it stays non-empty.
   * @param {string} text
   */
  function headerText(text) {
    var out = '';
    for (var i = 0; i < text.length && out.length < TRAP_MAX; i++) {
      var c = text.charCodeAt(i);
      out += c >= 0x20 && c < 0x7f ? text.charAt(i) : '?';
    }
    out = out.trim();
    return text && !out ? '?' : out;
  }

  /** @param {HTMLFormElement} form */
  function setup(form) {
    if (form.getAttribute('data-leads-ready') === 'true') return;
    form.setAttribute('data-leads-ready', 'true');
    form.setAttribute('novalidate', '');
    var api = form.getAttribute('data-leads-api') || scriptOrigin;
    // A trial form (the example page's): validated by the sandbox, which stores nothing, and the normalised lead shown.
    var trial = form.getAttribute('data-leads-sandbox') !== null;
    // A loop, not /\/+$/: that pattern is quadratic on a run of slashes, and old browsers lack lookbehind.
    while (api.charAt(api.length - 1) === '/') api = api.slice(0, -1);
    var key = newKey();
    var sending = false;
    var retried = false;
    // The form token to send ({token, at: when it arrived, first: taken when the form was shown}), and the callbacks
    // waiting for the one being fetched.
    /** @type {{token: string, at: number, first: boolean} | null} */
    var formToken = null;
    /** @type {Array<function(): void> | null} */
    var tokenWaiters = null;
    var tokensFetched = 0;
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    var refreshTimer;
    var renewedForProblem = false;
    // The captcha: none, loading, ready (rendered) or broken (the lead goes without it, and is held, never lost).
    var captchaState = 'none';
    var captchaProvider = '';
    /** @type {any} */
    var widgetApi = null;
    /** @type {any} */
    var widgetId = null;
    var captchaToken = '';
    var captchaAt = 0;
    /** @type {Record<string, any> | null} */
    var waitingForCaptcha = null;
    /** @type {Record<string, {el: HTMLInputElement, err: HTMLElement}>} */
    var errorEls = {};

    // Read at every message, so a page that switches language is followed.
    function texts() {
      return TEXTS[language(form)];
    }

    /**
     * A field error in words, from its code and the field's label: never the API's English `detail`.
     * @param {string} code
     * @param {string} name the lead field, or the top-level member, the error points at
     * @param {string} label
     */
    function message(code, name, label) {
      var t = texts();
      var limits = has(LIMITS, name) ? LIMITS[name] : { min: 0, max: 0 };
      var which = code;
      // A minimum of one is a blank value (nothing visible in it), not a short one.
      if (code === 'too_short' && !(limits.min > 1)) which = 'blank';
      if (code === 'too_long' && !limits.max) which = 'longer';
      var precise = 'error.' + which + '.' + name;
      var template = has(t, precise) ? t[precise] : has(t, 'error.' + which) ? t['error.' + which] : t['error.invalid'];
      return fill(template, { label: label, min: limits.min, max: limits.max });
    }

    /**
     * What an error's subject is called: the field's label, or for the consent and context members a name of ours.
     * @param {string[]} path the error's pointer, split at its slashes
     */
    function labelOf(path) {
      var t = texts();
      var name = path[1] || '';
      if (FIELDS.indexOf(name) < 0) {
        var precise = 'member.' + name + '.' + (path[2] || '');
        return has(t, precise) ? t[precise] : has(t, 'member.' + name) ? t['member.' + name] : name;
      }
      var el = field(form, name);
      var text = el ? labelText(el) : '';
      // "Nome:" and "E-mail *" read better without their punctuation inside a sentence.
      while (text && ' :*'.indexOf(text.charAt(text.length - 1)) >= 0) text = text.slice(0, -1);
      return text || name;
    }

    var found = /** @type {HTMLElement | null} */ (form.querySelector('[data-leads-status]'));
    var status = found || document.createElement('p');
    if (!found) {
      status.setAttribute('data-leads-status', '');
      form.appendChild(status);
    }
    status.setAttribute('role', 'status');
    status.setAttribute('aria-live', 'polite');
    status.className = (status.className ? status.className + ' ' : '') + 'leads-status';

    // A field people never see or reach: only bots fill it.
    var trap = document.createElement('div');
    trap.setAttribute('aria-hidden', 'true');
    trap.style.cssText = 'position:absolute;left:-10000px;top:auto;width:1px;height:1px;overflow:hidden;';
    var trapId = uid('hp');
    var trapLabel = document.createElement('label');
    trapLabel.htmlFor = trapId;
    trapLabel.textContent = texts().trap;
    var trapInput = document.createElement('input');
    trapInput.type = 'text';
    trapInput.name = HONEYPOT;
    trapInput.id = trapId;
    trapInput.tabIndex = -1;
    trapInput.autocomplete = 'off';
    trapInput.setAttribute('autocomplete', 'off');
    trap.appendChild(trapLabel);
    trap.appendChild(trapInput);
    form.appendChild(trap);

    /** @returns {NodeListOf<HTMLButtonElement | HTMLInputElement>} */
    function buttons() {
      return form.querySelectorAll('button:not([type=button]):not([type=reset]), input[type=submit]');
    }
    /** @param {boolean} on */
    function busy(on) {
      sending = on;
      var list = buttons();
      for (var i = 0; i < list.length; i++) list[i].disabled = on;
      if (on) form.setAttribute('aria-busy', 'true');
      else form.removeAttribute('aria-busy');
    }
    /**
     * @param {string} text
     * @param {string} kind
     */
    function say(text, kind) {
      status.textContent = text;
      status.setAttribute('data-state', kind);
    }

    /** @param {string} id a field's name, or "consent:" and a category */
    function clearError(id) {
      if (!has(errorEls, id)) return;
      var el = errorEls[id].el;
      var err = errorEls[id].err;
      err.textContent = '';
      err.hidden = true;
      el.removeAttribute('aria-invalid');
      var ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(function (each) {
        return each && each !== err.id;
      });
      if (ids.length) el.setAttribute('aria-describedby', ids.join(' '));
      else el.removeAttribute('aria-describedby');
    }
    function clearErrors() {
      for (var id in errorEls) if (has(errorEls, id)) clearError(id);
    }
    /**
     * @param {string} id a field's name, or "consent:" and a category
     * @param {HTMLInputElement} el
     * @param {string} text
     */
    function showError(id, el, text) {
      var err = has(errorEls, id) ? errorEls[id].err : null;
      if (!err) {
        err = document.createElement('span');
        err.id = uid('error');
        err.className = 'leads-error';
        err.setAttribute('data-leads-error', id);
        // A checkbox's message goes after the words of the label around it, not between the box and its words.
        var around = el.type === 'checkbox' || el.type === 'radio' ? el.parentElement : null;
        if (around && around.tagName === 'LABEL') around.appendChild(err);
        else el.insertAdjacentElement('afterend', err);
        errorEls[id] = { el: el, err: err };
      }
      err.textContent = text;
      err.hidden = false;
      el.setAttribute('aria-invalid', 'true');
      var ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
      if (ids.indexOf(err.id) < 0) ids.push(err.id);
      el.setAttribute('aria-describedby', ids.join(' '));
    }

    /** The consent checkboxes that count: the first of each known category. */
    function consentBoxes() {
      /** @type {NodeListOf<HTMLInputElement>} */
      var all = form.querySelectorAll('input[type=checkbox][data-leads-consent]');
      /** @type {HTMLInputElement[]} */
      var boxes = [];
      /** @type {Record<string, boolean>} */
      var seen = {};
      for (var i = 0; i < all.length; i++) {
        var category = all[i].getAttribute('data-leads-consent') || '';
        if (CONSENT_CATEGORIES.indexOf(category) < 0 || has(seen, category)) continue;
        seen[category] = true;
        boxes.push(all[i]);
      }
      return boxes;
    }

    function body() {
      /** @type {Record<string, any>} */
      var data = {};
      for (var i = 0; i < FIELDS.length; i++) {
        var el = field(form, FIELDS[i]);
        // A consent checkbox is never a lead field, whatever its name.
        if (!el || el.getAttribute('data-leads-consent') !== null) continue;
        var value = typeof el.value === 'string' ? el.value.trim() : '';
        if (value) data[FIELDS[i]] = value;
      }
      var origem = form.getAttribute('data-origem');
      if (!data.origem && origem) data.origem = origem;

      var boxes = consentBoxes();
      var said = [];
      if (boxes.length) data.legal_bases = [];
      for (var j = 0; j < boxes.length; j++) {
        var category = boxes[j].getAttribute('data-leads-consent');
        data.legal_bases.push({ category: category, type: 'consent', status: boxes[j].checked ? 'granted' : 'declined' });
        var text = labelText(boxes[j]);
        if (text && said.indexOf(text) < 0) said.push(text);
      }
      // What the visitor read when answering: the controller has to prove consent (LGPD Art. 8 §2).
      var consentText = bounded(said.join(' '), CONSENT_TEXT_MAX);
      if (consentText) data.consent_text = consentText;

      var context = pageContext();
      for (var member in context) {
        if (has(context, member)) {
          data.context = context;
          break;
        }
      }
      return data;
    }

    /**
     * Takes a form token from the service; `done` runs when it is here, or could not be had (the lead then goes without).
     * @param {function(): void} [done]
     */
    function fetchToken(done) {
      if (tokenWaiters) {
        if (done) tokenWaiters.push(done);
        return;
      }
      tokenWaiters = done ? [done] : [];
      clearTimeout(refreshTimer);
      fetch(api + '/forms/token', { mode: 'cors', credentials: 'omit', cache: 'no-store', headers: { Accept: 'application/json' } })
        .then(function (res) {
          return res.ok ? res.json() : null;
        })
        .then(null, function () {
          return null;
        })
        .then(function (answer) {
          if (answer && typeof answer.token === 'string') {
            formToken = { token: answer.token, at: Date.now(), first: tokensFetched === 0 };
            tokensFetched += 1;
            refreshTimer = setTimeout(fetchToken, TOKEN_REFRESH_MS);
            if (answer.captcha && captchaState === 'none') showCaptcha(answer.captcha);
          }
          var waiting = tokenWaiters || [];
          tokenWaiters = null;
          for (var i = 0; i < waiting.length; i++) waiting[i]();
        });
    }

    /**
     * Runs `then` with a form token to send: the one at hand while it is fresh, else a new one, held back until a person
     * could have sent it.
     * @param {function(): void} then
     */
    function withToken(then) {
      if (trial) return then();
      if (formToken && Date.now() - formToken.at < TOKEN_REFRESH_MS) {
        var young = formToken.first ? 0 : TOKEN_MIN_AGE_MS - (Date.now() - formToken.at);
        return young > 0 ? void setTimeout(then, young) : then();
      }
      formToken = null;
      fetchToken(function () {
        if (formToken) formToken.first = false;
        withToken(then);
      });
    }

    /** The token was sent and the service answered: it is spent, so the next fill gets a new one. */
    function tokenSpent() {
      if (trial) return;
      formToken = null;
      fetchToken();
      resetCaptcha();
    }

    /**
     * Renders the widget the service names (Turnstile or hCaptcha) in the form's `[data-leads-captcha]` element, or in
     * one put before the submit button; its token goes with the lead.
     * @param {{provider?: unknown, site_key?: unknown, script_url?: unknown}} captcha
     */
    function showCaptcha(captcha) {
      var provider = captcha.provider;
      if ((provider !== 'turnstile' && provider !== 'hcaptcha') || typeof captcha.site_key !== 'string' || typeof captcha.script_url !== 'string') return;
      captchaState = 'loading';
      captchaProvider = provider;
      var box = /** @type {HTMLElement | null} */ (form.querySelector('[data-leads-captcha]'));
      if (!box) {
        box = document.createElement('div');
        box.setAttribute('data-leads-captcha', '');
        var button = buttons()[0];
        if (button && button.parentNode) button.parentNode.insertBefore(box, button);
        else form.insertBefore(box, status);
      }
      var sitekey = captcha.site_key;
      var where = box;
      widgetScript(captcha.script_url, function (ok) {
        var widgets = ok ? /** @type {any} */ (window)[captchaProvider] : null;
        if (!widgets || typeof widgets.render !== 'function') return captchaFailed();
        try {
          widgetId = widgets.render(where, {
            sitekey: sitekey,
            callback: function (/** @type {unknown} */ token) {
              if (typeof token !== 'string' || !token) return;
              captchaToken = token;
              captchaAt = Date.now();
              captchaState = 'ready';
              sendWaiting();
            },
            'expired-callback': function () {
              resetCaptcha();
            },
            'error-callback': function () {
              // The widget cannot give a token now: a lead waiting for it goes without (held for a person, not lost).
              captchaToken = '';
              captchaFailed();
            },
          });
          widgetApi = widgets;
          captchaState = 'ready';
        } catch (e) {
          captchaFailed();
        }
      });
    }

    function captchaFailed() {
      captchaState = 'broken';
      sendWaiting();
    }

    /** A widget token is good once and for minutes: after use or expiry the widget is reset for a new one. */
    function resetCaptcha() {
      captchaToken = '';
      if (!widgetApi) return;
      try {
        widgetApi.reset(widgetId);
      } catch (e) {
        /* the next token comes through the callback all the same, or never: then the lead goes without */
      }
    }

    /**
     * Sends `data` with the widget's token when a captcha is shown: at once when it has one, else when the person has
     * done the verification.
     * @param {Record<string, any>} data
     */
    function withCaptcha(data) {
      if (!trial && captchaToken && Date.now() - captchaAt > CAPTCHA_LIFETIME_MS[captchaProvider]) resetCaptcha();
      if (trial || captchaToken || captchaState === 'none' || captchaState === 'broken') return send(data);
      waitingForCaptcha = data;
      busy(false);
      say(texts().captcha, 'wait');
    }

    function sendWaiting() {
      var data = waitingForCaptcha;
      waitingForCaptcha = null;
      if (data && !sending) send(data);
    }

    /** @param {Record<string, any>} data */
    function submit(data) {
      busy(true);
      say(texts().sending, 'sending');
      withToken(function () {
        withCaptcha(data);
      });
    }

    /** @param {any} result the JSON body of the answer */
    function succeed(result) {
      clearErrors();
      form.reset();
      key = newKey();
      retried = false;
      renewedForProblem = false;
      tokenSpent();
      busy(false);
      say(form.getAttribute('data-success') || texts().success, 'success');
      if (trial && result && result.lead) {
        var preview = document.createElement('pre');
        preview.setAttribute('data-leads-preview', '');
        preview.textContent = JSON.stringify(result.lead, null, 2);
        status.appendChild(preview);
      }
    }

    /**
     * @param {number} seconds
     * @param {Record<string, any>} data
     */
    function waitThenRetry(seconds, data) {
      var t = texts();
      var wait = { seconds: seconds + ' ' + (seconds === 1 ? t.second : t.seconds) };
      if (!retried && seconds <= MAX_AUTO_RETRY_SECONDS) {
        retried = true;
        say(fill(t.wait_retry, wait), 'wait');
        setTimeout(function () {
          send(data);
        }, seconds * 1000);
      } else {
        say(fill(t.wait_again, wait), 'wait');
        setTimeout(function () {
          busy(false);
        }, seconds * 1000);
      }
    }

    /**
     * @param {Response} res
     * @param {any} problem the JSON body (a problem, or the sandbox's result), or null
     * @param {Record<string, any>} data
     */
    function handle(res, problem, data) {
      if (res.status === 200 || res.status === 201) return succeed(problem);
      if (res.status === 429) {
        var seconds = parseInt(res.headers.get('Retry-After') || '', 10);
        if (!(seconds >= 0)) seconds = 30;
        return waitThenRetry(Math.max(1, seconds), data);
      }
      // A refused request (429) spent nothing; any other answer may have spent the token and the widget's token.
      tokenSpent();
      var code = problem && typeof problem.code === 'string' ? problem.code : '';
      if (!trial && !renewedForProblem && /form_token|captcha/.test(code)) {
        // The service did not take the form's token or captcha: once, a new one of each and the same lead again.
        renewedForProblem = true;
        return submit(data);
      }
      busy(false);
      retried = false;
      var t = texts();
      var list = problem && Array.isArray(problem.errors) ? problem.errors : [];
      // Errors of the consent and context members have no field to stand beside: they go to the status line.
      var other = [];
      var first = null;
      for (var i = 0; i < list.length; i++) {
        var item = list[i] || {};
        var path = typeof item.pointer === 'string' ? item.pointer.split('/') : [];
        var name = path[1] || '';
        var text = message(typeof item.code === 'string' ? item.code : '', name, labelOf(path));
        var el = FIELDS.indexOf(name) >= 0 ? field(form, name) : null;
        if (el) {
          showError(name, el, text);
          if (!first) first = el;
        } else other.push(text);
      }
      if (first) {
        say(t.fix + (other.length ? ' ' + other.join(' ') : ''), 'error');
        if (typeof first.focus === 'function') first.focus();
        return;
      }
      if (other.length) return say(t.not_sent + ' ' + other.join(' '), 'error');
      if (res.status === 409) return say(t.in_progress, 'error');
      if (res.status === 413) return say(t.too_large, 'error');
      if (res.status >= 500) return say(t.unavailable, 'error');
      say(fill(t.failed, { status: res.status }), 'error');
    }

    /** @param {Record<string, any>} data */
    function send(data) {
      busy(true);
      say(texts().sending, 'sending');
      /** @type {Record<string, string>} */
      var headers = { 'Content-Type': 'application/json', Accept: 'application/json, application/problem+json' };
      if (!trial) headers['Idempotency-Key'] = key;
      // The screening signals (the sandbox ignores them): empty Form-Trap from a person, whatever a bot typed otherwise.
      headers['Form-Trap'] = headerText(trapInput.value);
      if (!trial && formToken) headers['Form-Token'] = formToken.token;
      if (!trial && captchaToken) headers['Captcha-Token'] = captchaToken;
      fetch(api + (trial ? '/api/v1/sandbox' : '/api/v1/lead'), {
        method: 'POST',
        mode: 'cors',
        credentials: 'omit',
        headers: headers,
        body: JSON.stringify(data),
      }).then(
        function (res) {
          return res
            .json()
            .then(
              function (json) {
                return json;
              },
              function () {
                return null;
              },
            )
            .then(function (json) {
              handle(res, json, data);
            });
        },
        function () {
          busy(false);
          say(texts().network, 'error');
        },
      );
    }

    form.addEventListener('input', function (event) {
      if (sending) return;
      var target = /** @type {HTMLInputElement | null} */ (event.target);
      if (target && target.name === HONEYPOT) return;
      key = newKey();
      retried = false;
      renewedForProblem = false;
      waitingForCaptcha = null;
      if (!target) return;
      var category = target.getAttribute('data-leads-consent');
      if (category !== null) clearError('consent:' + category);
      else if (target.name) clearError(target.name);
    });

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (sending) return;
      clearErrors();
      // The form is novalidate (the script shows its own messages), so a required consent box is checked here.
      var boxes = consentBoxes();
      for (var i = 0; i < boxes.length; i++) {
        if (boxes[i].required && !boxes[i].checked) {
          showError('consent:' + boxes[i].getAttribute('data-leads-consent'), boxes[i], texts().consent_required);
          say(texts().fix, 'error');
          boxes[i].focus();
          return;
        }
      }
      submit(body());
    });

    if (!trial) fetchToken();
  }

  /**
   * The default style, once per document however often the script is included: a constructed style sheet, which a
   * Content-Security-Policy without 'unsafe-inline' in style-src does not block, else (older browsers) a <style> first
   * in <head>, before the page's own.
   */
  function addStyle() {
    var sheets = document.adoptedStyleSheets;
    for (var i = 0; sheets && i < sheets.length; i++) if (/** @type {any} */ (sheets[i])[STYLE_ID]) return;
    if (document.getElementById(STYLE_ID)) return;
    if (sheets) {
      try {
        var sheet = new window.CSSStyleSheet();
        sheet.replaceSync(STYLE);
        /** @type {any} */ (sheet)[STYLE_ID] = true;
        document.adoptedStyleSheets = [sheet].concat(sheets);
        return;
      } catch (e) {
        /* no constructable style sheets: a <style> element */
      }
    }
    var style = document.createElement('style');
    style.id = STYLE_ID;
    style.textContent = STYLE;
    var head = document.head || document.documentElement;
    head.insertBefore(style, head.firstChild);
  }

  function init() {
    /** @type {NodeListOf<HTMLFormElement>} */
    var forms = document.querySelectorAll('form[data-leads]');
    if (document.querySelector(FORM)) addStyle();
    for (var i = 0; i < forms.length; i++) setup(forms[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
