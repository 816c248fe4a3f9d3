import { confirmationPage, invalidLinkPage, unsubscribePage } from './notification-pages.js';

describe('notification pages', () => {
  it('makes the confirm form the first form of the confirmation page: method post, the token in a hidden input, no script', () => {
    const html = confirmationPage('https://leads.example.com/notifications/confirm', 'tok"<en>');
    const forms = html.match(/<form[^>]*>/g) ?? [];
    expect(forms[0]).toBe('<form method="post" action="https://leads.example.com/notifications/confirm">');
    expect(html).toContain('<input type="hidden" name="token" value="tok&quot;&lt;en&gt;">');
    expect(html).not.toMatch(/<script/i);
    // Portuguese first, then English.
    expect(html).toMatch(/<html lang="pt-BR">[\s\S]*Confirme[\s\S]*<section lang="en">[\s\S]*Confirm that/);
  });

  it('gives the unsubscribe page a button that posts the one-click body', () => {
    const html = unsubscribePage('https://leads.example.com/notifications/unsubscribe?token=abc');
    expect(html).toContain('<form method="post" action="https://leads.example.com/notifications/unsubscribe?token=abc">');
    expect(html).toContain('<input type="hidden" name="List-Unsubscribe" value="One-Click">');
  });

  it('says a link is not valid with no form at all', () => {
    expect(invalidLinkPage()).not.toContain('<form');
    expect(invalidLinkPage()).toMatch(/não é válido[\s\S]*not valid/);
  });
});
