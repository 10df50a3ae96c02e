import type { IncomingMessage, ServerResponse } from 'node:http';
import { SlipwayError } from '../core/errors.js';
import { requireAdmin } from './access.js';
import { authenticate } from './authenticate.js';
import type { ApiDependencies } from './platform.js';

/** `GET /metrics`: the figures of every app of the platform, so for administrators only. */
export async function sendMetrics(deps: ApiDependencies, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { user } = authenticate(deps.store, req);
  requireAdmin(user);
  if (!deps.traffic) throw new SlipwayError(503, 'unavailable', 'This daemon collects no metrics.');
  const text = await deps.traffic.metrics.text();
  res.writeHead(200, { 'content-type': deps.traffic.metrics.contentType, 'cache-control': 'no-store' });
  res.end(text);
}
