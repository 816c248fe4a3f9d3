import { ArgumentMetadata, ValidationPipe } from '@nestjs/common';
import * as classTransformer from 'class-transformer';
import * as classValidator from 'class-validator';
import type { ValidationError } from 'class-validator';
import { invalidQuery, validationFailed } from '../problem/app-error.js';
import { FIELD_ERROR_CODES, FieldError, FieldErrorCode, QUERY_ERROR_CODES, QueryError, QueryErrorCode } from '../problem/error-catalog.js';
import { escapePointer } from './strict-json.js';

/** class-validator's constraint names and the catalog's field codes; a constraint not listed is `invalid_format`. */
const CONSTRAINT_CODES: Record<string, FieldErrorCode> = {
  whitelistValidation: 'unknown_field',
  isDefined: 'required',
  isString: 'invalid_type',
  isNumber: 'invalid_type',
  isInt: 'invalid_type',
  isBoolean: 'invalid_type',
  isArray: 'invalid_type',
  isObject: 'invalid_type',
  nestedValidation: 'invalid_type',
  unknownValue: 'invalid_type',
  isNotEmpty: 'too_short',
  minLength: 'too_short',
  arrayMinSize: 'too_short',
  arrayNotEmpty: 'too_short',
  maxLength: 'too_long',
  arrayMaxSize: 'too_many_items',
};

/** class-validator's constraint names and the catalog's query codes; a constraint not listed is `invalid_format`. */
const QUERY_CONSTRAINT_CODES: Record<string, QueryErrorCode> = {
  whitelistValidation: 'unknown_parameter',
  isDefined: 'required',
  isNotEmpty: 'too_short',
  minLength: 'too_short',
  maxLength: 'too_long',
  min: 'out_of_range',
  max: 'out_of_range',
};

/** What class-validator found; the pipe makes it a body or a query problem once it knows which the DTO was. */
class InvalidInput extends Error {
  constructor(readonly errors: ValidationError[]) {
    super('invalid input');
  }
}

/**
 * The global pipe for DTOs (`@Body() dto: SomeDto`, `@Query() query: SomeQuery`): class-transformer builds the class,
 * class-validator checks it, properties without a rule are refused. A body's failures become the same 422
 * validation_failed problem, with JSON Pointers, as every other body check; a query's, 400 invalid_query naming each
 * parameter (a query is not content the server could not process, but a malformed request target). Parameters that
 * are not classes pass through untouched.
 */
class ProblemValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const query = metadata.type === 'query';
    // Read first: the base pipe deletes __proto__ and constructor members from the value before anything sees them.
    const names = isObject(value) ? Object.keys(value) : [];
    let dto: unknown;
    try {
      dto = await super.transform(value, metadata);
    } catch (error) {
      if (!(error instanceof InvalidInput)) throw error;
      throw query ? invalidQuery(queryErrors(error.errors)) : validationFailed(fieldErrors(error.errors));
    }
    // Names the whitelist never saw: those the base pipe deleted, and those class-transformer skips because they are
    // the class's own machinery (toString, hasOwnProperty…). Unknown, like any other.
    const dropped = dto === value || !isObject(dto) ? [] : names.filter((name) => !Object.prototype.hasOwnProperty.call(dto, name));
    if (dropped.length) throw query ? invalidQuery(dropped.map(unknownParameter)) : validationFailed(dropped.map(unknownField));
    return dto;
  }
}

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null && !Array.isArray(value);

const unknownField = (name: string): FieldError => ({
  pointer: `/${escapePointer(name)}`,
  code: 'unknown_field',
  detail: `${name} is not a field of this request.`,
});
const unknownParameter = (parameter: string): QueryError => ({
  parameter,
  code: 'unknown_parameter',
  detail: `${parameter} is not a parameter of this operation.`,
});

export function createValidationPipe(): ValidationPipe {
  return new ProblemValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    // The packages themselves: Nest would otherwise load them with import() on first use.
    validatorPackage: classValidator,
    transformerPackage: classTransformer,
    exceptionFactory: (errors) => new InvalidInput(errors),
  });
}

/**
 * class-validator's findings on a query as one QueryError per parameter, unknown ones last: a parameter given more
 * than once (Express reads it as an array) is `repeated_parameter`, whatever its rules say of an array; otherwise the
 * first rule written that failed, or the code it names with `context: { code }`.
 */
export function queryErrors(errors: ValidationError[]): QueryError[] {
  const found = errors.flatMap((node): QueryError[] => {
    const parameter = String(node.property);
    const failed = Object.entries(node.constraints ?? {}).reverse();
    if (!failed.length) return [];
    if (node.constraints?.whitelistValidation) return [unknownParameter(parameter)];
    if (Array.isArray(node.value)) return [{ parameter, code: 'repeated_parameter', detail: `${parameter} is given more than once; give it once.` }];
    if (node.value === undefined) return [{ parameter, code: 'required', detail: `${parameter} is required.` }];
    const [constraint, message] = failed[0];
    const chosen = (node.contexts?.[constraint] as { code?: unknown } | undefined)?.code;
    const code = QUERY_ERROR_CODES.includes(chosen as QueryErrorCode) ? (chosen as QueryErrorCode) : (QUERY_CONSTRAINT_CODES[constraint] ?? 'invalid_format');
    return [{ parameter, code, detail: message }];
  });
  return [...found.filter((e) => e.code !== 'unknown_parameter'), ...found.filter((e) => e.code === 'unknown_parameter')];
}

/**
 * class-validator's tree as one FieldError per failed property (as the hand-written validators report), with the JSON
 * Pointer of the property (array items by index); unknown fields after the others, as the lead validator lists them.
 * Of a property's failed rules, a type rule wins (a number is not "too long"), else the one written first; a rule
 * picks its own code with `context: { code: 'invalid_characters' }` in its validation options.
 */
export function fieldErrors(errors: ValidationError[]): FieldError[] {
  const found: FieldError[] = [];
  const walk = (nodes: ValidationError[], parent: string) => {
    for (const node of nodes) {
      const pointer = `${parent}/${escapePointer(String(node.property))}`;
      // Decorators run bottom-up, so class-validator lists a property's rules last-written first.
      const failed = Object.entries(node.constraints ?? {}).reverse();
      const [constraint, message] = failed.find(([name]) => CONSTRAINT_CODES[name] === 'invalid_type') ?? failed[0] ?? [];
      if (constraint !== undefined) found.push(fieldError(pointer, node, constraint, message));
      if (node.children?.length) walk(node.children, pointer);
    }
  };
  walk(errors, '');
  return [...found.filter((e) => e.code !== 'unknown_field'), ...found.filter((e) => e.code === 'unknown_field')];
}

function fieldError(pointer: string, node: ValidationError, constraint: string, message: string): FieldError {
  if (constraint === 'whitelistValidation') return { ...unknownField(String(node.property)), pointer };
  // A rule that fails on a missing value: the field is absent, whatever the rule checks.
  if (node.value === undefined) return { pointer, code: 'required', detail: `${node.property} is required.` };
  const chosen = (node.contexts?.[constraint] as { code?: unknown } | undefined)?.code;
  if (FIELD_ERROR_CODES.includes(chosen as FieldErrorCode)) return { pointer, code: chosen as FieldErrorCode, detail: message };
  return { pointer, code: CONSTRAINT_CODES[constraint] ?? 'invalid_format', detail: message };
}
