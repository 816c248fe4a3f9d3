import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsBoolean, IsEmail, IsInt, IsOptional, IsString, Matches, MaxLength, MinLength, ValidateNested } from 'class-validator';
import type { Response } from 'supertest';
import { Consumes } from '../src/body/body.guard.js';
import { startAppWith, TestApp } from './support/test-app.js';

/**
 * `@Body() dto: SomeDto` and `@Query() query: SomeQuery` with the global ValidationPipe, on routes that exist only here:
 * the body middleware's strict JSON rules still hold, @Consumes refuses other media types, and class-validator's
 * findings on a body become the same 422 validation_failed problem, with JSON Pointers, as the hand-written validators
 * give; on a query, 400 invalid_query naming each parameter.
 */

class Address {
  @IsString() @MaxLength(20) street!: string;
  @IsOptional() @IsInt() number?: number;
}

class ContactDto {
  @IsString() @MinLength(2) @MaxLength(10) name!: string;
  @IsOptional() @IsEmail() email?: string;
  @IsOptional() @IsBoolean() subscribed?: boolean;
  // A rule that names its own catalog code.
  @IsOptional() @Matches(/^[a-z]+$/, { context: { code: 'invalid_characters' } }) tag?: string;
  @ArrayMaxSize(2) @ValidateNested({ each: true }) @Type(() => Address) addresses!: Address[];
}

class PingQuery {
  @IsOptional() @IsString() @MaxLength(5) echo?: string;
  @IsOptional() @IsString() @Matches(/^[a-z]+$/, { context: { code: 'invalid_cursor' } }) mark?: string;
}

@Controller('test-dto')
class DtoController {
  @Post('contact')
  @HttpCode(200)
  @Consumes('application/json')
  contact(@Body() dto: ContactDto) {
    return { isInstance: dto instanceof ContactDto && dto.addresses.every((a) => a instanceof Address), dto };
  }

  @Get('ping')
  ping(@Query() query: PingQuery) {
    return { pong: true, echo: query.echo ?? null, isInstance: query instanceof PingQuery };
  }
}

const VALID = { name: 'Ana', addresses: [{ street: 'Rua A', number: 10 }] };

