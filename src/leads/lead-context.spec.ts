import { CONTEXT_URL_MAX, contextValue } from './lead-context.js';

describe('contextValue: the 2,048 bound of a URL member', () => {
  const base = 'https://exemplo.com.br/';

  it('holds on the URL as stored, which percent-encoding makes longer than the text sent', () => {
    // 1,000 code points sent; each 😀 is 12 characters stored (%F0%9F%98%80).
    expect(contextValue('page_url', `${base}${'😀'.repeat(1000)}`)).toEqual({ failure: 'too_long' });
    expect(contextValue('referrer', `${base}${'é'.repeat(338)}`)).toEqual({ failure: 'too_long' });
  });

  it('takes a URL of exactly 2,048 characters once stored, its query and fragment left out', () => {
    const stored = `${base}${'%C3%A9'.repeat(337)}ppp`;
    expect(stored).toHaveLength(CONTEXT_URL_MAX);
    expect(contextValue('page_url', `${base}${'é'.repeat(337)}ppp?utm_source=x#top`)).toEqual({ value: stored });
  });

  it('still refuses the text sent past the bound before parsing it', () => {
    expect(contextValue('page_url', `${base}${'p'.repeat(CONTEXT_URL_MAX)}`)).toEqual({ failure: 'too_long' });
  });
});
