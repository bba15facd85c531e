import type { RoutePlugin } from '../types.js';
import type { WebhookRouteDeps } from './route.js';
import { createWebhookRoute } from './create.js';
import { deleteWebhookRoute } from './delete.js';
import { listDeliveriesRoute } from './deliveries.js';
import { getDeliveryRoute } from './delivery.js';
import { enableWebhookRoute } from './enable.js';
import { getWebhookRoute } from './get.js';
import { listWebhooksRoute } from './list.js';
import { replayWebhookRoute } from './replay.js';
import { rotateSecretRoute } from './rotate-secret.js';
import { testWebhookRoute } from './test.js';
import { updateWebhookRoute } from './update.js';

/** /v1/webhooks: product `live`; a key sees and changes only its own endpoints. */
export const webhookRoutes: RoutePlugin<WebhookRouteDeps> = async (app, deps) => {
  for (const route of [
    createWebhookRoute,
    listWebhooksRoute,
    getWebhookRoute,
    updateWebhookRoute,
    deleteWebhookRoute,
    listDeliveriesRoute,
    getDeliveryRoute,
    replayWebhookRoute,
    enableWebhookRoute,
    rotateSecretRoute,
    testWebhookRoute,
  ]) {
    route(app, deps);
  }
};
