/**
 * Writes clients/python/src/svc_client/types.py, the Python client's records as TypedDicts, from
 * the TypeBox schemas of packages/schema: the one place the wire shapes are defined.
 *
 *   node --import tsx clients/python/scripts/generate_types.ts            # rewrite types.py
 *   node --import tsx clients/python/scripts/generate_types.ts --stdout   # print it instead
 *
 * clients/python/tests/test_generated.py fails when the checked-in file differs from the output.
 * What the schemas cannot say (the Python names, the docstrings, fields kept open on purpose)
 * is in the tables below.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as S from '../../../packages/schema/src/index.ts';

interface JsonSchema {
  type?: string;
  const?: string | number | boolean;
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
}

const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'src', 'svc_client', 'types.py');

/** Literal aliases, matched by their set of values wherever a union of those literals occurs. */
const ALIASES: [name: string, values: readonly string[], doc: string][] = [
  ['Tier', S.TIERS, 'How sure an event is: a first report (provisional) or the consensus (confirmed).'],
  ['CompetitionStatus', S.COMPETITION_STATUSES, 'Where a competition or game stands.'],
  ['DeliveryStatus', S.DELIVERY_STATUSES, 'Where a webhook delivery stands.'],
  ['EndpointStatus', S.ENDPOINT_STATUSES, 'Whether a webhook endpoint receives deliveries.'],
  ['ExportEntity', S.EXPORT_ENTITIES, 'What an export streams.'],
  ['ExportFormat', S.EXPORT_FORMATS, 'How an export is written: JSON lines, CSV or Parquet.'],
  ['ReplayStatus', S.REPLAY_STATUSES, 'Where a sandbox replay stands.'],
];

interface Record_ {
  name: string;
  schema: JsonSchema;
  doc: string;
  /** A record whose fields this one repeats first; the class inherits from it. */
  base?: string;
}

