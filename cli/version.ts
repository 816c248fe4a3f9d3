/** Keep equal to package.json "version"; the e2e suite checks `leads --version` against it. */
export const VERSION = '1.0.0';
