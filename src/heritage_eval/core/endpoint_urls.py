"""Endpoint URLs and the options of a backend serving several endpoints (no network here).

- :class:`EndpointOptions`: :class:`~heritage_eval.core.backends.BackendOptions` plus the
  list of endpoint URLs and the run's ``--concurrency`` (every other backend ignores both).
- :class:`EndpointError`: a setup the pre-flight check refuses (message says why).
- :func:`endpoint_root`: the one rule for an endpoint URL (``--base-url``, a line of
  ``--base-urls-file``, ``$OPENAI_BASE_URL``, a suite file's ``base_url``), written out in
  ``docs/retries.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from heritage_eval.core.backends import BackendOptions, ModelSpecError
from heritage_eval.core.datapath import read_regular_text


@dataclass(frozen=True)
class EndpointOptions(BackendOptions):
    """:class:`BackendOptions` with ``base_urls`` (every endpoint root serving the model;
    when empty, ``base_url`` alone) and ``concurrency`` (the run's ``--concurrency``, or
    ``None``: the backend's default)."""

    base_urls: tuple[str, ...] = ()
    concurrency: int | None = None


class EndpointError(ModelSpecError):
    """The endpoint setup cannot work (unreachable, wrong path, key missing or refused).

    ``kind`` is the failure kind recorded in responses (``"unreachable"``, ``"auth"``,
    ``"not_found"``, ``"timeout"``, ``"server_error"``, ``"config"``)."""

    def __init__(self, message: str, kind: str = "config") -> None:
        super().__init__(message)
        self.kind = kind


def is_local_url(url: str) -> bool:
    """True for loopback hosts (127.0.0.0/8, ``::1``, ``localhost``): no key required."""
    import ipaddress

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _shown_url(url: str) -> str:
    """``url`` safe to print: scheme, host, port and path only (no user-info, query or
    fragment, where a secret may sit)."""
    parts = urlsplit(url.split("#", 1)[0].split("?", 1)[0])
    host = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else "(not a URL)"


def endpoint_root(url: str, option: str = "--base-url") -> str:
    """The endpoint root that requests are sent under, from a URL given as ``option``.
    The rule (docs/how-to/served-model.md, "Endpoint URLs"):

    - the scheme is ``http`` or ``https`` and there is a host (and a valid port, if any);
    - ``user:password@`` is removed (never sent, never stored; the key comes from
      ``--api-key-env``; the redactor masks it in any text);
    - runs of ``/`` in the path become one and trailing ``/`` are removed
      (``http://h//v1/`` -> ``http://h/v1``); a root without ``/v1`` is kept as given
      (the pre-flight's 404 then suggests adding ``/v1``);
    - a query string is kept and stays at the end of every request URL
      (:func:`endpoint_url`: ``…/v1?api-version=X`` -> ``…/v1/models?api-version=X``);
      its key-like values (``key``, ``api_key``, ``token``, …) are masked in every file
      and message by the redactor — the key itself belongs in ``--api-key-env``;
    - a fragment (``#…``) is refused: a client never sends it, so it can only be a
      mistake (or a secret in the wrong place).

    Raises :class:`EndpointError` (kind ``config``; a usage error, exit 2) naming
    ``option``; the message never repeats a user-info, query or fragment."""
    text = url.strip()
    shown = _shown_url(text)
    if "#" in text:
        raise EndpointError(f"{option} must not carry a fragment ('#…'), got {shown} with "
                            "one: give the API key in the environment variable named by "
                            "--api-key-env")
    parts = urlsplit(text)
    try:
        port_ok = parts.port is None or parts.port > 0
    except ValueError:  # not a number, or past 65535
        port_ok = False
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname or not port_ok:
        raise EndpointError(f"{option}: not an http(s) URL with a host: {shown}")
    path = re.sub(r"/{2,}", "/", parts.path).rstrip("/")
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme.lower(), host, path, parts.query, ""))


def endpoint_url(root: str, path: str) -> str:
    """``path`` (e.g. ``/chat/completions``) under an endpoint ``root`` of
    :func:`endpoint_root`, before the root's query string, if any:
    ``endpoint_url("http://h/v1?v=2", "/models") == "http://h/v1/models?v=2"``."""
    base, sep, query = root.partition("?")
    return f"{base.rstrip('/')}/{path.lstrip('/')}" + (f"?{query}" if sep else "")


def read_urls_file(path: str | Path) -> list[str]:
    """Endpoint URLs from a text file: one per line; blank lines and ``#`` comments
    (whole-line or trailing) are skipped. Raises ``OSError`` when unreadable and
    ``ValueError`` when it names no URL or a line breaks the :func:`endpoint_root` rule
    (the message gives ``FILE:LINE``)."""
    urls = []
    for number, line in enumerate(read_regular_text(path).splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            urls.append(endpoint_root(text, f"{path}:{number}"))
        except EndpointError as exc:
            raise ValueError(str(exc)) from None
    if not urls:
        raise ValueError(f"{path} lists no endpoint URL")
    return urls


def without_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` in its authority part."""
    from urllib.parse import urlunsplit

    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
