// The served contract: openapi/openapi-leads.yaml as JSON. Read whole, not through `yaml`'s CLI on stdin, whose
// streaming lexer misreads a document when a 64 KiB chunk boundary falls inside a key.
import { readFileSync, writeFileSync } from 'node:fs';
import { parse } from 'yaml';

const document = parse(readFileSync('openapi/openapi-leads.yaml', 'utf8'), { strict: true, uniqueKeys: true });
writeFileSync('dist/openapi-leads.json', `${JSON.stringify(document)}\n`);
