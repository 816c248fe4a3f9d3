import type { LeadView } from '../leads/lead-reader.service.js';

/** Who received a person's data: an endpoint that is sent leads, or a mailbox told of leads with their data. */
export interface DataRecipient {
  kind: 'webhook_endpoint' | 'notification_recipient';
  /** The endpoint's description (else its host), or the mailbox's address masked. */
  name: string;
}

/** The simplified answer to an access request (LGPD art. 19 I): whether we hold data, which, since when, why, for whom. */
export interface PrivacySummary {
  holds_data: boolean;
  leads: number;
  first_received_at: string | null;
  last_received_at: string | null;
  /** Which kinds of data: nome, email, telefone, empresa, mensagem, attribution (the page and campaign it came from). */
  data_held: string[];
  /** Where the leads came from: origem as the form or agent named it, and the surface it came through. */
  sources: { origem: string | null; channel: string; leads: number }[];
  legal_bases: { category: string; type: string; status: string; leads: number }[];
  recipients: DataRecipient[];
}

const KINDS = ['nome', 'email', 'telefone', 'empresa', 'mensagem', 'attribution'] as const;

/** The summary, tallied page by page over every lead of the person. */
export class SummaryTally {
  private leads = 0;
  private first: string | null = null;
  private last: string | null = null;
  private readonly kinds = new Set<string>();
  private readonly sources = new Map<string, { origem: string | null; channel: string; leads: number }>();
  private readonly bases = new Map<string, { category: string; type: string; status: string; leads: number }>();

  add(page: readonly LeadView[]): void {
    for (const lead of page) {
      this.leads++;
      if (this.first === null || lead.received_at < this.first) this.first = lead.received_at;
      if (this.last === null || lead.received_at > this.last) this.last = lead.received_at;
      this.kinds.add('nome').add('email');
      for (const kind of ['telefone', 'empresa', 'mensagem'] as const) if (lead[kind] !== null) this.kinds.add(kind);
      if (Object.keys(lead.context).length > 0) this.kinds.add('attribution');
      count(this.sources, JSON.stringify([lead.origem, lead.channel]), () => ({ origem: lead.origem, channel: lead.channel, leads: 0 }));
      const seen = new Set<string>();
      for (const basis of lead.legal_bases) {
        const key = JSON.stringify([basis.category, basis.type, basis.status]);
        if (seen.has(key)) continue;
        seen.add(key);
        count(this.bases, key, () => ({ category: basis.category, type: basis.type, status: basis.status, leads: 0 }));
      }
    }
  }

  result(recipients: DataRecipient[]): PrivacySummary {
    const byCount = <T extends { leads: number }>(entries: Iterable<T>) => [...entries].sort((a, b) => b.leads - a.leads);
    return {
      holds_data: this.leads > 0,
      leads: this.leads,
      first_received_at: this.first,
      last_received_at: this.last,
      data_held: KINDS.filter((kind) => this.kinds.has(kind)),
      sources: byCount(this.sources.values()),
      legal_bases: byCount(this.bases.values()),
      recipients: this.leads > 0 ? recipients : [],
    };
  }
}

function count<T extends { leads: number }>(map: Map<string, T>, key: string, make: () => T): void {
  const entry = map.get(key) ?? make();
  entry.leads++;
  map.set(key, entry);
}
