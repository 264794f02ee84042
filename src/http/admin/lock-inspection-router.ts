import { Router, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import { ProxyError } from '../../errors/proxy-error.js';
import type { LockEngine, LockKey } from '../../lock/lock-engine.js';
import { sendJson } from '../admin-app.js';
import { asProxyError, sendElasticsearchError } from '../elasticsearch-error.js';
import { requireAdminToken } from './admin-token.js';
import { parseListQuery, parseLockAdminPath, splitUrl } from './lock-admin-path.js';
import { holderJson, inspectionJson } from './lock-inspection-json.js';

export interface LockInspectionDeps {
  readonly locks: LockEngine;
  /** Read per request so that a reloaded `proxy.admin.token` applies at once; null disables force release. */
  readonly adminToken: () => string | null;
  readonly logger: Logger;
}

/**
 * Lock inspection and the operator's force release, for the admin listener:
 * - `GET /locks/{index}/{id}`: holder and queue in order;
 * - `GET /locks?index=NAME&limit=N`: held locks of one index (limit default 100, at most 1000);
 * - `DELETE /locks/{index}/{id}`: force release, bearer admin token required.
 * Paths are read raw (ids may contain `%2F`), not through express's decoded params.
 */
export function lockInspectionRouter(deps: LockInspectionDeps): Router {
  const router = Router();
  router.use('/locks', (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'DELETE') {
      next();
      return;
    }
    handle(deps, req, res).catch((error: unknown) => answerError(deps, res, error));
  });
  return router;
}

async function handle(deps: LockInspectionDeps, req: Request, res: Response): Promise<void> {
  const { path, query } = splitUrl(req.url);
  const target = parseLockAdminPath(path);
  if (req.method === 'DELETE') {
    if (target.kind !== 'key') throw new ProxyError('BAD_REQUEST', 'force release addresses one lock: DELETE /locks/{index}/{id}');
    return forceRelease(deps, req, res, target.key);
  }
  if (target.kind === 'key') {
    sendJson(res, 200, inspectionJson(await deps.locks.inspect(target.key)));
    return;
  }
  const { index, limit } = parseListQuery(query);
  // One more than asked tells whether the list was cut short.
  const held = await deps.locks.listHeld(index, limit + 1);
  sendJson(res, 200, { index, limit, truncated: held.length > limit, locks: held.slice(0, limit).map(inspectionJson) });
}

async function forceRelease(deps: LockInspectionDeps, req: Request, res: Response, key: LockKey): Promise<void> {
  const who = { remoteAddress: req.socket.remoteAddress ?? null };
  let tokenFingerprint: string;
  try {
    tokenFingerprint = requireAdminToken(deps.adminToken(), req.headers.authorization);
  } catch (error) {
    deps.logger.warn({ admin: { ...who, action: 'force_release', key, refused: asProxyError(error).message } }, 'lock force release refused');
    throw error;
  }
  // The holder is read first only to tell the operator whose lock was broken; the release itself is atomic.
  const { holder } = await deps.locks.inspect(key);
  const released = await deps.locks.forceRelease(key);
  if (!released) throw new ProxyError('LOCK_NOT_HELD', `no lock is held on ${key.index}/${key.id}`, { meta: { ...key } });
  const previousHolder = holderJson(holder);
  deps.logger.warn(
    { admin: { ...who, tokenFingerprint, action: 'force_release', key, previousHolder } },
    'lock force-released by an operator',
  );
  sendJson(res, 200, { released: true, key, holder: previousHolder });
}

function answerError(deps: LockInspectionDeps, res: Response, error: unknown): void {
  const proxyError = asProxyError(error);
  if (proxyError.code === 'INTERNAL') deps.logger.error({ err: error }, 'lock inspection failed');
  sendElasticsearchError(res, proxyError);
}