/** The records in the order they are written; objects nested in them come before them. */
const RECORDS: Record_[] = [
  { name: 'Team', schema: S.Team, doc: 'A team. ``id`` is ``team:<league>:<code>``; ``code`` is what events carry as ``team``.' },
  { name: 'Player', schema: S.Player, doc: 'A player, ``id`` ``player:<league>:<slug>``.' },
  { name: 'RosterEntry', schema: S.RosterEntry, doc: "A player's place in a team for a season." },
  { name: 'Geo', schema: S.Geo, doc: 'A position in degrees.' },
  { name: 'Venue', schema: S.Venue, doc: 'A venue; ``id`` is a slug such as ``lusail-stadium``.' },
  { name: 'Season', schema: S.Season, doc: 'A season ``<league>_<year>`` with its counts of competitions and events.' },
  { name: 'Competitor', schema: S.Competitor, doc: 'One side of a competition.' },
  { name: 'Competition', schema: S.Competition, doc: 'A competition ``<sport>_<league>_<n>``; its game (team sports) is ``<sport>_<n>``.' },
  { name: 'Eligibility', schema: S.Eligibility, doc: 'Which products see the game\'s events now, and whether it takes crowd reports.' },
  { name: 'Game', schema: S.Game, doc: 'A team-sport competition seen as a game, ``<sport>_<n>``.' },
  { name: 'Period', schema: S.Period, doc: 'A period of play: ``unit`` (half, quarter, round, ...), its number and label.' },
  { name: 'Play', schema: S.Play, doc: 'An official play (``schema`` ``svc.play.v1``).' },
  { name: 'PlayInput', schema: S.PlayInput, doc: 'An official play to append with ``svc.plays.create``; ``event_type`` ``final`` ends the game.' },
  {
    name: 'PlayWithdrawalInput',
    schema: S.PlayWithdrawalInput,
    doc: 'A correction for ``svc.plays.create`` (or ``svc.plays.withdraw``): withdraws the confirmed score ``withdraws`` names, its play (``seq``) or its event (``evt_…``).',
  },
  { name: 'StandingsRow', schema: S.StandingsRow, doc: 'One competitor in a standings table; soccer adds ``drawn`` and ``points``, basketball ``pct`` and ``games_behind``.' },
  { name: 'StandingsTable', schema: S.StandingsTable, doc: 'One table: a tournament group (``Group A``) or the whole season (``group`` ``None``).' },
  { name: 'Standings', schema: S.Standings, doc: 'The answer of ``GET /v1/standings``: the tables and the time of the newest play or event they count.' },
  { name: 'BoxScorePeriod', schema: S.BoxScorePeriod, doc: "A competitor's points in one period of play." },
  { name: 'BoxScoreCompetitor', schema: S.BoxScoreCompetitor, doc: 'One side of a box score: its line score and, after a shoot-out, its kicks scored.' },
  { name: 'BoxScorePlayer', schema: S.BoxScorePlayer, doc: "A player's line: points for their side (own goals and shoot-out kicks left out) and plays by type." },
  { name: 'BoxScore', schema: S.BoxScore, doc: 'A box score built from the official plays, live while the game is.' },
  { name: 'Leader', schema: S.Leader, doc: 'A place among a season\'s leaders; ties share a rank.' },
  { name: 'PlayerSeasonStats', schema: S.PlayerSeasonStats, doc: "A player's totals in one season." },
  { name: 'Confidence', schema: S.Confidence, doc: 'How sure svc is: share of agreeing reporters, their number, time to confirmation, and the calibrated chance the play is real (``probability``; official events 1).' },
  {
    name: 'Event',
    schema: S.ScoreEvent,
    doc: 'A scoring event in its REST and export form: every field of ``svc.event.v1``.\n\nA confirmed event names its provisional one in ``provisional_id``; a retraction names the\nretracted provisional in ``retracted_id``.',
  },
  {
    name: 'StreamEvent',
    schema: S.WireScoreEvent,
    doc: 'An event as the stream and webhooks carry it (a subset of :class:`Event` plus ``id``).\n\nA REST :class:`Event` has every one of these fields, so a handler written for\n``StreamEvent`` reads both: that is what makes a backtest replay the live feed.',
  },
  {
    name: 'StatusEvent',
    schema: S.StatusEvent,
    doc: 'A competition\'s status changed (``type`` ``status``): the same form in REST, the export, the stream\nand webhooks. ``previous_status`` is where it was; ``reason`` why, when the source said.',
  },
  { name: 'StatusChangeInput', schema: S.StatusChangeInput, doc: 'A status change for ``svc.competitions.change_status``; ``start_time`` when a postponed game is scheduled again.' },
  {
    name: 'Change',
    schema: S.Change,
    doc: 'One entry of the change feed (``GET /v1/changes``): a competition created or updated, or an event\ncreated, with the object as REST returns it now.',
  },
  { name: 'WebhookTestEvent', schema: S.WebhookTestEvent, doc: 'The body of a test send (``POST /v1/webhooks/{id}/test``): ``type`` ``test``, no score.' },
  { name: 'Me', schema: S.Me, doc: 'The calling key: its plan, products and sport/league allow-lists (``None`` = all).' },
  { name: 'ReportInput', schema: S.ReportInput, doc: 'A crowd report. ``ref`` makes it idempotent per key; ``observed_at`` is ISO 8601; ``reporter`` names the end user it comes from.' },
  { name: 'ReportResult', schema: S.ReportResult, doc: 'The stored report and the event it started or joined (``None`` when it started none).' },
  { name: 'WebhookEndpoint', schema: S.WebhookEndpoint, doc: 'A webhook endpoint ``we_…``.' },
  { name: 'WebhookEndpointWithSecret', schema: S.WebhookEndpointWithSecret, base: 'WebhookEndpoint', doc: 'An endpoint with its signing secret, returned only by create and rotate.' },
  { name: 'WebhookDelivery', schema: S.WebhookDelivery, doc: 'One event to one endpoint, ``dlv_…``; the receiver dedups on ``event_id``.' },
  { name: 'DeliveryAttempt', schema: S.WebhookAttempt, doc: 'One attempt of a delivery.' },
  { name: 'WebhookDeliveryWithAttempts', schema: S.WebhookDeliveryWithAttempts, base: 'WebhookDelivery', doc: 'A delivery with its attempt log.' },
  { name: 'ReplayResult', schema: S.ReplayResult, doc: 'How many new deliveries a replay created, and their ids.' },
  { name: 'DeletedWebhook', schema: S.DeletedWebhook, doc: 'The answer of a delete.' },
  { name: 'WebhookTestResult', schema: S.WebhookTestResult, doc: 'The outcome of the one signed test send of ``POST /v1/webhooks/{id}/test``.' },
  { name: 'Notification', schema: S.Notification, doc: 'A notice for the key, e.g. ``webhook_endpoint.disabled``.' },
  {
    name: 'StreamToken',
    schema: S.StreamToken,
    doc: 'A stream token: what a back end hands a browser page so it opens ``GET /v1/stream`` with\n``?token=`` instead of an API key (docs/stream.md "Stream tokens"). Shown only once.',
  },
  {
    name: 'Replay',
    schema: S.Replay,
    doc: 'A sandbox replay ``rpl_…``: a final game (``source_game_id``) played again as a game of its own\n(``game_id``) that only the key which created it sees.',
  },
  {
    name: 'Reporter',
    schema: S.Reporter,
    doc: 'A voter of the crowd ``rep_…`` as an operator sees it (product ``admin``): a key\'s own voice\n(``reporter`` ``None``) or an end user the key names, with its track record, weight and flag.',
  },
];

