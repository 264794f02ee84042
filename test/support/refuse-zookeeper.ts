import { register } from 'node:module';

/**
 * Loaded with `node --import`: from then on, importing the module that loads our ZooKeeper addon
 * (src/zookeeper-client/zk-addon.ts, the one place that does) or the `zookeeper` package fails with
 * REFUSED_MARKER. A process that starts and serves with this hook never loaded the native
 * binding. The hooks run on Node's loader thread, hence a self-contained data: URL.
 */
export const REFUSED_MARKER = 'es-lock-proxy test: the ZooKeeper binding was loaded';

const HOOKS = `
export async function resolve(specifier, context, nextResolve) {
  if (specifier === 'zookeeper' || /(^|\\/)zk-addon\\.(js|ts)$/.test(specifier)) throw new Error(${JSON.stringify(REFUSED_MARKER)});
  return nextResolve(specifier, context);
}
`;

register(`data:text/javascript,${encodeURIComponent(HOOKS)}`);
