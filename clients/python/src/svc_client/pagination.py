"""Pages of list answers, and walking them.

Every list method returns a page. Iterating a page walks every item of the list, fetching the
next pages as it goes; ``iter_pages()`` walks the pages themselves.

Blocking::

    page = svc.competitions.list(league="wc", limit=10)   # one request
    page.data, page.next_cursor, page.has_next_page()
    for competition in svc.competitions.list(league="wc"):  # every item, page after page
        ...

asyncio: ``await`` a list call for its first page, or ``async for`` over it for every item::

    page = await svc.competitions.list(league="wc", limit=10)
    async for competition in svc.competitions.list(league="wc"):
        ...
"""
from __future__ import annotations

from typing import AsyncIterator, Awaitable, Callable, Generator, Generic, Iterator, List, Optional, TypeVar

__all__ = ["SyncPage", "AsyncPage", "AsyncPageRequest", "first_page", "async_first_page"]

T = TypeVar("T")


class SyncPage(Generic[T]):
    """One page of a list (blocking client).

    Attributes:
        data: the records of this page.
        next_cursor: the cursor of the next page, ``None`` on the last one.
    """

    def __init__(self, data: List[T], next_cursor: Optional[str], fetch: Callable[[str], "SyncPage[T]"]) -> None:
        self.data = data
        self.next_cursor = next_cursor
        self._fetch = fetch

    def has_next_page(self) -> bool:
        return self.next_cursor is not None

    def get_next_page(self) -> "SyncPage[T]":
        """Fetches the next page; ``ValueError`` on the last one."""
        if self.next_cursor is None:
            raise ValueError("this is the last page; check has_next_page() first")
        return self._fetch(self.next_cursor)

    def iter_pages(self) -> Iterator["SyncPage[T]"]:
        """This page, then every following page."""
        page: SyncPage[T] = self
        yield page
        while page.next_cursor is not None:
            page = page.get_next_page()
            yield page

    def __iter__(self) -> Iterator[T]:
        """Every item from this page on, across pages."""
        for page in self.iter_pages():
            yield from page.data

    def __repr__(self) -> str:
        return f"SyncPage(data=<{len(self.data)} items>, next_cursor={self.next_cursor!r})"


class AsyncPage(Generic[T]):
    """One page of a list (asyncio client); ``async for`` walks every item across pages."""

    def __init__(self, data: List[T], next_cursor: Optional[str], fetch: Callable[[str], Awaitable["AsyncPage[T]"]]) -> None:
        self.data = data
        self.next_cursor = next_cursor
        self._fetch = fetch

    def has_next_page(self) -> bool:
        return self.next_cursor is not None

    async def get_next_page(self) -> "AsyncPage[T]":
        if self.next_cursor is None:
            raise ValueError("this is the last page; check has_next_page() first")
        return await self._fetch(self.next_cursor)

    async def iter_pages(self) -> AsyncIterator["AsyncPage[T]"]:
        """This page, then every following page."""
        page: AsyncPage[T] = self
        yield page
        while page.next_cursor is not None:
            page = await page.get_next_page()
            yield page

    async def _items(self) -> AsyncIterator[T]:
        async for page in self.iter_pages():
            for item in page.data:
                yield item

    def __aiter__(self) -> AsyncIterator[T]:
        return self._items()

    def __repr__(self) -> str:
        return f"AsyncPage(data=<{len(self.data)} items>, next_cursor={self.next_cursor!r})"


class AsyncPageRequest(Generic[T]):
    """What an asyncio list call returns: awaitable (the first page) and async-iterable (every
    item across pages). No request is sent until it is awaited or iterated."""

    def __init__(self, first: Callable[[], Awaitable[AsyncPage[T]]]) -> None:
        self._first = first

    def __await__(self) -> Generator[object, None, AsyncPage[T]]:
        return self._first().__await__()

    async def iter_pages(self) -> AsyncIterator[AsyncPage[T]]:
        page = await self._first()
        async for p in page.iter_pages():
            yield p

    async def _items(self) -> AsyncIterator[T]:
        page = await self._first()
        async for item in page:
            yield item

    def __aiter__(self) -> AsyncIterator[T]:
        return self._items()


def first_page(fetch: Callable[[], SyncPage[T]]) -> SyncPage[T]:
    """What a blocking list call returns: its first page, fetched at once."""
    return fetch()


def async_first_page(fetch: Callable[[], Awaitable[AsyncPage[T]]]) -> AsyncPageRequest[T]:
    """What an asyncio list call returns: a request for its first page, sent when awaited or
    iterated."""
    return AsyncPageRequest(fetch)
