"""Reaching a Ray cluster without hanging: the address is probed before ``ray.init``.

``ray.init(address=...)`` retries an address that refuses connections, or accepts them
and never answers, for ever (Ray 2.60 has no connect timeout for a GCS address; the Ray
Client's own retries take minutes), and it replaces the process's SIGTERM handler with
one that cannot run while it waits. So :func:`probe` first checks, within
:data:`CONNECT_TIMEOUT_S` seconds, that the address accepts a TCP connection and answers
an HTTP/2 preface as the gRPC servers behind a Ray address do; :func:`keep_sigterm_handler`
puts the previous SIGTERM handler back after ``ray.init``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
from collections.abc import Iterator

from heritage_eval.core.executors import ExecutorError

#: seconds allowed for a cluster address to accept a connection and answer (:func:`probe`)
CONNECT_TIMEOUT_S = 5.0


def resolve_auto(address: str) -> str:
    """``address``, with ``auto`` replaced by the cluster it names (``$RAY_ADDRESS``, or
    the one ``ray start`` left on this machine) when Ray can tell; else unchanged (and
    :func:`probe` leaves ``auto`` to Ray, which fails at once when no cluster runs)."""
    if address != "auto":
        return address
    if os.environ.get("RAY_ADDRESS"):
        return os.environ["RAY_ADDRESS"]
    try:
        from ray._private.services import canonicalize_bootstrap_address

        return canonicalize_bootstrap_address("auto") or "auto"
    except Exception:  # a private helper of Ray: its absence only skips the probe
        return "auto"


def split_address(address: str) -> tuple[str, int]:
    """(host, port) of a Ray address: ``HOST:PORT``, ``HOST`` (GCS port 6379),
    ``ray://HOST[:PORT]`` (Ray Client, port 10001), IPv6 hosts in brackets. Raises
    :class:`ExecutorError` for anything else."""
    text, default = address.strip(), 6379
    if text.startswith("ray://"):
        text, default = text[len("ray://"):], 10001
    text = text.split("/", 1)[0]
    host, port_text = text, ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, port_text = text.split(":")
    try:
        port = int(port_text) if port_text else default
    except ValueError:
        port = -1
    bare_colon = ":" in host and not text.startswith("[")  # IPv6 needs its brackets
    if not host or bare_colon or not 0 < port < 65536:
        raise ExecutorError(f"--ray-address {address!r} is not HOST:PORT or ray://HOST:PORT")
    return host, port


#: An HTTP/2 client preface and an empty SETTINGS frame (RFC 9113 §3.4, §6.5): a gRPC
#: server (Ray's GCS and its client server both are) answers with its SETTINGS frame.
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"


def probe(address: str, timeout_s: float) -> None:
    """Check that ``address`` (see :func:`split_address`; ``auto`` is skipped) accepts a
    TCP connection and answers an HTTP/2 preface with a SETTINGS frame, as gRPC servers
    do, all within ``timeout_s`` seconds (the name lookup included: the probe runs in a
    daemon thread that is abandoned at the deadline). Raises :class:`ExecutorError`
    naming the address and what went wrong (refused, no answer, not Ray)."""
    if address == "auto":
        return
    host, port = split_address(address)
    outcome: list[str] = []

    def run() -> None:
        try:
            with socket.create_connection((host, port), timeout=timeout_s) as sock:
                sock.sendall(_H2_PREFACE)
                head = b""
                while len(head) < 9:
                    chunk = sock.recv(9 - len(head))
                    if not chunk:
                        break
                    head += chunk
            outcome.append("" if len(head) == 9 and head[3] == 0x04 else
                           "it answered, but not as a Ray cluster (no gRPC / HTTP/2 reply)")
        except TimeoutError:
            outcome.append(f"no answer within {timeout_s:g} s")
        except OSError as exc:
            outcome.append(exc.strerror or str(exc) or type(exc).__name__)

    worker = threading.Thread(target=run, name="ray-probe", daemon=True)
    worker.start()
    worker.join(timeout_s + 0.5)
    reason = outcome[0] if outcome else f"no answer within {timeout_s:g} s"
    if reason:
        raise ExecutorError(f"cannot reach the Ray cluster at {address} ({host}:{port}): "
                            f"{reason}; check --ray-address and that the cluster runs")


@contextlib.contextmanager
def keep_sigterm_handler() -> Iterator[None]:
    """Put back the SIGTERM handler that ``ray.init`` replaces (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None:
            signal.signal(signal.SIGTERM, before)
