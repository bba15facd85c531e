import type { ReporterRoute } from './route.js';
import { listReporters } from './schema.js';

const bool = (v: 'true' | 'false' | undefined): boolean | undefined => (v === undefined ? undefined : v === 'true');

export const listReportersRoute: ReporterRoute = (app, { reporters }) => {
  app.get('', { schema: listReporters, config: { product: 'admin' } }, async (request) => {
    const { key, flagged, suspended, limit = 100, cursor } = request.query;
    return reporters.list({ keyId: key, flagged: bool(flagged), suspended: bool(suspended), limit, cursor });
  });
};
