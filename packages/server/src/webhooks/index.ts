import type { EventBus } from '../bus/bus.js';
import type { Config } from '../config.js';
import type { Clock } from '../domain/clock.js';
import type { Lookup } from './target-resolver.js';
import { secretBoxOf } from '../secrets/key.js';
import type { Db } from '../store/sql/db.js';
import type { EventLog } from '../store/events/events.js';
import { NotificationStore } from '../store/webhooks/notifications.js';
import { WebhookDeliveryStore } from '../store/webhooks/deliveries.js';
import { WebhookEndpointStore } from '../store/webhooks/endpoints.js';
import { WebhookDispatcher, type DispatcherOptions, type OwnerMailer } from './dispatcher.js';
import { WebhookManager, type WebhookStores } from './manage.js';
import { outboxHook, webhookable } from './outbox.js';
import { WebhookTester } from './test-event.js';

export interface Webhooks {
  store: WebhookStores;
  dispatcher: WebhookDispatcher;
  /** The rules behind the /v1/webhooks API. */
  manage: WebhookManager;
  /** Test sends (POST /v1/webhooks/:id/test), outside the queue. */
  tester: WebhookTester;
}

export interface WebhookDeps {
  db: Db;
  config: Config;
  clock: Clock;
  events: EventLog;
  /**
   * Events committed anywhere in the cluster: a webhookable one means new deliveries, so the
   * dispatcher looks at once instead of at its next (idle, slower) poll.
   */
  bus?: EventBus;
  /** Set when SMTP is configured; without it owners see notifications through GET /v1/notifications only. */
  mailer?: OwnerMailer | null;
  /** DNS for target checks; tests point names at chosen addresses. */
  lookup?: Lookup;
  dispatcher?: DispatcherOptions;
}

/** Webhookable events this node appended whose batch the bus has not handed back yet: a bound, not a size. */
const OWN_EVENTS_MAX = 10_000;

/** Wires webhooks into the event log: confirmed events get their deliveries in the same transaction. */
export function createWebhooks(deps: WebhookDeps): Webhooks {
  const box = secretBoxOf(deps.config);
  const store: WebhookStores = {
    endpoints: new WebhookEndpointStore(deps.db, box),
    deliveries: new WebhookDeliveryStore(deps.db),
    notifications: new NotificationStore(deps.db),
  };
  const bus = deps.bus;
  const lookup = deps.lookup ?? deps.dispatcher?.lookup;
  const dispatcher = new WebhookDispatcher(
    { db: deps.db, config: deps.config, clock: deps.clock, mailer: deps.mailer ?? null },
    {
      ...(bus ? { othersAnnounced: () => bus.hearsOthers() } : {}),
      ...deps.dispatcher,
      lookup,
    },
  );
  deps.events.onAppend(outboxHook(deps.clock, () => dispatcher.notify()));
  // A webhookable event appended elsewhere may have deliveries for this node's worker to claim,
  // unless its node says its outbox wrote none. One appended here woke it already if its outbox
  // wrote any (after the commit), so its own batch on the bus does not: a claim that finds
  // nothing still costs the database a transaction.
  const appendedHere = new Set<number>();
  deps.events.afterAppend((stored) => {
    if (appendedHere.size > OWN_EVENTS_MAX) appendedHere.clear();
    for (const e of stored) if (webhookable(e.event)) appendedHere.add(e.seq);
  });
  bus?.subscribe((events) => {
    let elsewhere = false;
    for (const e of events) if (webhookable(e.event) && !appendedHere.delete(e.seq) && e.webhooks !== false) elsewhere = true;
    if (elsewhere) dispatcher.notify();
  });
  const tester = new WebhookTester(deps.clock, box, { timeoutMs: deps.config.webhookTimeoutMs, allowPrivate: deps.config.webhookAllowPrivate, lookup });
  const manage = new WebhookManager(
    store,
    deps.config,
    deps.clock,
    { enqueued: () => dispatcher.notify(), changed: (id) => dispatcher.forget(id) },
    tester,
    deps.lookup,
  );
  return { store, dispatcher, manage, tester };
}

export type { WebhookDispatcher, DispatcherOptions, OwnerMailer } from './dispatcher.js';
export type { WebhookEndpoint, WebhookDelivery, WebhookAttempt, Notification } from '@svc/schema';
