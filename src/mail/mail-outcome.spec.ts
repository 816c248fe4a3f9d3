import { failureOf, redactedResponse, replyCode } from './mail-outcome.js';

describe('failureOf: how a failed send is retried', () => {
  it.each([
    [{ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 550, response: '550 5.1.1 no such user' }, 'permanent'],
    [{ code: 'EMESSAGE', command: 'DATA', responseCode: 552, response: '552 5.3.4 message too big' }, 'permanent'],
    [{ code: 'EENVELOPE', command: 'RCPT TO', responseCode: 452, response: '452 4.2.2 mailbox full' }, 'transient'],
    // About us, not the recipient: the sender refused, our login refused.
    [{ code: 'EENVELOPE', command: 'MAIL FROM', responseCode: 553, response: '553 5.7.1 sender not allowed' }, 'transient'],
    [{ code: 'EAUTH', command: 'AUTH PLAIN', responseCode: 535, response: '535 5.7.8 bad credentials' }, 'transient'],
    [{ code: 'ETLS', command: 'STARTTLS', responseCode: 500, response: '500 5.5.1 unknown command' }, 'transient'],
    [{ code: 'ECONNECTION', originalCode: 'ECONNRESET', command: 'CONN' }, 'transient'],
    [new Error('anything else'), 'transient'],
    [undefined, 'transient'],
  ])('%j is %s', (error, kind) => {
    expect(failureOf(error).kind).toBe(kind);
  });

  it('says what failed by codes, never by Nodemailer’s message, which may quote the address', () => {
    const error = Object.assign(new Error('Message failed for recipient ana@empresa.example'), {
      code: 'EMESSAGE',
      command: 'DATA',
      response: '550 rejected <ana@empresa.example>',
    });
    expect(failureOf(error)).toEqual({ kind: 'permanent', code: 550, response: '550 rejected <address>', error: 'EMESSAGE at DATA: 550' });
  });
});

describe('the server reply as results keep it', () => {
  it('replaces every word with an @, makes it one line and bounds it', () => {
    expect(redactedResponse('550-5.1.1 "ana.souza"@empresa.example\r\n550 5.1.1 (ana@x.example) unknown')).toBe(
      '550-5.1.1 <address> 550 5.1.1 <address> unknown',
    );
    expect(redactedResponse(`250 ${'x '.repeat(1000)}`)?.length).toBe(300);
    expect([redactedResponse(''), redactedResponse(undefined)]).toEqual([null, null]);
  });

  it('reads the code that opens a reply', () => {
    expect([replyCode('250 2.0.0 OK'), replyCode('451-4.7.1 later'), replyCode('OK'), replyCode(null), replyCode('600 no')]).toEqual([
      250,
      451,
      null,
      null,
      null,
    ]);
  });
});
