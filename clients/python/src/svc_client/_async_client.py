"""The asyncio client, :class:`AsyncSvc`: the one hand-written source of both clients.

``scripts/unasync.py`` writes the blocking client (``_client.py``) from this module by dropping
``async``/``await`` and renaming the asyncio names (``AsyncSvc`` to ``Svc``, ``AsyncPageRequest``
to ``SyncPage``, ...); a test fails when the two differ. Edit this file, then run
``python3 clients/python/scripts/unasync.py``.
"""
from __future__ import annotations

import asyncio
import json
from types import TracebackType
from typing import Any, AsyncIterator, Callable, Dict, List, Literal, Mapping, Optional, Sequence, Type, TypeVar, Union, cast, overload

import httpx

from ._base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    NOT_GIVEN,
    Call,
    ClientBase,
    Headers,
    NdjsonSplitter,
    AsyncExportIterator,
    NotGiven,
    Params,
    RequestOptions,
    Timeout,
    backoff,
    export_resume_id,
    many,
    one,
    whole,
    page_of,
    path_segment,
    request_options,
)
from ._errors import APIConnectionError
from ._response import APIResponse, async_to_raw_response_wrapper
from ._stream import AsyncStream, make_stream_core
from .pagination import AsyncPage, AsyncPageRequest, async_first_page
from .types import (
    AnyEvent,
    Change,
    BoxScore,
    Leader,
    PlayerSeasonStats,
    Standings,
    Competition,
    CompetitionStatus,
    DeletedWebhook,
    DeliveryStatus,
    Event,
    ExportEntity,
    ExportFormat,
    Game,
    Me,
    Notification,
    Period,
    Play,
    PlayInput,
    PlayWithdrawalInput,
    Player,
    Replay,
    Reporter,
    StreamToken,
    ReplayResult,
    ReportInput,
    ReportResult,
    RosterEntry,
    Season,
    Team,
    Tier,
    Venue,
    WebhookDelivery,
    WebhookDeliveryWithAttempts,
    WebhookEndpoint,
    WebhookEndpointWithSecret,
    WebhookTestResult,
)

__all__ = ["AsyncSvc", "AsyncSvcWithRawResponse"]

T = TypeVar("T")
R = TypeVar("R")

# Every method also takes the per-call options: ``timeout`` (seconds, ``None`` for no limit),
# ``max_retries`` and ``extra_headers``, and on a POST ``idempotency_key``; they override the
# client's settings for that call only.


class _Resource:
    def __init__(self, client: "AsyncSvc") -> None:
        self._client = client


