import { Type, type TSchema } from '@sinclair/typebox';
import { ErrorBody } from '@svc/schema';

export { Cursor, DateParam, LeagueParam, Limit, PlayerIdParam, SeasonParam, SportParam, StatusParam, TeamIdParam, pageQuery } from '@svc/schema';

/** The `{id}` of a path, described for the API reference. */
export const idParams = (description: string) => Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description }) }, { additionalProperties: false });

export const TeamIdParams = idParams('The team’s id, `team:<league>:<code>` (e.g. `team:wc:ARG`).');
export const PlayerIdParams = idParams('The player’s id, `player:<league>:<slug>` (e.g. `player:wc:lionel-messi`).');
export const VenueIdParams = idParams('The venue’s id, a slug (e.g. `lusail-stadium`).');
export const CompetitionIdParams = idParams('The competition’s id, `<sport>_<league>_<n>` (e.g. `soccer_wc_21728`).');
export const GameIdParams = idParams('The game’s id, `<sport>_<n>` (e.g. `soccer_21728`).');
export const WebhookIdParams = idParams('The webhook endpoint’s id (`we_…`).');

export const errorResponses: Record<number, TSchema> = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  429: ErrorBody,
};
