import type { Level, Logger } from 'pino';

/**
 * pino children copy their level when created, so changing the root's level later leaves the
 * component loggers (`{component: ...}`) behind. This keeps the long-lived ones in step; the
 * per-request children are created from them and pick up the new level from then on.
 */
export function liveLogLevel(root: Logger): (level: Level | 'silent') => void {
  const family = new Set<Logger>([root]);
  const previous = root.onChild;
  root.onChild = (child) => {
    previous.call(root, child);
    const bindings = child.bindings();
    if ('component' in bindings && !('requestId' in bindings)) family.add(child);
  };
  return (level) => {
    for (const logger of family) logger.level = level;
  };
}
