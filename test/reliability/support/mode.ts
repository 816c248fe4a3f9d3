/**
 * RELIABILITY_MODE=short: the bounded run of every CI submission (each scenario within about a minute); unset or
 * `full`: the durations the README's Reliability suite section states (60 s of traffic, 10 s outages), run by hand.
 */
const MODE = process.env.RELIABILITY_MODE ?? 'full';
if (MODE !== 'short' && MODE !== 'full') throw new Error(`RELIABILITY_MODE must be "short" or "full", not "${MODE}"`);

export const SHORT = MODE === 'short';
export { MODE };

/** A duration in milliseconds: `short` seconds in short mode, `full` seconds in full mode. */
export const seconds = (short: number, full: number): number => 1000 * (SHORT ? short : full);
