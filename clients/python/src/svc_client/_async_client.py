"""The asyncio client, :class:`AsyncSvc`: the same resources as :class:`~svc_client.Svc`,
with coroutines for single records and :class:`~svc_client.AsyncPageRequest` for lists."""
from __future__ import annotations

import asyncio
import json
from types import TracebackType
from typing import Any, AsyncIterator, Dict, List, Literal, Mapping, Optional, Sequence, Type, TypeVar, Union, cast, overload

import httpx

from ._base import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    NOT_GIVEN,
    NdjsonSplitter,
    NotGiven,
    Params,
    clean_params,
    data_of,
    default_headers,
    encode_body,
    export_resume_id,
    new_idempotency_key,
    page_of,
    path_segment,
    raise_for_answer,
    resolve_config,
    retry_delay,
    should_retry,
)
from ._client import _competition_filters
from ._errors import APIConnectionError, APITimeoutError
from ._stream import AsyncStream, make_stream_core
from .pagination import AsyncPage, AsyncPageRequest
from .types import (
    Competition,
    CompetitionStatus,
    DeletedWebhook,
    DeliveryStatus,
    Event,
    Game,
    Me,
    Notification,
    Play,
    PlayInput,
    Player,
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

__all__ = ["AsyncSvc"]

T = TypeVar("T")


class _Resource:
    def __init__(self, client: "AsyncSvc") -> None:
        self._client = client


class Teams(_Resource):
    def list(self, *, sport: Optional[str] = None, league: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[Team]:
        """Teams, filtered to the key's sports and leagues. Iterate the page for every team."""
        return self._client._get_page("/v1/teams", {"sport": sport, "league": league, "limit": limit, "cursor": cursor}, Team)

    async def get(self, team_id: str) -> Team:
        """One team by id (``team:<league>:<code>``)."""
        return await self._client._get_one(f"/v1/teams/{path_segment(team_id)}", {}, Team)

    def roster(self, team_id: str, *, season: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[RosterEntry]:
        """The team's players, for one season (``wc_2022`` or ``2022``) or all."""
        return self._client._get_page(f"/v1/teams/{path_segment(team_id)}/roster", {"season": season, "limit": limit, "cursor": cursor}, RosterEntry)


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
    ) -> AsyncPageRequest[Player]:
        """Players; ``search`` matches names (accent and case insensitive)."""
        params = {"sport": sport, "league": league, "team": team, "season": season, "search": search, "limit": limit, "cursor": cursor}
        return self._client._get_page("/v1/players", params, Player)

    async def get(self, player_id: str) -> Player:
        return await self._client._get_one(f"/v1/players/{path_segment(player_id)}", {}, Player)


class Venues(_Resource):
    def list(self, *, sport: Optional[str] = None, league: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[Venue]:
        return self._client._get_page("/v1/venues", {"sport": sport, "league": league, "limit": limit, "cursor": cursor}, Venue)

    async def get(self, venue_id: str) -> Venue:
        return await self._client._get_one(f"/v1/venues/{path_segment(venue_id)}", {}, Venue)


class Seasons(_Resource):
    def list(self, *, league: Optional[str] = None, sport: Optional[str] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[Season]:
        """Seasons with their competition and event counts: how far the archive goes back."""
        return self._client._get_page("/v1/seasons", {"league": league, "sport": sport, "limit": limit, "cursor": cursor}, Season)


class Competitions(_Resource):
    def list(
        self,
        *,
        sport: Optional[str] = None,
        league: Optional[str] = None,
        season: Optional[str] = None,
        date: Optional[str] = None,
        team: Optional[str] = None,
        player: Optional[str] = None,
        status: Optional[CompetitionStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncPageRequest[Competition]:
        """Competitions by date; ``date`` is ``today`` or ``YYYY-MM-DD``, ``team`` a team id."""
        return self._client._get_page("/v1/competitions", _competition_filters(sport, league, season, date, team, player, status, limit, cursor), Competition)

    async def get(self, competition_id: str) -> Competition:
        return await self._client._get_one(f"/v1/competitions/{path_segment(competition_id)}", {}, Competition)

    def plays(self, competition_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[Play]:
        """The competition's official plays in ``seq`` order (product ``archive`` or ``live``)."""
        return self._client._get_page(f"/v1/competitions/{path_segment(competition_id)}/plays", {"limit": limit, "cursor": cursor}, Play)


class Games(_Resource):
    def list(
        self,
        *,
        sport: Optional[str] = None,
        league: Optional[str] = None,
        season: Optional[str] = None,
        date: Optional[str] = None,
        team: Optional[str] = None,
        player: Optional[str] = None,
        status: Optional[CompetitionStatus] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> AsyncPageRequest[Game]:
        """Team-sport games with their ``eligibility`` (``date="today"`` for the live ones)."""
        return self._client._get_page("/v1/games", _competition_filters(sport, league, season, date, team, player, status, limit, cursor), Game)

    async def get(self, game_id: str) -> Game:
        return await self._client._get_one(f"/v1/games/{path_segment(game_id)}", {}, Game)

    def events(self, game_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[Event]:
        """The game's confirmed events, in order."""
        return self._client._get_page(f"/v1/games/{path_segment(game_id)}/events", {"limit": limit, "cursor": cursor}, Event)


class Reports(_Resource):
    async def create(self, report: Union[ReportInput, Sequence[ReportInput]], *, idempotency_key: Optional[str] = None) -> List[ReportResult]:
        """Submits one crowd report, or a list of up to 500 (product ``report``).

        Returns one result per report: its ``rpt_…`` id and the event it started or joined.
        """
        body: object = {"reports": list(report)} if isinstance(report, (list, tuple)) else report
        return await self._client._post_list("/v1/reports", body, idempotency_key, ReportResult)


class Plays(_Resource):
    async def create(self, competition_id: str, play: Union[PlayInput, Sequence[PlayInput]], *, idempotency_key: Optional[str] = None) -> List[Play]:
        """Appends official plays to a competition (product ``source``); returns the stored plays."""
        body: object = {"plays": list(play)} if isinstance(play, (list, tuple)) else play
        return await self._client._post_list(f"/v1/competitions/{path_segment(competition_id)}/plays", body, idempotency_key, Play)


class Webhooks(_Resource):
    async def create(
        self,
        *,
        url: str,
        sports: Optional[Sequence[str]] = None,
        tier: Literal["confirmed"] = "confirmed",
        description: Optional[str] = None,
        idempotency_key: Optional[str] = None,
    ) -> WebhookEndpointWithSecret:
        """Registers an endpoint; the answer's ``secret`` is shown only here: store it."""
        body: Dict[str, object] = {"url": url, "tier": tier}
        if sports is not None:
            body["sports"] = list(sports)
        if description is not None:
            body["description"] = description
        return await self._client._post_one("/v1/webhooks", body, idempotency_key, WebhookEndpointWithSecret)

    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[WebhookEndpoint]:
        return self._client._get_page("/v1/webhooks", {"limit": limit, "cursor": cursor}, WebhookEndpoint)

    async def get(self, webhook_id: str) -> WebhookEndpoint:
        return await self._client._get_one(f"/v1/webhooks/{path_segment(webhook_id)}", {}, WebhookEndpoint)

    async def update(
        self,
        webhook_id: str,
        *,
        url: Union[str, NotGiven] = NOT_GIVEN,
        sports: Union[Sequence[str], None, NotGiven] = NOT_GIVEN,
        description: Union[str, None, NotGiven] = NOT_GIVEN,
    ) -> WebhookEndpoint:
        """Changes the fields given; ``sports=None`` means every sport, ``description=None`` clears it."""
        body: Dict[str, object] = {}
        if not isinstance(url, NotGiven):
            body["url"] = url
        if not isinstance(sports, NotGiven):
            body["sports"] = None if sports is None else list(sports)
        if not isinstance(description, NotGiven):
            body["description"] = description
        return await self._client._request_one("PATCH", f"/v1/webhooks/{path_segment(webhook_id)}", body, None, WebhookEndpoint)

    async def delete(self, webhook_id: str) -> DeletedWebhook:
        """Deletes the endpoint and its deliveries."""
        return await self._client._request_one("DELETE", f"/v1/webhooks/{path_segment(webhook_id)}", NOT_GIVEN, None, DeletedWebhook)

    def deliveries(self, webhook_id: str, *, status: Optional[DeliveryStatus] = None, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[WebhookDelivery]:
        """The endpoint's deliveries, newest first, optionally of one ``status``."""
        return self._client._get_page(f"/v1/webhooks/{path_segment(webhook_id)}/deliveries", {"status": status, "limit": limit, "cursor": cursor}, WebhookDelivery)

    async def delivery(self, webhook_id: str, delivery_id: str) -> WebhookDeliveryWithAttempts:
        """One delivery with its attempt log (status codes, durations, response excerpts)."""
        path = f"/v1/webhooks/{path_segment(webhook_id)}/deliveries/{path_segment(delivery_id)}"
        return await self._client._get_one(path, {}, WebhookDeliveryWithAttempts)

    async def replay(
        self,
        webhook_id: str,
        *,
        delivery_id: Optional[str] = None,
        from_: Optional[str] = None,
        to: Optional[str] = None,
        idempotency_key: Optional[str] = None,
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
        return await self._client._post_one(f"/v1/webhooks/{path_segment(webhook_id)}/replay", body, idempotency_key, ReplayResult)

    async def enable(self, webhook_id: str) -> WebhookEndpoint:
        """Re-enables a disabled endpoint."""
        return await self._client._post_one(f"/v1/webhooks/{path_segment(webhook_id)}/enable", NOT_GIVEN, None, WebhookEndpoint)

    async def rotate_secret(self, webhook_id: str) -> WebhookEndpointWithSecret:
        """A new secret (in the answer, once); the old one keeps signing beside it for 24 h."""
        return await self._client._post_one(f"/v1/webhooks/{path_segment(webhook_id)}/rotate-secret", NOT_GIVEN, None, WebhookEndpointWithSecret)

    async def test(self, webhook_id: str) -> WebhookTestResult:
        """Sends a signed ``type: "test"`` event to the endpoint, outside the retry budget."""
        return await self._client._post_one(f"/v1/webhooks/{path_segment(webhook_id)}/test", NOT_GIVEN, None, WebhookTestResult)


class Notifications(_Resource):
    def list(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> AsyncPageRequest[Notification]:
        """Notices for the key (e.g. a webhook endpoint was disabled), newest first."""
        return self._client._get_page("/v1/notifications", {"limit": limit, "cursor": cursor}, Notification)


class AsyncSvc:
    """The svc API for asyncio; arguments and behaviour as :class:`~svc_client.Svc`.

    ::

        async with AsyncSvc() as svc:
            me = await svc.me()
            async for competition in svc.competitions.list(league="wc", season="2022"):
                ...
            async with svc.stream(sport="soccer") as events:
                async for event in events:
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
        self.api_key, self.base_url = resolve_config(api_key, base_url)
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.timeout = timeout
        self.max_retries = max_retries
        self._owns_http = http_client is None
        self._http = http_client if http_client is not None else httpx.AsyncClient(timeout=timeout, follow_redirects=False)
        self._headers = default_headers(self.api_key)
        self.teams = Teams(self)
        self.players = Players(self)
        self.venues = Venues(self)
        self.seasons = Seasons(self)
        self.competitions = Competitions(self)
        self.games = Games(self)
        self.reports = Reports(self)
        self.plays = Plays(self)
        self.webhooks = Webhooks(self)
        self.notifications = Notifications(self)

    async def close(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> "AsyncSvc":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        await self.close()

    async def me(self) -> Me:
        """The calling key: plan, products, sports, rate limit and stream connections."""
        return await self._get_one("/v1/me", {}, Me)

    @overload
    def export(
        self, *, league: str, season: str, entity: Literal["events"] = "events", from_: Optional[str] = None, to: Optional[str] = None, after: Optional[str] = None
    ) -> AsyncIterator[Event]: ...

    @overload
    def export(
        self, *, league: str, season: str, entity: Literal["plays"], from_: Optional[str] = None, to: Optional[str] = None, after: Optional[str] = None
    ) -> AsyncIterator[Play]: ...

    @overload
    def export(
        self, *, league: str, season: str, entity: Literal["competitions"], from_: Optional[str] = None, to: Optional[str] = None, after: Optional[str] = None
    ) -> AsyncIterator[Competition]: ...

    def export(
        self, *, league: str, season: str, entity: str = "events", from_: Optional[str] = None, to: Optional[str] = None, after: Optional[str] = None
    ) -> AsyncIterator[Any]:
        """Every record of a season for ``async for``, resuming after drops; see :meth:`Svc.export`."""
        params: Dict[str, Optional[str]] = {"league": league, "season": season, "entity": entity, "from": from_, "to": to}
        return self._export(params, entity, after)

    def stream(
        self,
        *,
        sport: Union[str, Sequence[str], None] = None,
        league: Union[str, Sequence[str], None] = None,
        game: Union[str, Sequence[str], None] = None,
        tier: Optional[Tier] = None,
        since: Optional[str] = None,
        heartbeat_timeout: Optional[float] = None,
        max_reconnects: Optional[int] = None,
    ) -> AsyncStream:
        """Live events for ``async for``; see :meth:`Svc.stream` and :class:`AsyncStream`."""
        core = make_stream_core(
            base_url=self.base_url,
            api_key=self.api_key,
            sport=sport,
            league=league,
            game=game,
            tier=tier,
            since=since,
            heartbeat_timeout=heartbeat_timeout,
            max_reconnects=max_reconnects,
            open_timeout=self.timeout,
        )
        return AsyncStream(core)

    async def _send(
        self,
        method: str,
        path: str,
        *,
        params: Optional[Params] = None,
        body: object = NOT_GIVEN,
        idempotency_key: Optional[str] = None,
        stream: bool = False,
    ) -> httpx.Response:
        headers = dict(self._headers)
        content: Optional[bytes] = None
        if not isinstance(body, NotGiven):
            content = encode_body(body)
            headers["Content-Type"] = "application/json"
        if method == "POST":
            headers["Idempotency-Key"] = idempotency_key or new_idempotency_key()
        request = self._http.build_request(method, self.base_url + path, params=clean_params(params or {}), content=content, headers=headers, timeout=self.timeout)
        retries = 0
        while True:
            try:
                response = await self._http.send(request, stream=stream)
            except httpx.TimeoutException as exc:
                if retries < self.max_retries:
                    await asyncio.sleep(retry_delay(retries))
                    retries += 1
                    continue
                raise APITimeoutError(cause=exc) from exc
            except httpx.TransportError as exc:
                if retries < self.max_retries:
                    await asyncio.sleep(retry_delay(retries))
                    retries += 1
                    continue
                raise APIConnectionError(f"Connection error: {exc}", cause=exc) from exc
            if not 200 <= response.status_code < 300:
                await response.aread()  # error bodies are small; streamed or not, read them whole
                if retries < self.max_retries and should_retry(response):
                    delay = retry_delay(retries, response.headers)
                    await response.aclose()
                    await asyncio.sleep(delay)
                    retries += 1
                    continue
                await response.aclose()
                raise_for_answer(response)
            return response

    async def _get_one(self, path: str, params: Params, cast_to: Type[T]) -> T:
        return cast(T, data_of(await self._send("GET", path, params=params)))

    async def _request_one(self, method: str, path: str, body: object, idempotency_key: Optional[str], cast_to: Type[T]) -> T:
        return cast(T, data_of(await self._send(method, path, body=body, idempotency_key=idempotency_key)))

    async def _post_one(self, path: str, body: object, idempotency_key: Optional[str], cast_to: Type[T]) -> T:
        return await self._request_one("POST", path, body, idempotency_key, cast_to)

    async def _post_list(self, path: str, body: object, idempotency_key: Optional[str], cast_to: Type[T]) -> List[T]:
        return cast(List[T], data_of(await self._send("POST", path, body=body, idempotency_key=idempotency_key)))

    def _get_page(self, path: str, params: Params, cast_to: Type[T]) -> AsyncPageRequest[T]:
        async def fetch(cursor: Optional[str]) -> AsyncPage[T]:
            data, next_cursor = page_of(await self._send("GET", path, params={**params, "cursor": cursor}))
            return AsyncPage(cast(List[T], data), next_cursor, fetch)

        initial = params.get("cursor")
        return AsyncPageRequest(lambda: fetch(initial if isinstance(initial, str) else None))

    async def _export(self, params: Mapping[str, Optional[str]], entity: str, after: Optional[str]) -> AsyncIterator[Any]:
        last = after
        failures = 0
        while True:
            response = await self._send("GET", "/v1/export", params={**params, "after": last}, stream=True)
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
            if progressed:
                failures = 0
                continue
            if failures >= self.max_retries:
                raise APIConnectionError(f"export: the connection dropped {failures + 1} times without a record: {error}", cause=error)
            await asyncio.sleep(retry_delay(failures))
            failures += 1
