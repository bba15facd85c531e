/** Plans: requests per minute, stream connections and webhook attempts. */
export interface Plan {
  name: string;
  requestsPerMinute: number;
  streamConnections: number;
  webhookMaxAttempts: number;
  webhookEndpoints: number;
  /** Unmetered plans skip the rate counter entirely. */
  metered: boolean;
}

export const PLANS: Record<string, Plan> = {
  free: { name: 'free', requestsPerMinute: 60, streamConnections: 2, webhookMaxAttempts: 15, webhookEndpoints: 2, metered: true },
  pro: { name: 'pro', requestsPerMinute: 1_000, streamConnections: 25, webhookMaxAttempts: 15, webhookEndpoints: 20, metered: true },
  enterprise: { name: 'enterprise', requestsPerMinute: 10_000, streamConnections: 500, webhookMaxAttempts: 15, webhookEndpoints: 200, metered: true },
  internal: { name: 'internal', requestsPerMinute: 1_000_000_000, streamConnections: 1_000_000, webhookMaxAttempts: 15, webhookEndpoints: 10_000, metered: false },
};

export const PLAN_NAMES = Object.keys(PLANS);

export function planOf(name: string): Plan {
  const plan = PLANS[name];
  if (!plan) throw new Error(`unknown plan '${name}'`);
  return plan;
}