/** Objects written inline in a record's schema, named by where they sit. */
const INLINE_NAMES: Record<string, [name: string, doc: string]> = {
  'RosterEntry.player': ['RosterPlayer', "The player's name, embedded in a roster entry."],
  'Me.rate_limit': ['RateLimitInfo', 'Requests per window of the key.'],
  'Me.stream_connections': ['StreamConnections', 'Stream connections the key may hold at once.'],
};

/**
 * Fields typed wider than the schema on purpose. Event kinds are open: a newer server adds kinds
 * that consumers must ignore, and a webhook test send is ``type: "test"``; as a Literal, a
 * comparison with any other kind would not type-check.
 */
const OPEN_FIELDS: Record<string, string> = {
  'Event.type': '``score`` or ``score_retracted`` today; read kinds you do not know as "ignore".',
  'StreamEvent.type': '``score`` or ``score_retracted`` today; read kinds you do not know as "ignore".',
};

const PYTHON_KEYWORDS = new Set(['from', 'class', 'def', 'global', 'import', 'in', 'is', 'lambda', 'not', 'or', 'and', 'pass', 'return', 'with', 'yield']);

const typing = new Set<string>();
const written = new Map<string, string>(); // class name → its body, to reuse a class for an identical inline object
const out: string[] = [];

function literal(value: string | number | boolean): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value);
}

function pyType(schema: JsonSchema, path: string): string {
  if (schema.const !== undefined) {
    typing.add('Literal');
    return `Literal[${literal(schema.const)}]`;
  }
  if (schema.anyOf) {
    const options = schema.anyOf.filter((s) => s.type !== 'null');
    const nullable = options.length < schema.anyOf.length;
    let inner: string;
    if (options.every((s) => typeof s.const === 'string')) {
      const values = options.map((s) => s.const as string);
      const alias = ALIASES.find(([, v]) => v.length === values.length && v.every((x) => values.includes(x)));
      typing.add('Literal');
      inner = alias ? alias[0] : `Literal[${values.map(literal).join(', ')}]`;
    } else if (options.length === 1) {
      inner = pyType(options[0]!, path);
    } else {
      typing.add('Union');
      inner = `Union[${options.map((s) => pyType(s, path)).join(', ')}]`;
    }
    if (!nullable) return inner;
    typing.add('Optional');
    return `Optional[${inner}]`;
  }
  switch (schema.type) {
    case 'string':
      return 'str';
    case 'integer':
      return 'int';
    case 'number':
      return 'float';
    case 'boolean':
      return 'bool';
    case 'null':
      return 'None';
    case 'array':
      typing.add('List');
      return `List[${pyType(schema.items!, path)}]`;
    case 'object':
      if (schema.patternProperties) {
        const [value] = Object.values(schema.patternProperties);
        typing.add('Dict');
        return `Dict[str, ${pyType(value!, path)}]`;
      }
      return inlineClass(schema, path);
  }
  throw new Error(`${path}: no Python type for ${JSON.stringify(schema)}`);
}

/** The class of an object nested in a record: an identical one already written, else a named one. */
function inlineClass(schema: JsonSchema, path: string): string {
  const named = RECORDS.find((r) => r.schema === schema);
  if (named) return named.name;
  const fields = fieldLines(schema, path);
  const body = JSON.stringify(fields);
  for (const [name, existing] of written) if (existing === body) return name;
  const entry = INLINE_NAMES[path];
  if (!entry) throw new Error(`${path}: an inline object without a name; add it to INLINE_NAMES`);
  writeClass(entry[0], schema, entry[1]);
  return entry[0];
}

interface Field {
  name: string;
  type: string;
  required: boolean;
  comment?: string;
}

function fieldLines(schema: JsonSchema, owner: string): Field[] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, prop]) => {
    const path = `${owner}.${name}`;
    const open = OPEN_FIELDS[path];
    const description = open ?? prop.description ?? prop.anyOf?.find((s) => s.description)?.description;
    const field: Field = { name, type: open ? 'str' : pyType(prop, path), required: required.has(name) };
    if (description) field.comment = description.replace(/\s+/g, ' ');
    return field;
  });
}

function classBlock(name: string, base: string, doc: string | undefined, fields: Field[]): string[] {
  const lines = [`class ${name}(${base}):`];
  if (doc) lines.push(...docstring(doc));
  if (doc && fields.length) lines.push('');
  for (const f of fields) {
    if (f.comment) lines.push(`    #: ${f.comment}`);
    lines.push(`    ${f.name}: ${f.type}`);
  }
  if (!doc && !fields.length) lines.push('    pass');
  return lines;
}

