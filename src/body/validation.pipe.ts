import { ValidationPipe } from '@nestjs/common';
import * as classTransformer from 'class-transformer';
import * as classValidator from 'class-validator';
import type { ValidationError } from 'class-validator';
import { validationFailed } from '../problem/app-error.js';
import { FIELD_ERROR_CODES, FieldError, FieldErrorCode } from '../problem/error-catalog.js';
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

/**
 * The global pipe for DTOs (`@Body() dto: SomeDto`, `@Query() query: SomeQuery`): class-transformer builds the class,
 * class-validator checks it, properties without a rule are refused, and the failures become the same 422
 * validation_failed problem as every other body check. Parameters that are not classes pass through untouched.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    // The packages themselves: Nest would otherwise load them with import() on first use.
    validatorPackage: classValidator,
    transformerPackage: classTransformer,
    exceptionFactory: (errors) => validationFailed(fieldErrors(errors)),
  });
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
  if (constraint === 'whitelistValidation') return { pointer, code: 'unknown_field', detail: `${node.property} is not a field of this request.` };
  // A rule that fails on a missing value: the field is absent, whatever the rule checks.
  if (node.value === undefined) return { pointer, code: 'required', detail: `${node.property} is required.` };
  const chosen = (node.contexts?.[constraint] as { code?: unknown } | undefined)?.code;
  if (FIELD_ERROR_CODES.includes(chosen as FieldErrorCode)) return { pointer, code: chosen as FieldErrorCode, detail: message };
  return { pointer, code: CONSTRAINT_CODES[constraint] ?? 'invalid_format', detail: message };
}