describe('DTOs with @Body() and @Query() through the global ValidationPipe', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startAppWith([DtoController]);
  });
  afterAll(() => t.close());

  const post = (body: string, contentType = 'application/json') => t.http.post('/test-dto/contact').set('Content-Type', contentType).send(body);

  function expectProblem(res: Response, status: number, code: string, errors?: [string, string][]): void {
    expect([res.status, res.body.code]).toEqual([status, code]);
    expect(res.headers['content-type']).toBe('application/problem+json; charset=utf-8');
    expect(res.body).toMatchObject({ status, type: `http://leads.test/docs/errors#${code}`, request_id: res.headers['x-request-id'] });
    const place = code === 'invalid_query' ? 'parameter' : 'pointer';
    if (errors) expect(res.body.errors.map((e: Record<string, string>) => [e[place], e.code])).toEqual(errors);
    else expect(res.body.errors).toBeUndefined();
  }

  it('hands the handler an instance of the DTO, nested classes included', async () => {
    const res = await post(JSON.stringify(VALID));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ isInstance: true, dto: VALID });
  });

  describe('class-validator findings as 422 validation_failed, one per field, with JSON Pointers', () => {
    it.each<[string, unknown, [string, string][]]>([
      ['a missing field', { addresses: [] }, [['/name', 'required']]],
      ['a wrong type', { ...VALID, name: 42 }, [['/name', 'invalid_type']]],
      ['null for a required field', { ...VALID, name: null }, [['/name', 'invalid_type']]],
      ['a string too short', { ...VALID, name: 'A' }, [['/name', 'too_short']]],
      ['a string too long', { ...VALID, name: 'Ana Beatriz Souza' }, [['/name', 'too_long']]],
      ['a bad format', { ...VALID, email: 'not-an-email' }, [['/email', 'invalid_format']]],
      ['a string for a boolean (no implicit conversion)', { ...VALID, subscribed: 'true' }, [['/subscribed', 'invalid_type']]],
      ['a code the rule names itself', { ...VALID, tag: 'Abc' }, [['/tag', 'invalid_characters']]],
      ['too many items', { ...VALID, addresses: [{ street: 'a' }, { street: 'b' }, { street: 'c' }] }, [['/addresses', 'too_many_items']]],
      ['an object where an array of objects belongs', { ...VALID, addresses: 'Rua A' }, [['/addresses', 'invalid_type']]],
      ['a field of an array item', { ...VALID, addresses: [{ street: 'Rua A' }, { street: 7 }] }, [['/addresses/1/street', 'invalid_type']]],
      ['a missing field of an array item', { ...VALID, addresses: [{ number: 1 }] }, [['/addresses/0/street', 'required']]],
      ['an unknown field', { ...VALID, extra: 1 }, [['/extra', 'unknown_field']]],
      ['an unknown field in an array item', { ...VALID, addresses: [{ street: 'Rua A', floor: 2 }] }, [['/addresses/0/floor', 'unknown_field']]],
      ['an unknown field whose name needs escaping', { ...VALID, 'a/b~c': 1 }, [['/a~1b~0c', 'unknown_field']]],
      [
        'a name class-transformer would skip',
        { ...VALID, toString: 'x', hasOwnProperty: 1 },
        [
          ['/toString', 'unknown_field'],
          ['/hasOwnProperty', 'unknown_field'],
        ],
      ],
      [
        'several fields, unknown ones last',
        { zzz: 1, name: 5, addresses: [{ street: 'x'.repeat(21), number: 1.5 }] },
        [
          ['/name', 'invalid_type'],
          ['/addresses/0/street', 'too_long'],
          ['/addresses/0/number', 'invalid_type'],
          ['/zzz', 'unknown_field'],
        ],
      ],
    ])('%s', async (_name, body, errors) => {
      const res = await post(JSON.stringify(body));
      expectProblem(res, 422, 'validation_failed', errors);
      for (const error of res.body.errors) expect(error.detail).toEqual(expect.any(String));
    });
  });

  describe('the strict JSON rules and the media type, before any DTO rule', () => {
    it.each([
      ['text/plain (no silent empty body)', 'text/plain'],
      ['a form body', 'application/x-www-form-urlencoded'],
      ['charset=latin1', 'application/json; charset=latin1'],
    ])('answers %s 415 unsupported_media_type', async (_name, contentType) => {
      expectProblem(await post(JSON.stringify(VALID), contentType), 415, 'unsupported_media_type');
    });

    it('answers no Content-Type 415', async () => {
      expectProblem(await t.http.post('/test-dto/contact').send(Buffer.from(JSON.stringify(VALID))), 415, 'unsupported_media_type');
    });

    it.each([
      ['malformed JSON', '{"name":', 400, 'malformed_json'],
      ['an empty body', '', 400, 'malformed_json'],
      ['an array', JSON.stringify([VALID]), 400, 'body_not_object'],
      ['a string', '"Ana"', 400, 'body_not_object'],
    ])('answers %s with its problem', async (_name, body, status, code) => {
      expectProblem(await post(body), status, code);
    });

    it.each([
      ['a duplicate key', '{"name":"Ana","name":"Bia","addresses":[]}', [['/name', 'duplicate_key']]],
      ['__proto__ in an array item', '{"name":"Ana","addresses":[{"street":"a","__proto__":{"x":1}}]}', [['/addresses/0/__proto__', 'forbidden_key']]],
    ])('answers %s 422 as the strict parser finds it', async (_name, body, errors) => {
      expectProblem(await post(body), 422, 'validation_failed', errors as [string, string][]);
    });

    it('answers a body over 32 KiB 413', async () => {
      expectProblem(await post(JSON.stringify({ ...VALID, name: 'a'.repeat(33 * 1024) })), 413, 'payload_too_large');
    });
  });

  describe('a query DTO', () => {
    it('passes valid parameters and none at all, as an instance of the DTO', async () => {
      expect((await t.http.get('/test-dto/ping?echo=hi')).body).toEqual({ pong: true, echo: 'hi', isInstance: true });
      expect((await t.http.get('/test-dto/ping')).body).toEqual({ pong: true, echo: null, isInstance: true });
    });

    it.each<[string, string, [string, string][]]>([
      ['a broken rule', '?echo=toolong', [['echo', 'too_long']]],
      ['a repeated parameter', '?echo=a&echo=b', [['echo', 'repeated_parameter']]],
      ['an unknown parameter', '?other=1', [['other', 'unknown_parameter']]],
      ['a code the rule names itself', '?mark=A', [['mark', 'invalid_cursor']]],
      ['__proto__, which the base pipe deletes unseen', '?__proto__=1', [['__proto__', 'unknown_parameter']]],
      ['constructor, likewise', '?echo=a&constructor=1', [['constructor', 'unknown_parameter']]],
      ['a name class-transformer skips', '?valueOf=1', [['valueOf', 'unknown_parameter']]],
      [
        'several, unknown ones last',
        '?zz=1&echo=toolong&mark=a&mark=b',
        [
          ['echo', 'too_long'],
          ['mark', 'repeated_parameter'],
          ['zz', 'unknown_parameter'],
        ],
      ],
    ])('answers %s 400 invalid_query, naming the parameter', async (_name, query, errors) => {
      const res = await t.http.get(`/test-dto/ping${query}`);
      expectProblem(res, 400, 'invalid_query', errors);
      for (const error of res.body.errors) expect(Object.keys(error).sort()).toEqual(['code', 'detail', 'parameter']);
    });
  });
});
