import { registerDecorator } from 'class-validator';
import { fieldFailure, LeadField } from './lead-rules.js';

/**
 * Every rule of a field as one class-validator constraint: six separate constraints per field made validation a
 * quarter of a lead's cost. Which rule failed is told by fieldFailure() when the error is reported.
 */
function LeadRules(name: LeadField): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'leadRules',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: { validate: (value: unknown) => fieldFailure(name, value) === undefined },
    });
}

/** The lead body as class-validator sees it; values stay `unknown` until validated. */
export class LeadInput {
  @LeadRules('nome') nome: unknown;
  @LeadRules('email') email: unknown;
  @LeadRules('telefone') telefone: unknown;
  @LeadRules('empresa') empresa: unknown;
  @LeadRules('mensagem') mensagem: unknown;
  @LeadRules('origem') origem: unknown;
}
