// PLACEHOLDER (replaced by the i21-ssrf branch)
export interface ResolvedAddress { address: string; family: 4 | 6 }
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;
export async function checkUrl(raw: string, options: { allowPrivate: boolean; resolver: Resolver }): Promise<{ ok: true; url: URL } | { ok: false; code: string; detail: string }> {
  void options;
  try { return { ok: true, url: new URL(raw) }; } catch { return { ok: false, code: 'invalid_url', detail: 'url is not an absolute URL.' }; }
}
export const systemResolver: Resolver = async () => [];
