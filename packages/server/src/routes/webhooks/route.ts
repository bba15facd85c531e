import type { WebhookManager } from '../../webhooks/manage.js';
import type { App } from '../types.js';

/** What the webhook routes use: the management rules of webhooks/manage.ts, nothing else. */
export interface WebhookRouteDeps {
  manage: WebhookManager;
}

/** One webhook operation; `webhookRoutes` registers them all in one encapsulated plugin. */
export type WebhookRoute = (app: App, deps: WebhookRouteDeps) => void;
