import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { LEAD_FIELD_NAMES } from './lead-rules.js';

/**
 * Runs a form script as a customer's page would: one `<form data-leads>` holding a control for each of `values`,
 * submitted once, after the form token it asks for when the form is shown has come. Returns the JSON body it posts. Only
 * the few DOM members the script touches are stood in for.
 */
async function postedBy(script: string, values: Record<string, string>): Promise<Record<string, unknown>> {
  const element = (): any => ({
    attributes: {} as Record<string, string>,
    style: {},
    value: '',
    setAttribute(name: string, value: string) {
      this.attributes[name] = value;
    },
    getAttribute(name: string) {
      return this.attributes[name] ?? null;
    },
    removeAttribute(name: string) {
      delete this.attributes[name];
    },
    appendChild() {},
  });
  const controls: Record<string, unknown> = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, { ...element(), name, value }]));
  const listeners: Record<string, (event: unknown) => void> = {};
  const form = {
    ...element(),
    elements: { namedItem: (name: string) => controls[name] ?? null },
    querySelector: () => null,
    querySelectorAll: () => [],
    addEventListener: (type: string, listener: (event: unknown) => void) => (listeners[type] = listener),
  };
  const bodies: string[] = [];
  runInNewContext(script, {
    document: {
      currentScript: null,
      readyState: 'complete',
      querySelectorAll: () => [form],
      querySelector: () => null,
      createElement: element,
      documentElement: element(),
      title: '',
      referrer: '',
    },
    window: { crypto: { randomUUID: () => 'key' } },
    location: { origin: 'https://customer.example', href: 'https://customer.example/contact?utm_source=news' },
    fetch: (url: string, init: { body: string }) => {
      if (url.endsWith('/forms/token')) return Promise.resolve({ ok: true, json: () => Promise.resolve({ token: 'form-token', captcha: null }) });
      bodies.push(init.body);
      return new Promise(() => undefined);
    },
    URL,
    // Unref'd: the script's two-hourly token refresh must not keep the test process alive.
    setTimeout: (callback: () => void, ms: number) => setTimeout(callback, ms).unref(),
    clearTimeout,
  });
  await new Promise((resolve) => setImmediate(resolve));
  listeners.submit({ preventDefault: () => undefined });
  expect(bodies).toHaveLength(1);
  return JSON.parse(bodies[0]) as Record<string, unknown>;
}

const VALUES = { nome: 'Ana', email: 'ana@example.com', telefone: '+55 11 98765-4321', empresa: 'ACME', mensagem: 'Oi', origem: 'site', cargo: 'CEO' };

describe('the lead field list of lead-rules.ts', () => {
  it('is the list of fields the served form script sends: each field of the form, nothing else', async () => {
    const { LEADS_FORM_JS } = await import('../forms/forms.script.js');
    const { context, ...fields } = await postedBy(LEADS_FORM_JS, VALUES);
    expect(Object.keys(fields)).toEqual(LEAD_FIELD_NAMES);
    expect(fields).toEqual(Object.fromEntries(LEAD_FIELD_NAMES.map((name) => [name, VALUES[name]])));
    // Beside the fields, where the visit came from (never a lead field).
    expect(context).toEqual({ page_url: 'https://customer.example/contact', utm_source: 'news' });
  });

  it('feeds the form script and the CLI: another list changes what both accept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lead-fields-'));
    const csv = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    try {
      await jest.isolateModulesAsync(async () => {
        jest.doMock('./lead-rules.js', () => ({
          ...jest.requireActual('./lead-rules.js'),
          LEAD_FIELD_NAMES: ['nome', 'email', 'cargo'],
          LEAD_FIELDS: { ...jest.requireActual('./lead-rules.js').LEAD_FIELDS, cargo: { required: false, min: 1, max: 80 } },
          REQUIRED_LEAD_FIELDS: ['email'],
        }));
        const { LEADS_FORM_JS } = jest.requireActual('../forms/forms.script.js');
        expect(await postedBy(LEADS_FORM_JS, VALUES)).toMatchObject({ nome: 'Ana', email: 'ana@example.com', cargo: 'CEO' });
        expect(Object.keys(await postedBy(LEADS_FORM_JS, VALUES))).toEqual(['nome', 'email', 'cargo', 'context']);

        const { openRows } = jest.requireActual('../../cli/import.js');
        const rowsOf = async (source: { rows: AsyncIterable<unknown> }) => {
          const rows = [];
          for await (const row of source.rows) rows.push(row);
          return rows;
        };
        expect(await rowsOf(openRows(csv('a.csv', 'email,cargo\nana@example.com,CEO\n')))).toEqual([
          { row: 1, line: 2, fields: { email: 'ana@example.com', cargo: 'CEO' } },
        ]);
        // telefone is no field of this list: read as an export's column, and not sent.
        const withTelefone = openRows(csv('b.csv', 'email,telefone\nana@example.com,11987654321\n'));
        expect(await rowsOf(withTelefone)).toEqual([{ row: 1, line: 2, fields: { email: 'ana@example.com' } }]);
        expect([...withTelefone.ignored]).toEqual(['telefone']);
        await expect(rowsOf(openRows(csv('d.csv', 'email,fone\nana@example.com,11987654321\n')))).rejects.toThrow(
          'CSV: unknown column(s) fone; the header may name nome, email, cargo, page_url',
        );
        await expect(rowsOf(openRows(csv('c.csv', 'nome,cargo\nAna,CEO\n')))).rejects.toThrow('CSV: the header must include email');

        const { parseArgs } = jest.requireActual('../../cli/args.js');
        expect(parseArgs(['submit', '--cargo', 'CEO']).options).toEqual({ cargo: 'CEO' });
        expect(() => parseArgs(['submit', '--telefone', '11987654321'])).toThrow('unknown option --telefone');
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
