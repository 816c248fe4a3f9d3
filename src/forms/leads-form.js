// @ts-check
/* The embeddable form script served as it is at /forms/leads.js: plain ES5-compatible JavaScript for customer pages, no
 * dependencies, no cookies, no storage. Every `<form data-leads>` on the page is posted as JSON to `{api}/api/v1/lead`, where
 * {api} is the origin the script was loaded from unless the form's `data-leads-api` names another. Type-checked by
 * tsconfig.form.json and linted with the rest of src/. */
(function () {
  'use strict';
  // The service serves this file with the lead fields of src/leads/lead-rules.ts written in here (src/forms/forms.script.ts).
  var FIELDS = /** @type {string[]} */ ([]);
  var HONEYPOT = 'website';
  var MAX_AUTO_RETRY_SECONDS = 120;
  var script = /** @type {HTMLScriptElement | null} */ (document.currentScript);
  var scriptOrigin = location.origin;
  try {
    if (script && script.src) scriptOrigin = new URL(script.src, location.href).origin;
  } catch (e) {
    /* keep the page origin */
  }
  var counter = 0;

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
    /** @type {Record<string, HTMLElement>} */
    var errorEls = {};

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
    trapLabel.textContent = 'Leave this field empty';
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

    /** @param {string} name */
    function clearError(name) {
      var el = field(form, name);
      var err = errorEls[name];
      if (!el || !err) return;
      err.textContent = '';
      err.hidden = true;
      el.removeAttribute('aria-invalid');
      var ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(function (id) {
        return id && id !== err.id;
      });
      if (ids.length) el.setAttribute('aria-describedby', ids.join(' '));
      else el.removeAttribute('aria-describedby');
    }
    function clearErrors() {
      for (var name in errorEls) if (Object.prototype.hasOwnProperty.call(errorEls, name)) clearError(name);
    }
    /**
     * @param {string} name
     * @param {string} text
     */
    function showError(name, text) {
      var el = field(form, name);
      if (!el || name === HONEYPOT) return false;
      var err = errorEls[name];
      if (!err) {
        err = document.createElement('span');
        err.id = uid('error');
        err.className = 'leads-error';
        err.setAttribute('data-leads-error', name);
        el.insertAdjacentElement('afterend', err);
        errorEls[name] = err;
      }
      err.textContent = text;
      err.hidden = false;
      el.setAttribute('aria-invalid', 'true');
      var ids = (el.getAttribute('aria-describedby') || '').split(/\s+/).filter(Boolean);
      if (ids.indexOf(err.id) < 0) ids.push(err.id);
      el.setAttribute('aria-describedby', ids.join(' '));
      return true;
    }

    function body() {
      /** @type {Record<string, string>} */
      var data = {};
      for (var i = 0; i < FIELDS.length; i++) {
        var el = field(form, FIELDS[i]);
        var value = el && typeof el.value === 'string' ? el.value.trim() : '';
        if (value) data[FIELDS[i]] = value;
      }
      var origem = form.getAttribute('data-origem');
      if (!data.origem && origem) data.origem = origem;
      return data;
    }

    /** @param {any} result the JSON body of the answer */
    function succeed(result) {
      clearErrors();
      form.reset();
      key = newKey();
      retried = false;
      busy(false);
      say(form.getAttribute('data-success') || 'Thank you! We received your message and will be in touch soon.', 'success');
      if (trial && result && result.lead) {
        var preview = document.createElement('pre');
        preview.setAttribute('data-leads-preview', '');
        preview.textContent = JSON.stringify(result.lead, null, 2);
        status.appendChild(preview);
      }
    }

    /**
     * @param {number} seconds
     * @param {Record<string, string>} data
     */
    function waitThenRetry(seconds, data) {
      if (!retried && seconds <= MAX_AUTO_RETRY_SECONDS) {
        retried = true;
        say('Too many submissions right now. Please wait ' + seconds + ' seconds; we will send it again automatically.', 'wait');
        setTimeout(function () {
          send(data);
        }, seconds * 1000);
      } else {
        say('Too many submissions right now. Please wait ' + seconds + ' seconds and send again.', 'wait');
        setTimeout(function () {
          busy(false);
        }, seconds * 1000);
      }
    }

    /**
     * @param {Response} res
     * @param {any} problem the JSON body (a problem, or the sandbox's result), or null
     * @param {Record<string, string>} data
     */
    function handle(res, problem, data) {
      if (res.status === 200 || res.status === 201) return succeed(problem);
      if (res.status === 429) {
        var seconds = parseInt(res.headers.get('Retry-After') || '', 10);
        if (!(seconds >= 0)) seconds = 30;
        return waitThenRetry(Math.max(1, seconds), data);
      }
      busy(false);
      retried = false;
      var list = problem && Array.isArray(problem.errors) ? problem.errors : [];
      var other = [];
      var first = null;
      for (var i = 0; i < list.length; i++) {
        var item = list[i] || {};
        var name = typeof item.pointer === 'string' ? item.pointer.replace(/^\//, '').split('/')[0] : '';
        var text = item.detail || item.code || 'Invalid value.';
        if (name && showError(name, text)) {
          if (!first) first = field(form, name);
        } else other.push(text);
      }
      if (first) {
        say('Please correct the highlighted fields.' + (other.length ? ' ' + other.join(' ') : ''), 'error');
        if (typeof first.focus === 'function') first.focus();
        return;
      }
      var parts = [];
      if (problem && problem.detail) parts.push(problem.detail);
      if (other.length) parts.push(other.join(' '));
      if (problem && problem.hint) parts.push(problem.hint);
      if (!parts.length) parts.push('The form could not be sent (HTTP ' + res.status + '). Please try again.');
      say(parts.join(' '), 'error');
    }

    /** @param {Record<string, string>} data */
    function send(data) {
      busy(true);
      say('Sending…', 'sending');
      /** @type {Record<string, string>} */
      var headers = { 'Content-Type': 'application/json', Accept: 'application/json, application/problem+json' };
      if (!trial) headers['Idempotency-Key'] = key;
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
          say('The form could not be sent: check your connection and try again.', 'error');
        },
      );
    }

    form.addEventListener('input', function (event) {
      if (sending) return;
      var target = /** @type {HTMLInputElement | null} */ (event.target);
      if (target && target.name === HONEYPOT) return;
      key = newKey();
      retried = false;
      if (target && target.name) clearError(target.name);
    });

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (sending) return;
      if (trapInput.value) {
        // A bot: pretend it worked and send nothing.
        form.reset();
        say(form.getAttribute('data-success') || 'Thank you! We received your message and will be in touch soon.', 'success');
        return;
      }
      clearErrors();
      send(body());
    });
  }

  function init() {
    /** @type {NodeListOf<HTMLFormElement>} */
    var forms = document.querySelectorAll('form[data-leads]');
    for (var i = 0; i < forms.length; i++) setup(forms[i]);
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
