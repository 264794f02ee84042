/**
 * The V8 flags the proxy process is started with: `npm start`, the image's CMD and the bench's
 * proxy processes pass exactly these (test/unit/deploy checks that they agree). Running
 * `dist/cli/main.js` another way, pass them through NODE_OPTIONS to get the same behaviour.
 *
 * A young generation of up to 64 MB per semi-space instead of Node's 16 MB: the proxy allocates
 * tens of kilobytes per request, so at 200 requests/s it stopped for a scavenge (1–4.6 ms each,
 * measured) about once a second, and those pauses were the tail of a paced request's latency.
 * Three alternating pairs of `npm run bench -- --workload write-uncontended,open-loop`, the flag
 * on the proxy only: added p99 of a write 2.16 / 3.61 / 2.25 ms without it, 1.57 / 2.44 / 1.93
 * with it; of a search 1.34 / 1.21 / 1.30 against 1.26 / 1.19 / 1.12. The cost is memory: the
 * young generation may grow to 128 MB instead of 32 MB.
 */
export const PROXY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
