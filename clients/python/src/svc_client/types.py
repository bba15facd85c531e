"""The records of the svc API, as :class:`typing.TypedDict` classes.

Every record keeps the API's snake_case field names, so a record is the decoded JSON object
itself: ``team["name"]``, ``event["confidence"]["agreement"]``. Fields a record may omit are
declared in a ``total=False`` base class (Python 3.9 has no ``NotRequired``). The field
meanings follow the API reference served at ``/docs`` and ``/v1/openapi.json``.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Union

from typing import Literal, TypedDict

__all__ = [
    "EVENT_SCHEMA",
    "PLAY_SCHEMA",
    "Tier",
    "CompetitionStatus",
    "DeliveryStatus",
    "ExportEntity",
    "Team",
    "Player",
    "RosterEntry",
    "RosterPlayer",
    "Geo",
    "Venue",
    "Season",
    "Competitor",
    "Competition",
    "Eligibility",
    "Game",
    "Period",
    "Play",
    "PlayInput",
    "Confidence",
    "Event",
    "StreamEvent",
    "WebhookEvent",
    "Me",
    "RateLimitInfo",
    "StreamConnections",
    "ReportInput",
    "ReportResult",
    "WebhookEndpoint",
    "WebhookEndpointWithSecret",
    "WebhookDelivery",
    "DeliveryAttempt",
    "WebhookDeliveryWithAttempts",
    "ReplayResult",
    "DeletedWebhook",
    "WebhookTestResult",
    "Notification",
    "ExportRecord",
]

#: The event schema this client reads. Any other ``schema`` raises :class:`~svc_client.SchemaMismatchError`.
EVENT_SCHEMA = "svc.event.v1"
#: The schema of official plays.
PLAY_SCHEMA = "svc.play.v1"

Tier = Literal["provisional", "confirmed"]
CompetitionStatus = Literal["scheduled", "live", "final"]
DeliveryStatus = Literal["pending", "delivered", "failed", "disabled"]
ExportEntity = Literal["events", "plays", "competitions"]


class Team(TypedDict):
    """A team. ``id`` is ``team:<league>:<code>``; ``code`` is what events carry as ``team``."""

    id: str
    sport: str
    league: str
    name: str
    code: str
    venue: Optional[str]
    external_ids: Dict[str, str]
    synthetic: bool


class Player(TypedDict):
    """A player, ``id`` ``player:<league>:<slug>``."""

    id: str
    sport: str
    league: str
    name: str
    position: Optional[str]
    external_ids: Dict[str, str]
    synthetic: bool


class RosterPlayer(TypedDict):
    """The player's name, embedded in a roster entry."""

    name: str


# The functional form, because one field is named ``from`` (a Python keyword).
_RosterEntryOptional = TypedDict(
    "_RosterEntryOptional",
    {"jersey": int, "position": str, "from": str, "to": str, "player": RosterPlayer},
    total=False,
)


class RosterEntry(_RosterEntryOptional):
    """A player's place in a team for a season (``season`` is ``<league>_<year>``).

    Optional: ``jersey``, ``position``, ``from`` and ``to`` (``YYYY-MM-DD``), ``player`` (its name).
    """

    team_id: str
    player_id: str
    season: str


class Geo(TypedDict):
    lat: float
    lng: float


class Venue(TypedDict):
    """A venue; ``country`` is a country code."""

    id: str
    name: str
    city: str
    country: str
    geo: Optional[Geo]
    capacity: Optional[int]
    synthetic: bool


class Season(TypedDict):
    """A season ``<league>_<year>`` with its counts of competitions and events."""

    id: str
    league: str
    sport: str
    label: str
    start: str
    end: str
    synthetic: bool
    source: str
    competitions: int
    events: int


class Competitor(TypedDict):
    """One side of a competition: role ``home``/``away``, ``red``/``blue`` (MMA) or ``p1``.. (golf)."""

    entity_type: Literal["team", "player"]
    entity_id: str
    role: str
    score: int


class Competition(TypedDict):
    """A competition ``<sport>_<league>_<n>``; its game (team sports) is ``<sport>_<n>``."""

    id: str
    sport: str
    league: str
    season: str
    season_id: str
    date: str
    start_time: Optional[str]
    status: CompetitionStatus
    venue: Optional[str]
    name: Optional[str]
    competitors: List[Competitor]
    synthetic: bool


class Eligibility(TypedDict):
    """Which products see the game's events now, and whether it takes crowd reports."""

    live: bool
    archive: bool
    reports: bool


class Game(TypedDict):
    """A team-sport competition seen as a game, ``<sport>_<n>``."""

    id: str
    competition_id: str
    sport: str
    league: str
    season: str
    date: str
    start_time: Optional[str]
    status: CompetitionStatus
    venue: Optional[str]
    competitors: List[Competitor]
    eligibility: Eligibility
    synthetic: bool


class Period(TypedDict):
    unit: str
    num: int
    label: str


class _PlayOptional(TypedDict, total=False):
    player_id: str
    clock: str


class Play(_PlayOptional):
    """An official play (``schema`` ``svc.play.v1``); ``state`` is the running score by role."""

    competition_id: str
    seq: int
    period: Period
    competitor_id: str
    event_type: str
    points: int
    state: Dict[str, int]
    source: str
    ts: str
    schema: str


