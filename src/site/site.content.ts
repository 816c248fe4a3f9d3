/**
 * The company's public facts, in one place: /api/v1/info, GraphQL `site` and the MCP server all read this.
 * Edit here when the marketing copy changes.
 */
export const SITE_CONTENT = {
  brand: 'Acme Workplace',
  company: 'Acme Serviços Corporativos Ltda.',
  address: {
    street: 'Avenida Paulista, 1000, 10º andar',
    city: 'São Paulo',
    region: 'SP',
    postal_code: '01310-100',
    country: 'BR',
  },
  phone: '+55 11 4000-1000',
  trial: { days: 7, credit_card_required: false, url: 'https://app.acme-workplace.example/trial' },
} as const;
