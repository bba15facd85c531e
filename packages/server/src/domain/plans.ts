/** Plans: requests per minute, stream connections, running exports and webhook attempts. */
export interface Plan {
  name: string;
  requestsPerMinute: number;
  streamConnections: number;
  /** Bulk exports one key may run at once, across every node; Infinity: not counted. */
  concurrentExports: number;
  webhookMaxAttempts: number;
  webhookEndpoints: number;
  /** Unmetered plans skip the rate counter entirely. */
  metered: boolean;
}

export const PLANS: Record<string, Plan> = {
  free: { name: 'free', requestsPerMinute: 60, streamConnections: 2, concurrentExports: 1, webhookMaxAttempts: 15, webhookEndpoints: 2, metered: true },
  pro: { name: 'pro', requestsPerMinute: 1_000, streamConnections: 25, concurrentExports: 4, webhookMaxAttempts: 15, webhookEndpoints: 20, metered: true },
  enterprise: { name: 'enterprise', requestsPerMinute: 10_000, streamConnections: 500, concurrentExports: 16, webhookMaxAttempts: 15, webhookEndpoints: 200, metered: true },
  internal: { name: 'internal', requestsPerMinute: 1_000_000_000, streamConnections: 1_000_000, concurrentExports: Number.POSITIVE_INFINITY, webhookMaxAttempts: 15, webhookEndpoints: 10_000, metered: false },
};

export const PLAN_NAMES = Object.keys(PLANS);

export function planOf(name: string): Plan {
  const plan = PLANS[name];
  if (!plan) throw new Error(`unknown plan '${name}'`);
  return plan;
}