class _PlayInputOptional(TypedDict, total=False):
    player_id: str
    clock: str
    ts: str
    source: str


class PlayInput(_PlayInputOptional):
    """An official play to append with ``svc.plays.create``; ``event_type`` ``final`` ends the game."""

    period: Period
    competitor_id: str
    event_type: str
    points: int


class Confidence(TypedDict):
    """How sure svc is: share of agreeing reporters, their number, and time to confirmation."""

    agreement: float
    reporters: int
    latency_ms: int


class _EventOptional(TypedDict, total=False):
    provisional_id: str
    retracted_id: str


class Event(_EventOptional):
    """A scoring event in its REST and export form: every field of ``svc.event.v1``.

    ``type`` is ``score`` or ``score_retracted`` today; read unknown kinds as "ignore".
    A confirmed event names its provisional one in ``provisional_id``; a retraction names the
    retracted provisional in ``retracted_id``.
    """

    id: str
    type: str
    tier: Tier
    game_id: str
    sport: str
    league: str
    team: str
    event_type: str
    points: int
    clock: Optional[str]
    ts: str
    confidence: Confidence
    schema: str


class _StreamEventOptional(TypedDict, total=False):
    provisional_id: str
    retracted_id: str


class StreamEvent(_StreamEventOptional):
    """An event as the stream and webhooks carry it (a subset of :class:`Event` plus ``id``).

    A REST :class:`Event` has every one of these fields, so a handler written for
    ``StreamEvent`` reads both: that is what makes a backtest replay the live feed.
    """

    id: str
    type: str
    tier: Tier
    game_id: str
    team: str
    points: int
    ts: str
    confidence: Confidence
    schema: str


#: A webhook body: the stream form of an event (``type`` ``test`` for a test delivery).
WebhookEvent = StreamEvent


class RateLimitInfo(TypedDict):
    limit: int
    window_s: int


class StreamConnections(TypedDict):
    limit: int


class Me(TypedDict):
    """The calling key: its plan, products and sport/league allow-lists (``None`` = all)."""

    id: str
    name: str
    environment: str
    plan: str
    products: List[str]
    sports: Optional[List[str]]
    leagues: Optional[List[str]]
    rate_limit: RateLimitInfo
    stream_connections: StreamConnections


class _ReportInputOptional(TypedDict, total=False):
    event_type: str
    clock: str
    observed_at: str
    ref: str


class ReportInput(_ReportInputOptional):
    """A crowd report. ``ref`` makes it idempotent per key; ``observed_at`` is ISO 8601."""

    game_id: str
    team: str
    points: int


class ReportResult(TypedDict):
    """The stored report and the event it started or joined (``None`` when it started none)."""

    id: str
    event_id: Optional[str]
    tier: Tier


class WebhookEndpoint(TypedDict):
    """A webhook endpoint ``we_…``; ``sports`` ``None`` delivers every sport the key may see."""

    id: str
    url: str
    description: Optional[str]
    sports: Optional[List[str]]
    tier: str
    status: Literal["enabled", "disabled"]
    disabled_reason: Optional[str]
    disabled_at: Optional[str]
    previous_secret_expires_at: Optional[str]
    created_at: str
    updated_at: str


class WebhookEndpointWithSecret(WebhookEndpoint):
    """An endpoint with its ``whsec_…`` signing secret, returned only by create and rotate."""

    secret: str


class WebhookDelivery(TypedDict):
    """One event to one endpoint, ``dlv_…``; the receiver dedups on ``event_id``."""

    id: str
    endpoint_id: str
    event_id: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: Optional[str]
    last_attempt_at: Optional[str]
    last_status_code: Optional[int]
    last_error: Optional[str]
    created_at: str
    delivered_at: Optional[str]


class DeliveryAttempt(TypedDict):
    attempt: int
    at: str
    status_code: Optional[int]
    duration_ms: int
    error: Optional[str]
    response_excerpt: Optional[str]


class WebhookDeliveryWithAttempts(WebhookDelivery):
    """A delivery with its attempt log."""

    attempt_log: List[DeliveryAttempt]


class ReplayResult(TypedDict):
    """How many new deliveries a replay created, and their ids."""

    replayed: int
    delivery_ids: List[str]


class DeletedWebhook(TypedDict):
    id: str
    deleted: bool


class WebhookTestResult(TypedDict, total=False):
    """What ``POST /v1/webhooks/{id}/test`` answers about the test delivery it sent.

    The fields present depend on the server version; ``event_id`` and ``delivery_id`` name the
    signed ``type: "test"`` event and its delivery when the server reports them.
    """

    id: str
    event_id: str
    delivery_id: str
    status: str
    status_code: Optional[int]
    event: StreamEvent


class Notification(TypedDict):
    """A notice for the key, e.g. ``webhook_endpoint.disabled``."""

    id: str
    type: str
    endpoint_id: Optional[str]
    reason: Optional[str]
    message: str
    created_at: str


#: One line of an export: an event, a play or a competition depending on ``entity``.
ExportRecord = Union[Event, Play, Competition]