class Teams(_Resource):
    def list(
        self,
        *,
        sport: Optional[str] = None,
        league: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Team]:
        """Teams, filtered to the key's sports and leagues."""
        params = {"sport": sport, "league": league, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/teams", params, Team, request_options(timeout, max_retries, extra_headers))

    async def get(self, team_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Team:
        """One team by id (``team:<league>:<code>``, e.g. ``team:wc:ARG``)."""
        return await self._client._request("GET", f"/v1/teams/{path_segment(team_id)}", one(Team), request_options(timeout, max_retries, extra_headers))

    def roster(
        self,
        team_id: str,
        *,
        season: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[RosterEntry]:
        """The team's players, for one season (``wc_2022`` or ``2022``) or all."""
        params = {"season": season, "limit": limit, "cursor": cursor}
        return self._client._get_page(f"/v1/teams/{path_segment(team_id)}/roster", params, RosterEntry, request_options(timeout, max_retries, extra_headers))


class Players(_Resource):
    def list(
        self,
        *,
        sport: Optional[str] = None,
        league: Optional[str] = None,
        team: Optional[str] = None,
        season: Optional[str] = None,
        search: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Player]:
        """Players; ``search`` matches names (accent and case insensitive)."""
        params = {"sport": sport, "league": league, "team": team, "season": season, "search": search, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/players", params, Player, request_options(timeout, max_retries, extra_headers))

    async def get(self, player_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Player:
        """One player by id (``player:<league>:<slug>``)."""
        return await self._client._request("GET", f"/v1/players/{path_segment(player_id)}", one(Player), request_options(timeout, max_retries, extra_headers))

    def stats(
        self,
        player_id: str,
        *,
        season: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[PlayerSeasonStats]:
        """The player's totals, one per season the player has plays in (``season`` narrows to one)."""
        path = f"/v1/players/{path_segment(player_id)}/stats"
        return self._client._get_page(path, {"season": season, "limit": limit, "cursor": cursor}, PlayerSeasonStats, request_options(timeout, max_retries, extra_headers))


class Venues(_Resource):
    def list(
        self,
        *,
        sport: Optional[str] = None,
        league: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Venue]:
        params = {"sport": sport, "league": league, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/venues", params, Venue, request_options(timeout, max_retries, extra_headers))

    async def get(self, venue_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Venue:
        """One venue by its slug, e.g. ``lusail-stadium``."""
        return await self._client._request("GET", f"/v1/venues/{path_segment(venue_id)}", one(Venue), request_options(timeout, max_retries, extra_headers))


class Seasons(_Resource):
    def list(
        self,
        *,
        league: Optional[str] = None,
        sport: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Season]:
        """Seasons with their competition and event counts: how far the archive goes back."""
        params = {"league": league, "sport": sport, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/seasons", params, Season, request_options(timeout, max_retries, extra_headers))


class Competitions(_Resource):
    def list(
        self,
        *,
        sport: Optional[str] = None,
        league: Optional[str] = None,
        season: Optional[str] = None,
        date: Optional[str] = None,
        tz: Optional[str] = None,
        team: Optional[str] = None,
        player: Optional[str] = None,
        status: Optional[CompetitionStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Competition]:
        """Competitions by date; ``date`` is ``today`` or ``YYYY-MM-DD``, ``team`` a team id.

        ``tz`` (an IANA zone such as ``America/New_York``) makes ``date`` that calendar day in that
        zone, matched on ``start_time``; without it ``date`` is a UTC date.
        """
        params = {"sport": sport, "league": league, "season": season, "date": date, "tz": tz, "team": team, "player": player, "status": status, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/competitions", params, Competition, request_options(timeout, max_retries, extra_headers))

    async def get(self, competition_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Competition:
        """One competition by id (``<sport>_<league>_<n>``, e.g. ``soccer_wc_21728``)."""
        path = f"/v1/competitions/{path_segment(competition_id)}"
        return await self._client._request("GET", path, one(Competition), request_options(timeout, max_retries, extra_headers))

    def plays(
        self,
        competition_id: str,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Play]:
        """The competition's official plays in ``seq`` order (product ``archive`` or ``live``)."""
        path = f"/v1/competitions/{path_segment(competition_id)}/plays"
        return self._client._get_page(path, {"limit": limit, "cursor": cursor}, Play, request_options(timeout, max_retries, extra_headers))

    async def change_status(
        self,
        competition_id: str,
        status: CompetitionStatus,
        *,
        start_time: Optional[str] = None,
        reason: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
        idempotency_key: Optional[str] = None,
    ) -> Competition:
        """Moves the competition through the schedule lifecycle (product ``source``): postpone, suspend,
        cancel, resume, or schedule a postponed game again with its new ``start_time``. The status it
        already has changes nothing; any other move raises :class:`ConflictError` (``invalid_transition``).
        """
        body: Dict[str, str] = {"status": status}
        if start_time is not None:
            body["start_time"] = start_time
        if reason is not None:
            body["reason"] = reason
        path = f"/v1/competitions/{path_segment(competition_id)}/status"
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", path, one(Competition), options, body=body)

    async def boxscore(self, competition_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> BoxScore:
        """The box score: line score by period, shoot-out, players by type, winner (live while the game is)."""
        path = f"/v1/competitions/{path_segment(competition_id)}/boxscore"
        return await self._client._request("GET", path, one(BoxScore), request_options(timeout, max_retries, extra_headers))


class StandingsResource(_Resource):
    async def list(
        self,
        *,
        league: str,
        season: Optional[str] = None,
        tier: Optional[Literal["confirmed", "provisional"]] = None,
        live: Optional[bool] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> Standings:
        """A season's tables (``{"data": [{"group", "rows"}], "as_of"}``), live games at their current score."""
        params = {"league": league, "season": season, "tier": tier, "live": None if live is None else ("true" if live else "false")}
        return await self._client._request("GET", "/v1/standings", whole(Standings), request_options(timeout, max_retries, extra_headers), params=params)


class Leaders(_Resource):
    def list(
        self,
        *,
        league: str,
        season: Optional[str] = None,
        stat: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Leader]:
        """A season's players ranked by ``stat`` (soccer ``goals``, basketball ``points`` by default)."""
        params = {"league": league, "season": season, "stat": stat, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/leaders", params, Leader, request_options(timeout, max_retries, extra_headers))


class Games(_Resource):
    def list(
        self,
        *,
        sport: Optional[str] = None,
        league: Optional[str] = None,
        season: Optional[str] = None,
        date: Optional[str] = None,
        tz: Optional[str] = None,
        team: Optional[str] = None,
        player: Optional[str] = None,
        status: Optional[CompetitionStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Game]:
        """Team-sport games with their ``eligibility`` (``date="today"`` for the live ones).

        ``tz`` (an IANA zone) makes ``date`` (and ``today``) that zone's calendar day, matched on
        ``start_time``: ``date="today", tz="America/New_York"`` at 21:00 there is still today there.
        """
        params = {"sport": sport, "league": league, "season": season, "date": date, "tz": tz, "team": team, "player": player, "status": status, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/games", params, Game, request_options(timeout, max_retries, extra_headers))

    async def get(self, game_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Game:
        """One game by id (``<sport>_<n>``, e.g. ``soccer_21728``)."""
        return await self._client._request("GET", f"/v1/games/{path_segment(game_id)}", one(Game), request_options(timeout, max_retries, extra_headers))

    def events(
        self,
        game_id: str,
        *,
        types: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[AnyEvent]:
        """The game's confirmed events, in order: scoring events and ``status`` changes (``types="status"`` narrows)."""
        path = f"/v1/games/{path_segment(game_id)}/events"
        params = {"types": types, "limit": limit, "cursor": cursor}
        return self._client._get_events_page(path, params, request_options(timeout, max_retries, extra_headers))


class Reports(_Resource):
    async def create(
        self,
        report: Union[ReportInput, Sequence[ReportInput]],
        *,
        idempotency_key: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> List[ReportResult]:
        """Submits one crowd report, or a list of up to 500 (product ``report``).

        Returns one result per report: its ``rpt_…`` id and the event it started or joined.
        """
        body: object = {"reports": list(report)} if isinstance(report, (list, tuple)) else report
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", "/v1/reports", many(ReportResult), options, body=body)


class Plays(_Resource):
    async def create(
        self,
        competition_id: str,
        play: Union[PlayInput, PlayWithdrawalInput, Sequence[PlayInput]],
        *,
        idempotency_key: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> List[Play]:
        """Appends official plays to a competition (product ``source``); returns the stored plays.
        A correction (``event_type`` ``score_withdrawn``) goes on its own."""
        body: object = {"plays": list(play)} if isinstance(play, (list, tuple)) else play
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", f"/v1/competitions/{path_segment(competition_id)}/plays", many(Play), options, body=body)

    async def withdraw(
        self,
        competition_id: str,
        withdraws: Union[str, int],
        *,
        period: Optional[Period] = None,
        clock: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> List[Play]:
        """Withdraws a confirmed score, crowd or official (a goal disallowed after review): ``withdraws``
        names its play (``seq``) or its event (``evt_…``). Returns the correction's play, in a list as
        ``create`` does; a confirmed ``score_retracted`` naming the score follows on the stream,
        webhooks and the change feed."""
        body: PlayWithdrawalInput = {"event_type": "score_withdrawn", "withdraws": withdraws}
        if period is not None:
            body["period"] = period
        if clock is not None:
            body["clock"] = clock
        return await self.create(competition_id, body, idempotency_key=idempotency_key, timeout=timeout, max_retries=max_retries, extra_headers=extra_headers)


class Webhooks(_Resource):
    async def create(
        self,
        *,
        url: str,
        sports: Optional[Sequence[str]] = None,
        tier: Literal["confirmed"] = "confirmed",
        description: Optional[str] = None,
        min_probability: Optional[float] = None,
        idempotency_key: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> WebhookEndpointWithSecret:
        """Registers an endpoint; the answer's ``secret`` is shown only here: store it.

        ``min_probability`` (0–1): events whose ``confidence["probability"]`` is below it are not
        delivered (default 0: every event).
        """
        body: Dict[str, object] = {"url": url, "tier": tier}
        if sports is not None:
            body["sports"] = list(sports)
        if description is not None:
            body["description"] = description
        if min_probability is not None:
            body["min_probability"] = min_probability
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", "/v1/webhooks", one(WebhookEndpointWithSecret), options, body=body)

    def list(
        self,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[WebhookEndpoint]:
        return self._client._get_page("/v1/webhooks", {"limit": limit, "cursor": cursor}, WebhookEndpoint, request_options(timeout, max_retries, extra_headers))

    async def get(self, webhook_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> WebhookEndpoint:
        path = f"/v1/webhooks/{path_segment(webhook_id)}"
        return await self._client._request("GET", path, one(WebhookEndpoint), request_options(timeout, max_retries, extra_headers))

    async def update(
        self,
        webhook_id: str,
        *,
        url: Union[str, NotGiven] = NOT_GIVEN,
        sports: Union[Sequence[str], None, NotGiven] = NOT_GIVEN,
        description: Union[str, None, NotGiven] = NOT_GIVEN,
        min_probability: Union[float, NotGiven] = NOT_GIVEN,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> WebhookEndpoint:
        """Changes the fields given; ``sports=None`` means every sport, ``description=None`` clears it."""
        body: Dict[str, object] = {}
        if not isinstance(url, NotGiven):
            body["url"] = url
        if not isinstance(sports, NotGiven):
            body["sports"] = None if sports is None else list(sports)
        if not isinstance(description, NotGiven):
            body["description"] = description
        if not isinstance(min_probability, NotGiven):
            body["min_probability"] = min_probability
        path = f"/v1/webhooks/{path_segment(webhook_id)}"
        return await self._client._request("PATCH", path, one(WebhookEndpoint), request_options(timeout, max_retries, extra_headers), body=body)

    async def delete(self, webhook_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> DeletedWebhook:
        """Deletes the endpoint and its deliveries."""
        path = f"/v1/webhooks/{path_segment(webhook_id)}"
        return await self._client._request("DELETE", path, one(DeletedWebhook), request_options(timeout, max_retries, extra_headers))

    def deliveries(
        self,
        webhook_id: str,
        *,
        status: Optional[DeliveryStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[WebhookDelivery]:
        """The endpoint's deliveries, newest first, optionally of one ``status``."""
        path = f"/v1/webhooks/{path_segment(webhook_id)}/deliveries"
        params = {"status": status, "limit": limit, "cursor": cursor}
        return self._client._get_page(path, params, WebhookDelivery, request_options(timeout, max_retries, extra_headers))

    async def delivery(
        self, webhook_id: str, delivery_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None
    ) -> WebhookDeliveryWithAttempts:
        """One delivery with its attempt log (status codes, durations, response excerpts)."""
        path = f"/v1/webhooks/{path_segment(webhook_id)}/deliveries/{path_segment(delivery_id)}"
        return await self._client._request("GET", path, one(WebhookDeliveryWithAttempts), request_options(timeout, max_retries, extra_headers))

    async def replay(
        self,
        webhook_id: str,
        *,
        delivery_id: Optional[str] = None,
        from_: Optional[str] = None,
        to: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> ReplayResult:
        """Replays one delivery (``delivery_id``) or every event in ``[from_, to)`` (ISO 8601) as new deliveries."""
        if delivery_id is not None:
            if from_ is not None or to is not None:
                raise ValueError("replay takes delivery_id, or from_ and to, not both")
            body: Dict[str, object] = {"delivery_id": delivery_id}
        elif from_ is not None and to is not None:
            body = {"from": from_, "to": to}
        else:
            raise ValueError("replay needs delivery_id, or both from_ and to")
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", f"/v1/webhooks/{path_segment(webhook_id)}/replay", one(ReplayResult), options, body=body)

    async def enable(
        self, webhook_id: str, *, idempotency_key: Optional[str] = None, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None
    ) -> WebhookEndpoint:
        """Re-enables a disabled endpoint."""
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", f"/v1/webhooks/{path_segment(webhook_id)}/enable", one(WebhookEndpoint), options)

    async def rotate_secret(
        self, webhook_id: str, *, idempotency_key: Optional[str] = None, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None
    ) -> WebhookEndpointWithSecret:
        """A new secret (in the answer, once); the old one keeps signing beside it for 24 h."""
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", f"/v1/webhooks/{path_segment(webhook_id)}/rotate-secret", one(WebhookEndpointWithSecret), options)

    async def test(
        self, webhook_id: str, *, idempotency_key: Optional[str] = None, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None
    ) -> WebhookTestResult:
        """Sends a signed ``type: "test"`` event to the endpoint, outside the retry budget."""
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", f"/v1/webhooks/{path_segment(webhook_id)}/test", one(WebhookTestResult), options)


class Notifications(_Resource):
    def list(
        self,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Notification]:
        """Notices for the key (e.g. a webhook endpoint was disabled), newest first."""
        return self._client._get_page("/v1/notifications", {"limit": limit, "cursor": cursor}, Notification, request_options(timeout, max_retries, extra_headers))


class Replays(_Resource):
    """Sandbox replays (sandbox keys only): a final game played again through the live pipeline as a
    game of its own that only the calling key sees, its events on the key's stream and webhooks."""

    async def create(
        self,
        *,
        game_id: str,
        speed: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> Replay:
        """Starts a replay of a final game; ``speed`` 1–600 (default 60) divides its gaps."""
        body: Dict[str, object] = {"game_id": game_id}
        if speed is not None:
            body["speed"] = speed
        options = request_options(timeout, max_retries, extra_headers, idempotency_key)
        return await self._client._request("POST", "/v1/replays", one(Replay), options, body=body)

    def list(
        self,
        *,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Replay]:
        """The key's replays, newest first."""
        return self._client._get_page("/v1/replays", {"limit": limit, "cursor": cursor}, Replay, request_options(timeout, max_retries, extra_headers))

    async def get(self, replay_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Replay:
        path = f"/v1/replays/{path_segment(replay_id)}"
        return await self._client._request("GET", path, one(Replay), request_options(timeout, max_retries, extra_headers))

    async def cancel(self, replay_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Replay:
        """Cancels a replay; its game ends at once. A replay already over comes back as it is."""
        path = f"/v1/replays/{path_segment(replay_id)}"
        return await self._client._request("DELETE", path, one(Replay), request_options(timeout, max_retries, extra_headers))


class Reporters(_Resource):
    """The operator's view of the crowd (product ``admin``, docs/reporters.md): every voter's track
    record, weight and flag; suspend and restore."""

    def list(
        self,
        *,
        key: Optional[str] = None,
        flagged: Optional[bool] = None,
        suspended: Optional[bool] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Reporter]:
        """Voters in key order; ``key`` (an API key id), ``flagged`` and ``suspended`` narrow the list."""
        params = {
            "key": key,
            "flagged": None if flagged is None else ("true" if flagged else "false"),
            "suspended": None if suspended is None else ("true" if suspended else "false"),
            "limit": limit,
            "cursor": cursor,
        }
        return self._client._get_page("/v1/reporters", params, Reporter, request_options(timeout, max_retries, extra_headers))

    async def suspend(self, reporter_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Reporter:
        """Its reports are stored but count for nothing from now on; its votes on open plays are withdrawn at once."""
        path = f"/v1/reporters/{path_segment(reporter_id)}/suspend"
        return await self._client._request("POST", path, one(Reporter), request_options(timeout, max_retries, extra_headers))

    async def restore(self, reporter_id: str, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Reporter:
        """Its next reports count again; votes its suspension withdrew stay withdrawn."""
        path = f"/v1/reporters/{path_segment(reporter_id)}/restore"
        return await self._client._request("POST", path, one(Reporter), request_options(timeout, max_retries, extra_headers))


class Changes(_Resource):
    """The change feed, ``GET /v1/changes``: competitions created or updated and events created."""

    def list(
        self,
        *,
        since: Optional[str] = None,
        types: Optional[str] = None,
        limit: Optional[int] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncPageRequest[Change]:
        """Every change from ``since`` (a ``next_cursor`` or an export's ``X-Changes-Cursor``; default the
        oldest kept) to the feed's present end, page by page; a page's ``next_cursor`` is where the next
        one starts.
        """
        params: Params = {"since": since, "types": types, "limit": limit}
        return self._client._get_changes_page(params, request_options(timeout, max_retries, extra_headers))

    def follow(
        self,
        *,
        since: Optional[str] = None,
        types: Optional[str] = None,
        limit: Optional[int] = None,
        wait: int = 25,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> "AsyncChangeFollower":
        """Long-polls the feed for ever from ``since``, yielding each change; keep the follower's
        ``cursor`` and pass it as ``since`` to resume."""
        if not 1 <= wait <= 30:
            raise ValueError("wait must be 1 to 30 seconds")
        return AsyncChangeFollower(self._client, {"since": since, "types": types, "limit": limit}, wait, request_options(float(wait + 15), max_retries, extra_headers))


class AsyncChangeFollower:
    """The change feed followed for ever: ``async for change in follower`` long-polls
    ``GET /v1/changes`` and yields each change in the feed's order. ``cursor`` is the position after
    the last whole page yielded: keep it and pass it as ``since`` to resume (a loop left in the middle
    of a page sees that page's rest again: at least once, never a gap). :meth:`close` ends the loop
    after the poll in flight.
    """

    def __init__(self, client: "AsyncSvc", params: Params, wait: int, options: RequestOptions) -> None:
        self._client = client
        self._params = params
        self._wait = wait
        self._options = options
        since = params.get("since")
        self.cursor: Optional[str] = since if isinstance(since, str) else None
        self.closed = False

    def close(self) -> None:
        self.closed = True

    async def __aiter__(self) -> AsyncIterator[Change]:
        while not self.closed:
            params: Params = {**self._params, "since": self.cursor, "wait": str(self._wait)}
            data, next_cursor = await self._client._request("GET", "/v1/changes", page_of, self._options, params=params)
            for change in cast(List[Change], data):
                yield change
            if isinstance(next_cursor, str):
                self.cursor = next_cursor
            if not data:
                # An empty answer before its wait (a proxy cut it short): do not spin.
                await asyncio.sleep(0.1)

class StreamTokens:
    """Stream tokens: what a back end mints so a public page opens the stream without a key."""

    def __init__(self, client: "AsyncSvc") -> None:
        self._client = client

    async def create(
        self,
        *,
        ttl_s: Optional[int] = None,
        sports: Optional[Sequence[str]] = None,
        leagues: Optional[Sequence[str]] = None,
        games: Optional[Sequence[str]] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> StreamToken:
        """A token for ``GET /v1/stream`` only (``?token=``), living ``ttl_s`` seconds (60–86,400,
        default 3,600), narrowed to ``sports``, ``leagues`` and ``games`` when given and never wider
        than the key. Hand ``token`` to the page; it is shown only here."""
        body: Dict[str, object] = {}
        if ttl_s is not None:
            body["ttl_s"] = ttl_s
        for name, names in (("sports", sports), ("leagues", leagues), ("games", games)):
            if names is not None:
                body[name] = list(names)
        options = request_options(timeout, max_retries, extra_headers)
        return await self._client._request("POST", "/v1/stream/tokens", one(StreamToken), options, body=body)


class StreamAccess:
    """``client.stream(...)`` opens the live stream; ``client.stream.tokens`` mints stream tokens."""

    def __init__(self, client: "AsyncSvc") -> None:
        self._client = client
        self.tokens = StreamTokens(client)

    def __call__(
        self,
        *,
        sport: Union[str, Sequence[str], None] = None,
        league: Union[str, Sequence[str], None] = None,
        game: Union[str, Sequence[str], None] = None,
        tier: Optional[Tier] = None,
        since: Optional[str] = None,
        delay: Optional[int] = None,
        min_probability: Optional[float] = None,
        heartbeat_timeout: Optional[float] = None,
        max_reconnects: Optional[int] = None,
        timeout: Optional[float] = None,
        extra_headers: Headers = None,
    ) -> AsyncStream:
        """Live events (product ``live``); see :class:`AsyncStream`.

        Filters are unions (``sport``, ``league``, ``game``: a string or a list). ``since``
        resumes after an event id; ``delay`` (0–300 s) holds every event until that long after its ``ts``;
        ``min_probability`` (0–1) leaves out events whose ``confidence["probability"]`` is below it (a
        ``score_retracted`` of an event that was sent is always sent). The stream reconnects with backoff and ``since=<last id>``
        after a drop, a 4008 or ``heartbeat_timeout`` (default 10 s, two heartbeats) of silence;
        ``max_reconnects`` bounds consecutive failed attempts (default: no bound). ``timeout``
        bounds each connection's opening handshake (default: the client's). 401, 403 and 4029
        raise :class:`AuthenticationError`, :class:`PermissionDeniedError` and
        :class:`RateLimitError` at once; an event of another schema raises
        :class:`SchemaMismatchError`.
        """
        core = make_stream_core(
            base_url=self._client.base_url,
            api_key=self._client.api_key,
            extra_headers=dict(extra_headers or {}),
            sport=sport,
            league=league,
            game=game,
            tier=tier,
            since=since,
            delay=delay,
            min_probability=min_probability,
            heartbeat_timeout=heartbeat_timeout,
            max_reconnects=max_reconnects,
            open_timeout=self._client.timeout if timeout is None else timeout,
        )
        return AsyncStream(core)


class AsyncSvc(ClientBase[httpx.AsyncClient]):
    """The svc API.

    Args:
        api_key: ``svc_live_…`` or ``svc_test_…``; default ``$SVC_API_KEY``.
        base_url: the service's origin, without ``/v1``; default ``$SVC_BASE_URL`` or
            ``http://127.0.0.1:8080``.
        timeout: seconds per request (connect, and each read of a streamed export).
        max_retries: retries of a request after a connection error, a timeout, 408, 429 or 5xx
            (exponential backoff with jitter, at least the server's ``Retry-After``). Every
            POST carries an ``Idempotency-Key``, the same on each attempt, so a retry never
            doubles a write.
        http_client: an ``httpx.AsyncClient`` of your own (proxies, transports, limits); it is
            not closed by :meth:`close`.

    ``with_raw_response`` has the same resources, answering with an :class:`APIResponse`
    (status, headers, request id, ``parse()``). Use the client as a context manager, or call
    :meth:`close`::

        async with AsyncSvc() as svc:
            async for competition in svc.competitions.list(league="wc", season="2022"):
                ...
    """

    def __init__(
        self,
        *,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        super().__init__(api_key, base_url, timeout, max_retries)
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self.teams = Teams(self)
        self.players = Players(self)
        self.venues = Venues(self)
        self.seasons = Seasons(self)
        self.competitions = Competitions(self)
        self.games = Games(self)
        self.standings = StandingsResource(self)
        self.leaders = Leaders(self)
        self.reports = Reports(self)
        self.plays = Plays(self)
        self.webhooks = Webhooks(self)
        self.notifications = Notifications(self)
        self.replays = Replays(self)
        self.reporters = Reporters(self)
        self.changes = Changes(self)
        self.stream = StreamAccess(self)
        self.with_raw_response = AsyncSvcWithRawResponse(self)

    # -- lifecycle --------------------------------------------------------------------------
    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncSvc":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()

    # -- endpoints outside a resource -------------------------------------------------------
    async def me(self, *, timeout: Timeout = NOT_GIVEN, max_retries: Optional[int] = None, extra_headers: Headers = None) -> Me:
        """The calling key: plan, products, sports, rate limit and stream connections."""
        return await self._request("GET", "/v1/me", one(Me), request_options(timeout, max_retries, extra_headers))

    @overload
    def export(
        self,
        *,
        league: str,
        season: str,
        entity: Literal["events"] = "events",
        format: Literal["ndjson"] = "ndjson",
        from_: Optional[str] = None,
        to: Optional[str] = None,
        after: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncExportIterator[Event]: ...

    @overload
    def export(
        self,
        *,
        league: str,
        season: str,
        entity: Literal["plays"],
        format: Literal["ndjson"] = "ndjson",
        from_: Optional[str] = None,
        to: Optional[str] = None,
        after: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncExportIterator[Play]: ...

    @overload
    def export(
        self,
        *,
        league: str,
        season: str,
        entity: Literal["competitions"],
        format: Literal["ndjson"] = "ndjson",
        from_: Optional[str] = None,
        to: Optional[str] = None,
        after: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncExportIterator[Competition]: ...

    @overload
    def export(
        self,
        *,
        league: str,
        season: str,
        entity: ExportEntity = "events",
        format: Literal["csv", "parquet"],
        from_: Optional[str] = None,
        to: Optional[str] = None,
        after: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncExportIterator[bytes]: ...

    def export(
        self,
        *,
        league: str,
        season: str,
        entity: str = "events",
        format: ExportFormat = "ndjson",
        from_: Optional[str] = None,
        to: Optional[str] = None,
        after: Optional[str] = None,
        timeout: Timeout = NOT_GIVEN,
        max_retries: Optional[int] = None,
        extra_headers: Headers = None,
    ) -> AsyncExportIterator[Any]:
        """Every record of a season, streamed (product ``archive``).

        ``entity``: ``events`` (confirmed events, in order), ``plays`` or ``competitions``;
        ``from_`` (inclusive) and ``to`` (exclusive) are ISO 8601 dates or date-times. Each
        record is the one the REST API returns. When the connection drops, the iterator resumes
        on its own with ``after=<last id>``: no record is lost or repeated. ``timeout`` bounds
        each read; the request starts when iteration does.

        ``format="csv"`` or ``"parquet"`` yields the file's bytes instead, chunk by chunk, to write
        to a file that pandas, polars or DuckDB open (``pd.read_parquet``): the same rows and
        values as the records. A file cannot be resumed part-way: a dropped connection raises
        :class:`APIConnectionError`, and the export is asked for again.
        """
        options = request_options(timeout, max_retries, extra_headers)
        if format != "ndjson":
            file_params: Dict[str, Optional[str]] = {"league": league, "season": season, "entity": entity, "format": format, "from": from_, "to": to, "after": after}
            return AsyncExportIterator(lambda on_cursor: self._export_file(file_params, options, on_cursor))
        params: Dict[str, Optional[str]] = {"league": league, "season": season, "entity": entity, "from": from_, "to": to}
        return AsyncExportIterator(lambda on_cursor: self._export(params, entity, after, options, on_cursor))


    # -- plumbing ---------------------------------------------------------------------------
    async def _send(self, call: Call, *, stream: bool = False) -> httpx.Response:
        """Sends with retries; returns a 2xx answer or raises its error class."""
        while True:
            call.attempt()
            try:
                response = await self._http.send(call.request, stream=stream)
            except httpx.TransportError as exc:
                await asyncio.sleep(call.after_failure(exc))
                continue
            if not 200 <= response.status_code < 300:
                await response.aread()  # error bodies are small; streamed or not, read them whole
                await response.aclose()
            wait = call.after_answer(response)
            if wait is None:
                return response
            await asyncio.sleep(wait)

    async def _request(self, method: str, path: str, parse: Callable[[httpx.Response], R], options: RequestOptions, *, params: Optional[Params] = None, body: object = NOT_GIVEN) -> R:
        call = self._call(method, path, params, body, options)
        response = await self._send(call)
        if options.raw:
            # The raw wrappers type the answer as APIResponse[R]; see _response.py.
            return cast(R, APIResponse(response, parse, call.elapsed))
        return parse(response)

    def _get_page(self, path: str, params: Params, item: Type[T], options: RequestOptions) -> AsyncPageRequest[T]:
        async def fetch(cursor: Optional[str], options: RequestOptions) -> AsyncPage[T]:
            def parse(response: httpx.Response) -> AsyncPage[T]:
                data, next_cursor = page_of(response)
                # Only the first page of a raw call is raw: the next ones are plain pages.
                return AsyncPage(cast(List[T], data), next_cursor, lambda cursor: fetch(cursor, options.without_raw()))

            return await self._request("GET", path, parse, options, params={**params, "cursor": cursor})

        first = params.get("cursor")
        return async_first_page(lambda: fetch(first if isinstance(first, str) else None, options))

    def _get_events_page(self, path: str, params: Params, options: RequestOptions) -> AsyncPageRequest[AnyEvent]:
        """A list of events of either kind (:data:`AnyEvent`): ``_get_page`` takes one record class."""

        async def fetch(cursor: Optional[str], options: RequestOptions) -> AsyncPage[AnyEvent]:
            def parse(response: httpx.Response) -> AsyncPage[AnyEvent]:
                data, next_cursor = page_of(response)
                return AsyncPage(cast(List[AnyEvent], data), next_cursor, lambda cursor: fetch(cursor, options.without_raw()))

            return await self._request("GET", path, parse, options, params={**params, "cursor": cursor})

        first = params.get("cursor")
        return async_first_page(lambda: fetch(first if isinstance(first, str) else None, options))

    def _get_changes_page(self, params: Params, options: RequestOptions) -> AsyncPageRequest[Change]:
        async def fetch(since: Optional[str], options: RequestOptions) -> AsyncPage[Change]:
            def parse(response: httpx.Response) -> AsyncPage[Change]:
                data, next_cursor = page_of(response)
                # The feed always answers a cursor; a list ends at the first empty page.
                following = next_cursor if data else None
                return AsyncPage(cast(List[Change], data), following, lambda cursor: fetch(cursor, options.without_raw()))

            return await self._request("GET", "/v1/changes", parse, options, params={**params, "since": since})

        first = params.get("since")
        return async_first_page(lambda: fetch(first if isinstance(first, str) else None, options))

    async def _export(self, params: Mapping[str, Optional[str]], entity: str, after: Optional[str], options: RequestOptions, on_cursor: Callable[[Optional[str]], None]) -> AsyncIterator[Any]:
        last = after
        failures = 0
        max_retries = self.max_retries if options.max_retries is None else options.max_retries
        while True:
            response = await self._send(self._call("GET", "/v1/export", {**params, "after": last}, NOT_GIVEN, options), stream=True)
            on_cursor(response.headers.get("x-changes-cursor"))
            splitter = NdjsonSplitter()
            progressed = False
            error: BaseException
            try:
                async for chunk in response.aiter_bytes():
                    for line in splitter.feed(chunk):
                        record = json.loads(line)
                        resume = export_resume_id(entity, record) if isinstance(record, dict) else None
                        if resume is not None:
                            last = resume
                        progressed = True
                        yield record
                if not splitter.pending:
                    return
                error = APIConnectionError("export: the connection ended inside a record")
            except httpx.TransportError as exc:
                error = exc
            finally:
                await response.aclose()
            # A drop after progress resumes at once; only attempts that return nothing count.
            if progressed:
                failures = 0
                continue
            if failures >= max_retries:
                raise APIConnectionError(f"export: the connection dropped {failures + 1} times without a record: {error}", cause=error)
            await asyncio.sleep(backoff(failures))
            failures += 1

    async def _export_file(self, params: Mapping[str, Optional[str]], options: RequestOptions, on_cursor: Callable[[Optional[str]], None]) -> AsyncIterator[bytes]:
        response = await self._send(self._call("GET", "/v1/export", params, NOT_GIVEN, options), stream=True)
        on_cursor(response.headers.get("x-changes-cursor"))
        try:
            async for chunk in response.aiter_bytes():
                yield chunk
        except httpx.TransportError as exc:
            raise APIConnectionError(f"export: the connection dropped inside the file: {exc}", cause=exc) from exc
        finally:
            await response.aclose()


class TeamsWithRawResponse:
    def __init__(self, teams: Teams) -> None:
        self.list = async_to_raw_response_wrapper(teams.list)
        self.get = async_to_raw_response_wrapper(teams.get)
        self.roster = async_to_raw_response_wrapper(teams.roster)


class PlayersWithRawResponse:
    def __init__(self, players: Players) -> None:
        self.list = async_to_raw_response_wrapper(players.list)
        self.get = async_to_raw_response_wrapper(players.get)
        self.stats = async_to_raw_response_wrapper(players.stats)


class VenuesWithRawResponse:
    def __init__(self, venues: Venues) -> None:
        self.list = async_to_raw_response_wrapper(venues.list)
        self.get = async_to_raw_response_wrapper(venues.get)


class SeasonsWithRawResponse:
    def __init__(self, seasons: Seasons) -> None:
        self.list = async_to_raw_response_wrapper(seasons.list)


class CompetitionsWithRawResponse:
    def __init__(self, competitions: Competitions) -> None:
        self.list = async_to_raw_response_wrapper(competitions.list)
        self.get = async_to_raw_response_wrapper(competitions.get)
        self.plays = async_to_raw_response_wrapper(competitions.plays)
        self.boxscore = async_to_raw_response_wrapper(competitions.boxscore)


class StandingsWithRawResponse:
    def __init__(self, standings: StandingsResource) -> None:
        self.list = async_to_raw_response_wrapper(standings.list)


class LeadersWithRawResponse:
    def __init__(self, leaders: Leaders) -> None:
        self.list = async_to_raw_response_wrapper(leaders.list)


class GamesWithRawResponse:
    def __init__(self, games: Games) -> None:
        self.list = async_to_raw_response_wrapper(games.list)
        self.get = async_to_raw_response_wrapper(games.get)
        self.events = async_to_raw_response_wrapper(games.events)


class ReportsWithRawResponse:
    def __init__(self, reports: Reports) -> None:
        self.create = async_to_raw_response_wrapper(reports.create)


class PlaysWithRawResponse:
    def __init__(self, plays: Plays) -> None:
        self.create = async_to_raw_response_wrapper(plays.create)
        self.withdraw = async_to_raw_response_wrapper(plays.withdraw)


class WebhooksWithRawResponse:
    def __init__(self, webhooks: Webhooks) -> None:
        self.create = async_to_raw_response_wrapper(webhooks.create)
        self.list = async_to_raw_response_wrapper(webhooks.list)
        self.get = async_to_raw_response_wrapper(webhooks.get)
        self.update = async_to_raw_response_wrapper(webhooks.update)
        self.delete = async_to_raw_response_wrapper(webhooks.delete)
        self.deliveries = async_to_raw_response_wrapper(webhooks.deliveries)
        self.delivery = async_to_raw_response_wrapper(webhooks.delivery)
        self.replay = async_to_raw_response_wrapper(webhooks.replay)
        self.enable = async_to_raw_response_wrapper(webhooks.enable)
        self.rotate_secret = async_to_raw_response_wrapper(webhooks.rotate_secret)
        self.test = async_to_raw_response_wrapper(webhooks.test)


class NotificationsWithRawResponse:
    def __init__(self, notifications: Notifications) -> None:
        self.list = async_to_raw_response_wrapper(notifications.list)


class ReplaysWithRawResponse:
    def __init__(self, replays: Replays) -> None:
        self.create = async_to_raw_response_wrapper(replays.create)
        self.list = async_to_raw_response_wrapper(replays.list)
        self.get = async_to_raw_response_wrapper(replays.get)
        self.cancel = async_to_raw_response_wrapper(replays.cancel)


class ReportersWithRawResponse:
    def __init__(self, reporters: Reporters) -> None:
        self.list = async_to_raw_response_wrapper(reporters.list)
        self.suspend = async_to_raw_response_wrapper(reporters.suspend)
        self.restore = async_to_raw_response_wrapper(reporters.restore)


class AsyncSvcWithRawResponse:
    """``svc.with_raw_response``: every REST method, answering with an :class:`APIResponse`.

    ::

        response = await svc.with_raw_response.teams.get("team:wc:ARG")
        response.status_code, response.request_id, response.headers["ratelimit-remaining"]
        team = response.parse()
    """

    def __init__(self, client: AsyncSvc) -> None:
        self.me = async_to_raw_response_wrapper(client.me)
        self.teams = TeamsWithRawResponse(client.teams)
        self.players = PlayersWithRawResponse(client.players)
        self.venues = VenuesWithRawResponse(client.venues)
        self.seasons = SeasonsWithRawResponse(client.seasons)
        self.competitions = CompetitionsWithRawResponse(client.competitions)
        self.games = GamesWithRawResponse(client.games)
        self.standings = StandingsWithRawResponse(client.standings)
        self.leaders = LeadersWithRawResponse(client.leaders)
        self.reports = ReportsWithRawResponse(client.reports)
        self.plays = PlaysWithRawResponse(client.plays)
        self.webhooks = WebhooksWithRawResponse(client.webhooks)
        self.notifications = NotificationsWithRawResponse(client.notifications)
        self.replays = ReplaysWithRawResponse(client.replays)
        self.reporters = ReportersWithRawResponse(client.reporters)
