import { Router } from 'express';
import type { ProxyMetrics } from '../../metrics/proxy-metrics.js';
import { asProxyError, sendElasticsearchError } from '../elasticsearch-error.js';

/** `GET /metrics` in Prometheus' text format, for the admin listener only. */
export function metricsRouter(metrics: Pick<ProxyMetrics, 'render'>): Router {
  const router = Router();
  router.get('/metrics', (_req, res) => {
    metrics
      .render()
      .then(({ contentType, body }) => {
        res.status(200).set({ 'content-type': contentType, 'cache-control': 'no-store' }).send(body);
      })
      .catch((error: unknown) => sendElasticsearchError(res, asProxyError(error)));
  });
  return router;
}
