import { fileURLToPath } from 'node:url';

/**
 * Whether the bench runs from its compiled form (`npm run bench` builds it with tsc into
 * .bench-build/, as `npm start` runs dist/) or from source under tsx (the bench's own tests).
 * Compiled matters: tsx's esbuild transform is not the JavaScript a user runs (for one, it wraps
 * every function it creates in a naming helper), and the proxy's CPU per locked write measured
 * 12–16% higher under it.
 */
const COMPILED = import.meta.url.endsWith('.js');

/** The repository root, from bench/ (source) or .bench-build/bench/ (compiled). */
export const REPO_ROOT = fileURLToPath(new URL(COMPILED ? '../../' : '../', import.meta.url));

/**
 * The node arguments that run a bench script given relative to bench/ (`proxy-process.ts`) the
 * way this bench runs: the compiled sibling with plain node, or the source under tsx.
 */
export function benchScript(relativeToBench: string): string[] {
  const path = fileURLToPath(new URL(relativeToBench, import.meta.url));
  return COMPILED ? [path.replace(/\.ts$/, '.js')] : ['--import', 'tsx', path];
}

/** Runs a bench script's `main` and exits with its outcome (0, or 1 with the error on stderr). */
export function runScript(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
