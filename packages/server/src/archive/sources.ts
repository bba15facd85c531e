import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { parseCsv } from './csv.js';

/**
 * The importer reads only the copies in packages/server/archive-data (CC0 sources, see the
 * LICENSE and SOURCE_COMMIT files there), so a checkout works on its own.
 */
export const ARCHIVE_DATA_DIR = fileURLToPath(new URL('../../archive-data/', import.meta.url));
export const WC_YEARS = [2014, 2018, 2022, 2026] as const;

const Pair = Type.Tuple([Type.Integer(), Type.Integer()]);
const Goal = Type.Object({
  name: Type.String(),
  minute: Type.Union([Type.Integer(), Type.String()]),
  offset: Type.Optional(Type.Integer()),
  penalty: Type.Optional(Type.Boolean()),
  owngoal: Type.Optional(Type.Boolean()),
});
export type OfGoal = Static<typeof Goal>;
const Match = Type.Object({
  round: Type.String(),
  num: Type.Optional(Type.Integer()),
  date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' }),
  time: Type.Optional(Type.String()),
  team1: Type.String(),
  team2: Type.String(),
  score: Type.Optional(
    Type.Object({ ft: Type.Optional(Pair), ht: Type.Optional(Pair), et: Type.Optional(Pair), p: Type.Optional(Pair) }),
  ),
  goals1: Type.Optional(Type.Array(Goal)),
  goals2: Type.Optional(Type.Array(Goal)),
  group: Type.Optional(Type.String()),
  ground: Type.Optional(Type.String()),
});
export type OfMatch = Static<typeof Match>;
const MatchFile = Type.Object({ name: Type.String(), matches: Type.Array(Match) });

const TeamsOld = Type.Object({ teams: Type.Array(Type.Object({ name: Type.String(), code: Type.String() })) });
const TeamsNew = Type.Array(
  Type.Object({ name: Type.String(), fifa_code: Type.String(), name_normalised: Type.Optional(Type.String()) }),
);
const Stadium = Type.Object({
  name: Type.String(),
  city: Type.String(),
  timezone: Type.Optional(Type.String()),
  cc: Type.Optional(Type.String()),
  capacity: Type.Optional(Type.Integer()),
  coords: Type.Optional(Type.String()),
});
export type OfStadium = Static<typeof Stadium>;
const StadiumFile = Type.Object({ stadiums: Type.Array(Stadium) });
const SquadPlayer = Type.Object({
  number: Type.Optional(Type.Integer()),
  pos: Type.Optional(Type.String()),
  name: Type.String(),
  club: Type.Optional(Type.Object({ name: Type.String(), country: Type.Optional(Type.String()) })),
  date_of_birth: Type.Optional(Type.String()),
});
export type OfSquadPlayer = Static<typeof SquadPlayer>;
const SquadFile = Type.Array(Type.Object({ name: Type.String(), fifa_code: Type.String(), players: Type.Array(SquadPlayer) }));
export type OfSquads = Static<typeof SquadFile>;

function readJson<T extends TSchema>(rel: string, schema: T): Static<T> {
  const file = ARCHIVE_DATA_DIR + rel;
  const data: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
  if (Value.Check(schema, data)) return data;
  const first = Value.Errors(schema, data).First();
  throw new Error(`archive-data/${rel}: unexpected shape at ${first?.path ?? '?'}: ${first?.message ?? '?'}`);
}

const exists = (rel: string): boolean => fs.existsSync(ARCHIVE_DATA_DIR + rel);
const wc = (year: number, file: string): string => `openfootball-worldcup/${year}/${file}`;

export interface WorldCupSource {
  year: number;
  matches: OfMatch[];
  /** Team name → FIFA code as listed in that year's teams file (none for 2022). */
  teams: { name: string; code: string; alt?: string }[];
  stadiums: OfStadium[];
  squads: OfSquads | null;
}

export function loadWorldCup(year: number): WorldCupSource {
  const matches = readJson(wc(year, 'worldcup.json'), MatchFile).matches;
  let teams: WorldCupSource['teams'] = [];
  if (exists(wc(year, 'worldcup.teams.json'))) {
    const raw = readJson(wc(year, 'worldcup.teams.json'), Type.Union([TeamsOld, TeamsNew]));
    teams = Array.isArray(raw)
      ? raw.map((t) => ({ name: t.name, code: t.fifa_code, alt: t.name_normalised }))
      : raw.teams.map((t) => ({ name: t.name, code: t.code }));
  }
  const stadiums = readJson(wc(year, 'worldcup.stadiums.json'), StadiumFile).stadiums;
  const squads = exists(wc(year, 'worldcup.squads.json')) ? readJson(wc(year, 'worldcup.squads.json'), SquadFile) : null;
  return { year, matches, teams, stadiums, squads };
}

export function readCsv(name: string): Record<string, string>[] {
  return parseCsv(fs.readFileSync(`${ARCHIVE_DATA_DIR}international-results/${name}`, 'utf8'));
}

export function sourceCommit(folder: 'openfootball-worldcup' | 'international-results'): string {
  return fs.readFileSync(`${ARCHIVE_DATA_DIR}${folder}/SOURCE_COMMIT`, 'utf8').trim().split(/\s+/)[0] ?? '';
}
