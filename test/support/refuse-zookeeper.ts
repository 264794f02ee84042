import { register } from 'node:module';

/**
 * Loaded with `node --import`: from then on, resolving the `zookeeper` package (the native
 * binding) fails with REFUSED_MARKER. A process that starts and serves with this hook never
 * loaded the binding. The hooks run on Node's loader thread, hence a self-contained data: URL.
 */
export const REFUSED_MARKER = 'es-lock-proxy test: the zookeeper binding was loaded';

const HOOKS = `
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'zookeeper') throw new Error(${JSON.stringify(REFUSED_MARKER)});
  return nextResolve(specifier, context);
}
`;

register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
