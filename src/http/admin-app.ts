import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { PROXY_RESPONSE_HEADERS } from './elasticsearch-error.js';
import type { Readiness } from './readiness.js';

export interface AdminAppDeps {
  readonly readiness: Readiness;
  readonly logger: Logger;
  /** Further operational routes (lock inspection, metrics), mounted at the root before the 404. */
  readonly routers?: readonly Router[];
}

/** Operational endpoints, on their own listener so that no path is taken from Elasticsearch. */
export function createAdminApp(deps: AdminAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.get('/healthz', (_req, res) => sendJson(res, 200, { status: 'ok' }));
  app.get('/readyz', (_req, res, next) => {
    deps.readiness
      .evaluate()
      .then((report) =>
        report.ready
          ? sendJson(res, 200, { status: 'ready' })
          : sendJson(res, 503, { status: 'not_ready', reasons: report.reasons.map((r) => `${r.check}: ${r.reason}`) }),
      )
      .catch(next);
  });
  for (const router of deps.routers ?? []) app.use(router);
  app.use((req: Request, res: Response) => sendJson(res, 404, { status: 'not_found', path: req.path }));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    deps.logger.error({ err: error }, 'admin request failed');
    sendJson(res, 500, { status: 'error' });
  });
  return app;
}

export function sendJson(res: Response, status: number, body: unknown): void {
  const payload = JSON.stringify(body);
  res.status(status).set({ 'content-type': PROXY_RESPONSE_HEADERS['content-type'], 'cache-control': 'no-store' }).send(payload);
}
