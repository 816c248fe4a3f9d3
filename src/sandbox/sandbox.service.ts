import { Injectable } from '@nestjs/common';
import { LeadValidationService } from '../leads/lead-validation.service.js';
import type { NormalisedLead } from '../leads/normalised-lead.js';

export interface SandboxResult {
  valid: true;
  stored: false;
  lead: NormalisedLead;
}

@Injectable()
export class SandboxService {
  constructor(private readonly validation: LeadValidationService) {}

  /** Exactly the lead endpoint's validation and normalisation; nothing is stored. */
  check(body: Record<string, unknown>): SandboxResult {
    return { valid: true, stored: false, lead: this.validation.validate(body) };
  }
}
