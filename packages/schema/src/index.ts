/**
 * Every shape a client of svc sees, defined once: records, events in each of their forms,
 * stream frames and messages, webhook bodies, the error body with its closed code catalogue,
 * and id formats. Fastify validates and serialises with these, the OpenAPI and AsyncAPI
 * documents are generated from them, and the clients' types follow them.
 */
export * from './records.js';
export * from './events.js';
export * from './webhooks.js';
export * from './replays.js';
export * from './stream.js';
export * from './errors.js';
export * from './ids.js';
export * from './params.js';
export * from './standings.js';
export * from './reporters.js';
