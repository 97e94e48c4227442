"""A small HTTP/1.1 client on asyncio streams: keep-alive pools with no connection ceiling.

Why not httpx here: at 64+ requests in flight its pool re-scans every connection per
queued request and ``post`` costs ~3 ms of CPU per request on a 2-core machine (issue 11);
this client costs a fraction of that, so the client is never the bottleneck in front of a
served model. It does exactly what chat completions need: one request at a time per
connection, ``Content-Length`` or chunked bodies, TLS for ``https://``, idle connections
reused last-in first-out (at most :data:`MAX_IDLE_PER_HOST` kept per host). Requests that
must go through an HTTP proxy (``*_PROXY`` environment variables) use :class:`HttpxClient`.

Failures raise :class:`TransportError` with a ``kind``: ``"timeout"`` (the whole exchange
exceeded the timeout), ``"unreachable"`` (could not connect) or ``"connection"`` (the
connection broke mid-exchange).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import ssl

#: Idle keep-alive connections kept per (scheme, host, port).
MAX_IDLE_PER_HOST = 1024
#: Largest response header block accepted, bytes.
MAX_HEADER_BYTES = 64 * 1024


class TransportError(Exception):
    """No HTTP response: ``kind`` is ``"timeout"``, ``"unreachable"`` or ``"connection"``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class HttpResult:
    """An HTTP response: ``status``, lower-cased ``headers``, raw ``body`` bytes."""

    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


class Client(Protocol):
    """What the backend needs from an HTTP client."""

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: dict[str, str], timeout_s: float) -> HttpResult: ...

    async def aclose(self) -> None: ...

    def abort(self) -> None: ...


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer


