import { defineMessages, translator } from './inbox-messages.js';
import { CORE_MESSAGES } from './messages/core.js';

describe('inbox messages', () => {
  it('refuses an area whose languages do not have the same keys', () => {
    expect(() => defineMessages({ 'pt-BR': { a: 'A', b: 'B' }, en: { a: 'A' } } as never)).toThrow('en has not the same keys as pt-BR');
  });

  it('translates with placeholders, and throws on an unknown key', () => {
    const area = defineMessages({ 'pt-BR': { 'x.hello': 'Olá, {name}!' }, en: { 'x.hello': 'Hello, {name}!' } });
    expect(translator('pt-BR', CORE_MESSAGES, area)('x.hello', { name: 'Ana' })).toBe('Olá, Ana!');
    expect(translator('en', CORE_MESSAGES, area)('x.hello', { name: 'Ana' })).toBe('Hello, Ana!');
    expect(translator('en', CORE_MESSAGES)('code.wrong', { left: 3 })).toBe('Wrong code. 3 tries left.');
    expect(() => translator('en', CORE_MESSAGES)('x.hello')).toThrow('inbox message x.hello is missing');
  });
});
