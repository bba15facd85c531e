import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { StoredEvent } from '../store/events/events.js';

/** Request durations: most answers take a few milliseconds, exports and long polls seconds. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Crowd confirmation: a quorum of reporters within the 30 s window (docs/consensus.md). */
const CONFIRMATION_BUCKETS = [0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 45, 60];

/** What a gauge reads when Prometheus scrapes: the value now, never a copy kept up to date. */
export type Reading = () => number | Promise<number>;

/**
 * The service's Prometheus metrics (names and labels in docs/operations.md). One registry per
 * app, never prom-client's global one, so several apps in one process (tests, benchmarks) each
 * count only their own traffic. Labels are bounded sets: the route is the route pattern, never
 * the URL.
 */
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly events: Counter<'sport' | 'tier' | 'type'>;
  readonly webhookDeliveries: Counter<'outcome'>;
  readonly webhookClaims: Counter<'result'>;
  readonly confirmationLatency: Histogram<'sport'>;
  private streamConnections: Reading = () => 0;
  private webhookPending: Reading = () => 0;
  private settledDaysBytes: Reading = () => 0;

  constructor(opts: { processDefaults?: boolean } = {}) {
    const registers = [this.registry];
    if (opts.processDefaults ?? true) collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'svc_http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status code.',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.events = new Counter({
      name: 'svc_events_total',
      help: 'Events appended to the event log by this node, by sport, tier and type.',
      labelNames: ['sport', 'tier', 'type'],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'svc_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed, gone, cancel).',
      labelNames: ['outcome'],
      registers,
    });
    this.webhookClaims = new Counter({
      name: 'svc_webhook_claims_total',
      help: 'Claims of due webhook deliveries this node made, by whether they found any (found, empty).',
      labelNames: ['result'],
      registers,
    });
    this.confirmationLatency = new Histogram({
      name: 'svc_confirmation_latency_seconds',
      help: 'Time from the first crowd report of a play to its confirmed event, by sport.',
      labelNames: ['sport'],
      buckets: CONFIRMATION_BUCKETS,
      registers,
    });
    const read = (reading: () => Reading) =>
      async function (this: Gauge) {
        this.set(await reading()());
      };
    new Gauge({
      name: 'svc_stream_connections',
      help: 'Open WebSocket stream connections on this node.',
      registers,
      collect: read(() => this.streamConnections),
    });
    new Gauge({
      name: 'svc_webhook_pending',
      help: 'Webhook deliveries waiting for an attempt (the whole queue, shared by every worker).',
      registers,
      collect: read(() => this.webhookPending),
    });
    new Gauge({
      name: 'svc_settled_days_bytes',
      help: 'Memory held by the settled days (lists answered without SQL), as counted against SVC_SETTLED_DAYS_MB.',
      registers,
      collect: read(() => this.settledDaysBytes),
    });
  }

  /** Where the gauges read their values from (the stream gateway, the delivery queue, the settled days). */
  readFrom(readings: { streamConnections?: Reading; webhookPending?: Reading; settledDaysBytes?: Reading }): void {
    if (readings.streamConnections) this.streamConnections = readings.streamConnections;
    if (readings.webhookPending) this.webhookPending = readings.webhookPending;
    if (readings.settledDaysBytes) this.settledDaysBytes = readings.settledDaysBytes;
  }

  /** Counts committed events; a crowd-confirmed score also records its confirmation latency. */
  observeEvents(stored: readonly StoredEvent[]): void {
    for (const { event } of stored) {
      this.events.inc({ sport: event.sport, tier: event.tier, type: event.type });
      // Same rule as the status page: official confirmations (no reporters) have no latency to speak of.
      if (event.tier === 'confirmed' && event.type === 'score' && event.confidence.reporters > 0) {
        this.confirmationLatency.observe({ sport: event.sport }, event.confidence.latency_ms / 1000);
      }
    }
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status) }, seconds);
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