class NativeClient:
    """HTTP/1.1 client with per-host keep-alive pools (see the module docstring)."""

    def __init__(self) -> None:
        self._idle: dict[tuple[str, str, int], list[_Conn]] = {}
        self._busy: set[_Conn] = set()
        self._ssl: ssl.SSLContext | None = None

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: dict[str, str], timeout_s: float) -> HttpResult:
        """Send one request; ``timeout_s`` bounds connect + send + receive together.
        A request on a reused connection that the server had closed is resent once on a
        fresh connection. Raises :class:`TransportError`."""
        parts = urlsplit(url)
        tls = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if tls else 80)
        key = (parts.scheme, host, port)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        lines = [f"{method} {target} HTTP/1.1", f"Host: {parts.netloc}",
                 "Accept: application/json", "Connection: keep-alive"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        if body is not None:
            lines.append(f"Content-Length: {len(body)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
        payload = head + body if body is not None else head
        try:
            async with asyncio.timeout(timeout_s):
                for attempt in range(2):
                    conn, reused = await self._connect(key, tls, fresh=attempt > 0)
                    try:
                        return await self._exchange(key, conn, payload, method)
                    except (ConnectionError, asyncio.IncompleteReadError) as exc:
                        self._discard(conn)
                        if not reused:
                            raise TransportError(
                                "connection", f"connection lost: {type(exc).__name__}") from None
                    except BaseException:
                        self._discard(conn)
                        raise
                raise TransportError("connection", "connection lost twice")
        except TimeoutError:
            raise TransportError("timeout", f"timeout after {timeout_s:g} s") from None

    async def _connect(self, key: tuple[str, str, int], tls: bool,
                       fresh: bool) -> tuple[_Conn, bool]:
        idle = None if fresh else self._idle.get(key)
        while idle:
            conn = idle.pop()
            if not conn.writer.is_closing() and not conn.reader.at_eof():
                self._busy.add(conn)
                return conn, True
            conn.writer.close()
        context = None
        if tls:
            if self._ssl is None:
                import ssl

                self._ssl = ssl.create_default_context()
            context = self._ssl
        try:
            reader, writer = await asyncio.open_connection(key[1], key[2], ssl=context,
                                                           limit=1 << 20)
        except OSError as exc:
            raise TransportError("unreachable",
                                 f"connection error: {type(exc).__name__}: {exc}") from None
        conn = _Conn(reader, writer)
        self._busy.add(conn)
        return conn, False

    async def _exchange(self, key: tuple[str, str, int], conn: _Conn, payload: bytes,
                        method: str) -> HttpResult:
        conn.writer.write(payload)
        await conn.writer.drain()
        reader = conn.reader
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            raise TransportError("connection", "response header too large") from None
        status_line, *header_lines = raw[:-4].decode("latin-1").split("\r\n")
        try:
            status = int(status_line.split(" ", 2)[1])
        except (IndexError, ValueError):
            raise TransportError("connection",
                                 f"not an HTTP response: {status_line[:80]!r}") from None
        headers: dict[str, str] = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            body = b""
        elif headers.get("transfer-encoding", "").lower().endswith("chunked"):
            body = await _read_chunked(reader)
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        else:  # body runs to the end of the connection
            body = await reader.read()
            headers["connection"] = "close"
        self._busy.discard(conn)
        connection = headers.get("connection", "").lower()
        if (connection == "close" or reader.at_eof()
                or (status_line.startswith("HTTP/1.0") and connection != "keep-alive")):
            conn.writer.close()
        else:
            idle = self._idle.setdefault(key, [])
            if len(idle) < MAX_IDLE_PER_HOST:
                idle.append(conn)
            else:
                conn.writer.close()
        return HttpResult(status, headers, body)

    def _discard(self, conn: _Conn) -> None:
        self._busy.discard(conn)
        conn.writer.close()

    def abort(self) -> None:
        """Close every connection now: requests in flight fail at once (circuit open)."""
        for conn in list(self._busy):
            conn.writer.transport.abort()
        self._busy.clear()
        for idle in self._idle.values():
            for conn in idle:
                conn.writer.transport.abort()
        self._idle.clear()

    async def aclose(self) -> None:
        """Close idle connections (busy ones are closed by their requests)."""
        for idle in self._idle.values():
            for conn in idle:
                conn.writer.close()
        self._idle.clear()


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    chunks: list[bytes] = []
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                pass
            return b"".join(chunks)
        chunks.append(await reader.readexactly(size))
        await reader.readexactly(2)


class HttpxClient:
    """The same interface on httpx (used when a proxy applies); pool sized by
    ``max_connections``."""

    def __init__(self, max_connections: int) -> None:
        import httpx

        self._httpx = httpx
        limits = httpx.Limits(max_connections=max_connections,
                              max_keepalive_connections=max_connections)
        self._client = httpx.AsyncClient(limits=limits, trust_env=True)

    async def request(self, method: str, url: str, body: bytes | None,
                      headers: dict[str, str], timeout_s: float) -> HttpResult:
        httpx = self._httpx
        try:
            async with asyncio.timeout(timeout_s):
                r = await self._client.request(method, url, content=body, headers=headers,
                                               timeout=timeout_s)
        except (TimeoutError, httpx.TimeoutException):
            raise TransportError("timeout", f"timeout after {timeout_s:g} s") from None
        except httpx.ConnectError as exc:
            raise TransportError("unreachable", f"connection error: ConnectError: {exc}"
                                 ) from None
        except httpx.HTTPError as exc:
            raise TransportError("connection",
                                 f"connection error: {type(exc).__name__}: {exc}") from None
        return HttpResult(r.status_code, {k.lower(): v for k, v in r.headers.items()},
                          r.content)

    def abort(self) -> None:
        return None

    async def aclose(self) -> None:
        await self._client.aclose()


def uses_proxy(url: str) -> bool:
    """True when the environment routes ``url`` through a proxy (``HTTP(S)_PROXY`` /
    ``ALL_PROXY``, minus ``NO_PROXY``)."""
    import urllib.request

    parts = urlsplit(url)
    proxies = urllib.request.getproxies()
    if not (proxies.get(parts.scheme) or proxies.get("all")):
        return False
    return not urllib.request.proxy_bypass(parts.hostname or "")


def make_client(urls: list[str], kind: str, max_connections: int) -> Client:
    """``kind``: ``"native"``, ``"httpx"`` or ``"auto"`` (httpx when a proxy applies)."""
    if kind == "httpx" or (kind == "auto" and any(uses_proxy(u) for u in urls)):
        return HttpxClient(max_connections)
    return NativeClient()
