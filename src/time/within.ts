/**
 * `work`'s result, or a rejection once `ms` have passed without one (what it settles to later is then ignored): for
 * reads that must answer in time even when the database hangs (health, metrics). The timer never outlives the call.
 */
export async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([work, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
