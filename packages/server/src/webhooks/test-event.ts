import { EVENT_SCHEMA, type WebhookTestEvent, type WebhookTestResult } from '@svc/schema';
import { isoTime, type Clock } from '../domain/clock.js';
import { conflict } from '../domain/errors.js';
import { randomBase62 } from '../domain/keys.js';
import { signPayload } from '../domain/webhooks/signature.js';
import type { Lookup } from './target-resolver.js';
import { USER_AGENT } from './dispatcher.js';
import type { SecretBox } from '../domain/secrets/sealed.js';
import { openEndpointSecrets, signingSecrets } from './directory.js';
import { newDeliveryIds } from '../store/webhooks/deliveries.js';
import type { EndpointRow } from '../store/webhooks/rows.js';
import { WebhookSender } from './sender.js';

/** What one test send did: the attempt's outcome, as the attempt log would show it. */
export type TestSendResult = WebhookTestResult;

export const TEST_TOPIC = 'event.test';
/** Test ids never collide with stored events (`evt_<digits>`). */
export const newTestEventId = (): string => `evt_test_${randomBase62(20)}`;

/**
 * Sends one signed `test` event to an endpoint at once, outside the delivery queue: no delivery
 * row, no retry, no effect on the endpoint's health or auto-disable window. The request is
 * exactly a real delivery's (same headers, same signature, same target checks and timeout), so
 * a receiver that accepts it accepts deliveries. One test per endpoint at a time per process.
 */
export class WebhookTester {
  private readonly sender: WebhookSender;
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly clock: Clock,
    private readonly box: SecretBox,
    opts: { timeoutMs: number; allowPrivate: boolean; lookup?: Lookup },
  ) {
    this.sender = new WebhookSender({ ...opts, connectionsPerEndpoint: 1 });
  }

  async send(ep: EndpointRow): Promise<TestSendResult> {
    if (this.inFlight.has(ep.id)) throw conflict('test_in_progress', `A test event to webhook endpoint ${ep.id} is already on its way; wait for its answer.`);
    this.inFlight.add(ep.id);
    try {
      const at = this.clock.now();
      const event: WebhookTestEvent = { id: newTestEventId(), type: 'test', ts: isoTime(at), schema: EVENT_SCHEMA };
      const [deliveryId] = newDeliveryIds(1, at);
      const body = JSON.stringify(event);
      const secrets = signingSecrets({ ...openEndpointSecrets(this.box, ep), previousSecretUntil: ep.previous_secret_until }, at);
      const r = await this.sender.send({
        endpointId: ep.id,
        url: ep.url,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-svc-topic': TEST_TOPIC,
          'x-svc-event-id': event.id,
          'x-svc-delivery-id': deliveryId,
          'x-svc-attempt': '1',
          'x-svc-signature': signPayload(secrets, body, Math.floor(at / 1000)),
        },
      });
      return {
        endpoint_id: ep.id,
        event_id: event.id,
        delivery_id: deliveryId,
        delivered: r.statusCode !== null && r.statusCode >= 200 && r.statusCode < 300 && r.error === null,
        status_code: r.statusCode,
        duration_ms: r.durationMs,
        response_excerpt: r.excerpt,
        error: r.error,
        sent_at: event.ts,
      };
    } finally {
      this.inFlight.delete(ep.id);
    }
  }

  close(): Promise<void> {
    return this.sender.close();
  }
}
