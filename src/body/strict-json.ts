import { FieldError, MAX_FIELD_ERRORS } from '../problem/error-catalog.js';

export const MAX_JSON_DEPTH = 32;
/** Keys that pollute prototypes when a parsed body is merged anywhere; never accepted, at any depth. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export type StrictJsonResult = { ok: true; value: unknown } | { ok: false; syntax: true } | { ok: false; syntax: false; errors: FieldError[] };

/**
 * JSON.parse plus what it silently allows: duplicate keys (I-JSON, RFC 7493 §2.3), prototype keys and unbounded nesting.
 * Each finding carries the JSON Pointer of the offending key.
 */
export function parseStrictJson(text: string): StrictJsonResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError) return { ok: false, syntax: true };
    return { ok: false, syntax: false, errors: [nestingError('')] };
  }
  const errors = scanStructure(text);
  return errors.length ? { ok: false, syntax: false, errors } : { ok: true, value };
}

interface Frame {
  /** Where the container is: its parent's frame and the key or index it holds it at (the root has neither). */
  parent?: Frame;
  at?: string;
  keys?: Set<string>; // objects only
  key?: string; // the object's current key
  index: number; // arrays only
}

const BACKSLASH = 0x5c;

/**
 * Walks already-valid JSON text once; strings are skipped whole, so brackets and commas inside them do not count.
 * Pointers are built only for findings: this runs on every JSON body.
 */
function scanStructure(text: string): FieldError[] {
  const errors: FieldError[] = [];
  const stack: Frame[] = [];
  for (let i = 0; i < text.length && errors.length < MAX_FIELD_ERRORS; i++) {
    const c = text[i];
    if (c === '"') {
      const end = closingQuote(text, i + 1);
      const top = stack[stack.length - 1];
      if (top?.keys && nextNonSpace(text, end + 1) === ':') {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
        if (FORBIDDEN_KEYS.has(key)) errors.push({ pointer: keyPointer(top, key), code: 'forbidden_key', detail: `The key "${key}" is not allowed.` });
        else if (top.keys.has(key)) errors.push({ pointer: keyPointer(top, key), code: 'duplicate_key', detail: `The key "${key}" appears more than once.` });
        top.keys.add(key);
        top.key = key;
      }
      i = end;
    } else if (c === '{' || c === '[') {
      const parent = stack[stack.length - 1];
      // Where it is, kept unescaped: a pointer is built only for a finding, not escaped for every container.
      const at = !parent ? undefined : parent.keys ? (parent.key ?? '') : String(parent.index);
      if (stack.length >= MAX_JSON_DEPTH) {
        errors.push(nestingError(parent ? `${pointerOf(parent)}/${parent.keys ? escapePointer(at!) : at}` : ''));
        break;
      }
      stack.push(c === '{' ? { parent, at, keys: new Set(), index: 0 } : { parent, at, index: 0 });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',') {
      const top = stack[stack.length - 1];
      if (top && !top.keys) top.index++;
    }
  }
  return errors;
}

/** The index of the quote that closes a string whose text starts at `from` (the text is valid JSON, so there is one). */
function closingQuote(text: string, from: number): number {
  let end = text.indexOf('"', from);
  for (;;) {
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

function keyPointer(frame: Frame, key: string): string {
  return `${pointerOf(frame)}/${escapePointer(key)}`;
}

/** The JSON Pointer of a container. */
function pointerOf(frame: Frame): string {
  if (!frame.parent) return '';
  return `${pointerOf(frame.parent)}/${frame.parent.keys ? escapePointer(frame.at!) : frame.at}`;
}

function nextNonSpace(text: string, from: number): string | undefined {
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') return c;
  }
  return undefined;
}

export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function nestingError(pointer: string): FieldError {
  return { pointer, code: 'nesting_too_deep', detail: `JSON nested deeper than ${MAX_JSON_DEPTH} levels is not accepted.` };
}
