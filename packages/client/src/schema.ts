/**
 * The client's one door to `@svc/schema`: every record, event, input and query type the client
 * uses comes from there. `scripts/build.ts` replaces this module in `dist/` by a self-contained
 * copy (the types printed in full, the values below as literals), so the published package
 * imports neither `@svc/schema` nor TypeBox.
 */
export type * from '@svc/schema';
export { EVENT_SCHEMA, PLAY_SCHEMA, STREAM_CLOSE_CODES } from '@svc/schema';
