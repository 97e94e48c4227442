"""The HTTP transport of the ``openai`` backend, on aiohttp.

One :class:`aiohttp.ClientSession` per client, created lazily inside the running event
loop (the backend makes a client per loop) and closed by :meth:`AiohttpClient.aclose`.
Its :class:`aiohttp.TCPConnector` is sized from the backend's concurrency (no
100-connection ceiling), keeps connections alive and caches DNS; responses are parsed by
aiohttp's C parser. At 64+ requests in flight httpx cost ~3 ms of CPU per request on a
2-core machine (issue 11); aiohttp keeps the client from being the bottleneck.

Proxies: ``HTTP_PROXY`` / ``HTTPS_PROXY`` / ``NO_PROXY`` are honoured as aiohttp's
``trust_env`` reads them (:func:`aiohttp.helpers.get_env_proxy_for_url`), looked up once
per origin instead of per request. ``trust_env`` itself stays off: it would also read
``~/.netrc`` on every request, and a netrc entry for the API host clashes with the
``Authorization`` header aiohttp is given.

Failures raise :class:`TransportError` with a ``kind``: ``"timeout"`` (the whole exchange
exceeded the timeout), ``"unreachable"`` (could not connect) or ``"connection"`` (the
connection broke mid-exchange, or the response was not valid HTTP).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # aiohttp (~0.2 s to import) is imported when the first session opens:
    import aiohttp  # a cached re-run that sends nothing never pays for it
    from yarl import URL

#: Seconds a resolved host name is cached by the connector.
DNS_CACHE_S = 300
#: Seconds an idle keep-alive connection is kept open.
KEEPALIVE_S = 30.0


class TransportError(Exception):
    """No HTTP response: ``kind`` is ``"timeout"``, ``"unreachable"`` or ``"connection"``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class HttpResult:
    """An HTTP response: ``status``, ``headers`` (case-insensitive), raw ``body`` bytes."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (invalid bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


class Client(Protocol):
    """What the backend needs from an HTTP client."""

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: dict[str, str], timeout_s: float) -> HttpResult:
        """Send one request and read the whole response; raises :class:`TransportError`."""
        ...

    async def aclose(self) -> None:
        """Close every connection."""
        ...

    def abort(self) -> None:
        """Cut every connection now: requests in flight fail at once."""
        ...


_Proxy = tuple["URL | None", "aiohttp.BasicAuth | None"]


class AiohttpClient:
    """:class:`Client` on one aiohttp session (see the module docstring);
    ``max_connections`` bounds the connections open at once (0: no bound)."""

    def __init__(self, max_connections: int) -> None:
        self._limit = max(0, max_connections)
        self._session: aiohttp.ClientSession | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._timeouts: dict[float, aiohttp.ClientTimeout] = {}
        self._urls: dict[str, URL] = {}
        self._proxies: dict[tuple[str, str | None, int | None], _Proxy] = {}

    def _get_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=self._limit, limit_per_host=0,
                                             ttl_dns_cache=DNS_CACHE_S,
                                             keepalive_timeout=KEEPALIVE_S)
            self._session = aiohttp.ClientSession(
                connector=connector, cookie_jar=aiohttp.DummyCookieJar(),
                headers={"Accept": "application/json"})
        return self._session

    def _proxy_for(self, url: URL) -> _Proxy:
        key = (url.scheme, url.host, url.port)
        proxy = self._proxies.get(key)
        if proxy is None:
            from aiohttp.helpers import get_env_proxy_for_url

            try:
                proxy = get_env_proxy_for_url(url)
            except LookupError:
                proxy = (None, None)
            self._proxies[key] = proxy
        return proxy

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: dict[str, str], timeout_s: float) -> HttpResult:
        """Send one request; ``timeout_s`` bounds connect + send + receive together.
        Raises :class:`TransportError`."""
        import aiohttp
        from yarl import URL

        timeout = self._timeouts.get(timeout_s)
        if timeout is None:
            timeout = self._timeouts[timeout_s] = aiohttp.ClientTimeout(total=timeout_s)
        target = self._urls.get(url)
        if target is None:
            try:
                target = self._urls[url] = URL(url)
            except ValueError as exc:
                raise TransportError("unreachable", f"invalid URL: {exc}") from None
        proxy, proxy_auth = self._proxy_for(target)
        session = self._get_session()
        try:
            async with session.request(method, target, data=body, headers=headers,
                                       timeout=timeout, proxy=proxy,
                                       proxy_auth=proxy_auth) as resp:
                return HttpResult(resp.status, resp.headers, await resp.read())
        except TimeoutError:  # includes aiohttp.ServerTimeoutError
            raise TransportError("timeout", f"timeout after {timeout_s:g} s") from None
        except (aiohttp.ClientConnectorError, aiohttp.InvalidURL) as exc:
            raise TransportError("unreachable",
                                 f"connection error: {type(exc).__name__}: {exc}") from None
        except (aiohttp.ClientError, ValueError) as exc:
            # disconnected, payload, OS error, bad HTTP; ValueError: a refused header
            raise TransportError("connection",
                                 f"connection error: {type(exc).__name__}: {exc}") from None

    def abort(self) -> None:
        """Close the session now (circuit open): requests in flight fail with
        ``"connection"``; a later request opens a new session."""
        session, self._session = self._session, None
        if session is not None and not session.closed:
            task = asyncio.get_running_loop().create_task(session.close())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Close the session and its connections."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)


def make_client(max_connections: int) -> Client:
    """The backend's HTTP client, allowing ``max_connections`` connections at once."""
    return AiohttpClient(max_connections)
