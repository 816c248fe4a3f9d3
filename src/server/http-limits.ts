import { maxHeaderSize } from 'node:http';

/**
 * The fixed limits of one HTTP request. The server and the body reader enforce them; error hints and documentation
 * pages are written from them. The contract and the README state them as text: src/docs/stated-limits.spec.ts holds
 * that text to these values. A leaf module, so that the error catalog can read it without an import cycle.
 */

/**
 * Request bodies, after decompression (docs/decisions/0003-strict-json-request-bodies.md). 32 KiB since leads carry
 * consent wording and attribution: a lead at every bound in Portuguese text no longer fit 16 KiB (decision 0028).
 */
export const BODY_LIMIT_BYTES = 32 * 1024;
/** Compressed bytes on the wire: a coded body that fits the limit once decoded is never much larger than it. */
export const CODED_WIRE_LIMIT_BYTES = 2 * BODY_LIMIT_BYTES;
/** The request line and headers together: Node's own limit (`--max-http-header-size`), kept at its default. */
export const HEADER_BLOCK_LIMIT_BYTES = maxHeaderSize;
/** Time for the request line and headers to arrive. */
export const HEADERS_TIMEOUT_MS = 15_000;
/** Time for the whole request to arrive. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** A size as the documents write it: "16 KiB". */
export const inKiB = (bytes: number): string => `${bytes / 1024} KiB`;
/** A duration as the documents write it: "15 s". */
export const inSeconds = (ms: number): string => `${ms / 1000} s`;
