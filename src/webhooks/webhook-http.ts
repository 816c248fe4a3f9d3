// PLACEHOLDER (replaced by the i21-ssrf branch)
import type { Resolver } from './webhook-address.js';
export interface WebhookRequest { url: string; headers: Record<string, string>; body: string; timeoutMs: number }
export interface WebhookResponse { status: number | null; error: string | null; retryAfterSeconds: number | null; body: string; latencyMs: number; address: string | null }
export class WebhookHttpClient {
  constructor(private readonly options: { allowPrivate: boolean; resolver?: Resolver; userAgent: string }) {}
  async send(request: WebhookRequest): Promise<WebhookResponse> {
    const started = performance.now();
    try {
      const res = await fetch(request.url, { method: 'POST', headers: { ...request.headers, 'user-agent': this.options.userAgent }, body: request.body, redirect: 'manual', signal: AbortSignal.timeout(request.timeoutMs) });
      const body = (await res.text()).slice(0, 4096);
      const ra = res.headers.get('retry-after');
      return { status: res.status, error: null, retryAfterSeconds: ra && /^\d+$/.test(ra) ? Number(ra) : null, body, latencyMs: Math.round(performance.now() - started), address: null };
    } catch (error) {
      return { status: null, error: (error as Error).name === 'TimeoutError' ? 'timeout' : 'connection_failed', retryAfterSeconds: null, body: '', latencyMs: Math.round(performance.now() - started), address: null };
    }
  }
}