/** The functional form, for field names that are Python keywords (``from``). */
function functionalBlock(name: string, fields: Field[], total: boolean): string[] {
  const lines = [`${name} = TypedDict(`, `    ${JSON.stringify(name)},`, '    {'];
  for (const f of fields) lines.push(`        ${JSON.stringify(f.name)}: ${f.type},${f.comment ? `  # ${f.comment}` : ''}`);
  lines.push('    },', `    total=${total ? 'True' : 'False'},`, ')');
  return lines;
}

function docstring(doc: string): string[] {
  const lines = doc.split('\n');
  if (lines.length === 1) return [`    """${doc}"""`];
  return [`    """${lines[0]}`, ...lines.slice(1).map((l) => (l ? `    ${l}` : '')), '    """'];
}

function writeClass(name: string, schema: JsonSchema, doc: string, baseName?: string): void {
  let fields = fieldLines(schema, name);
  written.set(name, JSON.stringify(fields));
  let base = 'TypedDict';
  if (baseName) {
    const inherited = JSON.parse(written.get(baseName) ?? 'null') as Field[] | null;
    if (!inherited || JSON.stringify(fields.slice(0, inherited.length)) !== JSON.stringify(inherited)) {
      throw new Error(`${name} does not start with the fields of ${baseName}`);
    }
    fields = fields.slice(inherited.length);
    base = baseName;
  }
  const optional = fields.filter((f) => !f.required);
  if (optional.length) {
    if (baseName) throw new Error(`${name}: optional fields on a derived record are not supported`);
    // Python 3.9 has no NotRequired: the optional fields live in a total=False base class.
    const optionalName = `_${name}Optional`;
    const keywords = optional.some((f) => PYTHON_KEYWORDS.has(f.name));
    out.push(...(keywords ? functionalBlock(optionalName, optional, false) : classBlock(optionalName, 'TypedDict, total=False', undefined, optional)), '', '');
    base = optionalName;
  }
  const required = fields.filter((f) => f.required);
  if (required.some((f) => PYTHON_KEYWORDS.has(f.name))) throw new Error(`${name}: a required keyword field is not supported`);
  out.push(...classBlock(name, base, doc, required), '', '');
}

for (const r of RECORDS) writeClass(r.name, r.schema, r.doc, r.base);

const names = [
  'EVENT_SCHEMA',
  'PLAY_SCHEMA',
  ...ALIASES.map(([n]) => n),
  ...[...written.keys()],
  'AnyEvent',
  'AnyStreamEvent',
  'WebhookEvent',
  'ExportRecord',
];

const header = [
  '# Generated by clients/python/scripts/generate_types.ts from packages/schema: do not edit.',
  '"""The records of the svc API, as :class:`typing.TypedDict` classes.',
  '',
  "Every record keeps the API's snake_case field names, so a record is the decoded JSON object",
  'itself: ``team["name"]``, ``event["confidence"]["agreement"]``. Fields a record may omit are',
  'declared in a ``total=False`` base class (Python 3.9 has no ``NotRequired``). The field',
  'meanings follow the API reference served at ``/docs`` and ``/v1/openapi.json``.',
  '"""',
  'from __future__ import annotations',
  '',
  `from typing import ${[...new Set([...typing, 'Literal', 'TypedDict', 'Union'])].sort().join(', ')}`,
  '',
  '__all__ = [',
  ...names.map((n) => `    ${JSON.stringify(n)},`),
  ']',
  '',
  '#: The event schema this client reads. Any other ``schema`` raises :class:`~svc_client.SchemaMismatchError`.',
  `EVENT_SCHEMA = ${literal(S.EVENT_SCHEMA)}`,
  '#: The schema of official plays.',
  `PLAY_SCHEMA = ${literal(S.PLAY_SCHEMA)}`,
  '',
  ...ALIASES.flatMap(([name, values, doc]) => [`#: ${doc}`, `${name} = Literal[${values.map(literal).join(', ')}]`]),
  '',
  '',
];

const footer = [
  '#: Any event of a REST list or an export: a scoring :class:`Event` or a :class:`StatusEvent`; tell them apart by ``type``.',
  'AnyEvent = Union[Event, StatusEvent]',
  '#: Any event of the stream: a scoring :class:`StreamEvent` or a :class:`StatusEvent`; tell them apart by ``type``.',
  'AnyStreamEvent = Union[StreamEvent, StatusEvent]',
  '#: A webhook body: the stream form of an event (``type`` ``test`` for a test send, see :class:`WebhookTestEvent`).',
  'WebhookEvent = Union[StreamEvent, StatusEvent]',
  '#: One line of an export: an event, a play or a competition depending on ``entity``.',
  'ExportRecord = Union[Event, StatusEvent, Play, Competition]',
];

const text = [...header, ...out, ...footer].join('\n') + '\n';
if (process.argv.includes('--stdout')) process.stdout.write(text);
else writeFileSync(OUT, text);
