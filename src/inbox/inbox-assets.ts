import { createHash } from 'node:crypto';
import { ASSET_FILES } from './inbox-files.js';

export interface Asset {
  body: Buffer;
  contentType: string;
  /** A digest of the content: the ETag, and the `v` of the pages' links, so that a changed file is a new URL. */
  version: string;
}

const TYPES: Record<string, string> = { '.css': 'text/css; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };

/** The files of /inbox/assets/, read once. */
export const INBOX_ASSETS: ReadonlyMap<string, Asset> = new Map(
  Object.entries(ASSET_FILES).map(([name, text]) => {
    const body = Buffer.from(text, 'utf8');
    const version = createHash('sha256').update(body).digest('base64url').slice(0, 16);
    return [name, { body, contentType: TYPES[name.slice(name.lastIndexOf('.'))], version }];
  }),
);

/** The URL of an asset as pages link it. */
export function assetUrl(name: string): string {
  const asset = INBOX_ASSETS.get(name);
  if (!asset) throw new Error(`inbox asset ${name} does not exist`);
  return `/inbox/assets/${name}?v=${asset.version}`;
}
