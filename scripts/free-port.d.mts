/** A loopback port that nothing listens on right now. */
export function freePort(): Promise<number>;
