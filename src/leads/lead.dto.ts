import { IsString, registerDecorator, ValidateIf, ValidationOptions } from 'class-validator';
import { codePointLength, FORBIDDEN_CHARACTER, FORBIDDEN_MULTILINE_CHARACTER, LEAD_FIELDS, LeadFieldRule } from './lead-rules.js';

function rule(name: string, test: (value: unknown, rule: LeadFieldRule) => boolean, field: LeadFieldRule, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name,
      target: target.constructor,
      propertyName,
      options,
      validator: { validate: (value: unknown) => test(value, field) },
    });
}

const trimmed = (value: unknown) => (typeof value === 'string' ? value.trim() : undefined);

/** Present (null is present, and then fails as a wrong type). */
const Required = (field: LeadFieldRule) => rule('required', (v) => v !== undefined, field);
const AllowedCharacters = (field: LeadFieldRule) =>
  rule('allowedCharacters', (v) => trimmed(v) === undefined || !(field.multiline ? FORBIDDEN_MULTILINE_CHARACTER : FORBIDDEN_CHARACTER).test(trimmed(v)!), field);
const MinLength = (field: LeadFieldRule) => rule('minLength', (v) => trimmed(v) === undefined || codePointLength(trimmed(v)!) >= field.min, field);
const MaxLength = (field: LeadFieldRule) => rule('maxLength', (v) => trimmed(v) === undefined || codePointLength(trimmed(v)!) <= field.max, field);
const Format = (field: LeadFieldRule) => rule('format', (v) => typeof v !== 'string' || !field.format || field.format.test(v), field);
const Optional = (name: string) => ValidateIf((object: Record<string, unknown>) => object[name] !== undefined);

/** Every check of one field, in the order they are reported (see LeadValidationService). */
function LeadField(name: keyof typeof LEAD_FIELDS): PropertyDecorator {
  const field: LeadFieldRule = LEAD_FIELDS[name];
  const decorators = [
    field.required ? Required(field) : Optional(name),
    IsString(),
    AllowedCharacters(field),
    MinLength(field),
    MaxLength(field),
    Format(field),
  ];
  return (target, propertyKey) => decorators.forEach((decorate) => (decorate as PropertyDecorator)(target, propertyKey));
}

/** The lead body as class-validator sees it; values stay `unknown` until validated. */
export class LeadInput {
  @LeadField('nome') nome: unknown;
  @LeadField('email') email: unknown;
  @LeadField('telefone') telefone: unknown;
  @LeadField('empresa') empresa: unknown;
  @LeadField('mensagem') mensagem: unknown;
  @LeadField('origem') origem: unknown;
}
