"""Reaching a Ray cluster without hanging, and saying why it cannot be reached.

Which cluster (:func:`cluster_address`): ``--ray-address`` when given, else the
``RAY_ADDRESS`` environment variable (Ray's own convention), else none (a local cluster
for the run). ``auto`` is the cluster ``ray start`` left on this machine.

``ray.init(address=...)`` retries an address that refuses connections, or accepts them
and never answers, for ever (Ray 2.60 has no connect timeout for a GCS address; the Ray
Client's own retries take minutes), and it replaces the process's SIGTERM handler with
one that cannot run while it waits. So :func:`probe` first checks, within
:data:`CONNECT_TIMEOUT_S` seconds, that the address accepts a TCP connection and answers
an HTTP/2 preface as the gRPC servers behind a Ray address do; :func:`join` then calls
``ray.init`` with Ray's connect window shortened to :data:`JOIN_WINDOW_S` tries and turns
what went wrong (token refused, version mismatch, Ray Client missing) into one
:class:`ExecutorError` sentence; :func:`keep_sigterm_handler` puts the previous SIGTERM
handler back after ``ray.init``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import signal
import socket
import tempfile
import threading
from collections.abc import Iterator
from typing import Any

from heritage_eval.core.executors import ExecutorError

#: seconds allowed for a cluster address to accept a connection and answer (:func:`probe`)
CONNECT_TIMEOUT_S = 5.0
#: connect attempts (about one a second) ``ray.init`` makes once the probe has answered:
#: Ray's ``RAY_gcs_server_port_wait_time_s``, unless set in the environment (Ray: 20)
JOIN_WINDOW_S = 5
#: what ``pip install`` needs for ``ray://`` addresses (the Ray Client needs grpcio)
CLIENT_EXTRA = "ray[client]==2.60.0"


def cluster_address(flag: str | None) -> str | None:
    """The cluster a run joins: ``flag`` (``--ray-address``) when given and not blank,
    else ``$RAY_ADDRESS`` when set and not blank, else ``None`` (start a local cluster).
    Both are stripped; Ray reads ``RAY_ADDRESS`` the same way (an explicit address wins)."""
    for value in (flag, os.environ.get("RAY_ADDRESS")):
        if value is not None and value.strip():
            return value.strip()
    return None


def check_client(address: str) -> None:
    """Refuse a ``ray://`` address (Ray Client) when grpcio, which the Ray Client needs and
    ``pip install ray`` does not bring, is missing. Raises :class:`ExecutorError`."""
    if address.startswith("ray://") and importlib.util.find_spec("grpc") is None:
        raise ExecutorError(
            f"--ray-address {address} uses the Ray Client, which needs grpcio: pip install "
            f"'{CLIENT_EXTRA}' (the [ray] extra installs Ray without it), or run on a node "
            "of the cluster with its GCS address HOST:6379 (or auto)")


def resolve_auto(address: str) -> str:
    """``address``, with ``auto`` replaced by the cluster it names (``$RAY_ADDRESS``, or
    the one ``ray start`` left on this machine) when Ray can tell; else unchanged (and
    :func:`probe` leaves ``auto`` to Ray, which fails at once when no cluster runs)."""
    if address != "auto":
        return address
    if os.environ.get("RAY_ADDRESS", "").strip():
        return os.environ["RAY_ADDRESS"].strip()
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
        where = address if address == f"{host}:{port}" else f"{address} ({host}:{port})"
        raise ExecutorError(f"cannot reach the Ray cluster at {where}: "
                            f"{reason}; check --ray-address and that the cluster runs")


#: what Ray's own log lines say when the cluster refuses this process's token
_AUTH_MARKS = ("InvalidAuthToken", "Unauthenticated", "authentication token")
_AUTH_HELP = ("the cluster uses token authentication: set RAY_AUTH_MODE=token and give "
              "the cluster's token in RAY_AUTH_TOKEN, in the file named by "
              "RAY_AUTH_TOKEN_PATH, or in ~/.ray/auth_token")


def why_refused(exc: BaseException, log: str) -> str:
    """One sentence saying why ``ray.init`` failed with ``exc``, given what Ray wrote to
    stderr meanwhile (``log``): the cluster refused the token (or none was given), Ray or
    Python versions differ from the cluster's, or Ray's own last line."""
    text = " ".join(ln.strip() for ln in str(exc).splitlines() if ln.strip())
    name = type(exc).__name__
    if name == "AuthenticationError" or any(m.lower() in log.lower() for m in _AUTH_MARKS):
        return f"authentication refused ({_AUTH_HELP})"
    if "Version mismatch" in text:
        return (f"{text} (every node and this driver need the same Ray and Python "
                "versions: install the same environment everywhere)")
    return text or name


@contextlib.contextmanager
def _stderr_to(sink: Any) -> Iterator[None]:
    """Send file descriptor 2 (Ray's C++ log lines go there) to ``sink`` for the block."""
    try:
        saved = os.dup(2)
    except OSError:  # no stderr at all
        yield
        return
    try:
        os.dup2(sink.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


class _Lines(logging.Handler):
    """Keeps the messages of the records it receives."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextlib.contextmanager
def _client_log(keep: _Lines) -> Iterator[None]:
    """Within the block, the Ray Client's connect log (debug records only: it says why
    the server refused, e.g. ``UNAUTHENTICATED``) goes to ``keep`` and nowhere else."""
    log = logging.getLogger("ray.util.client.worker")
    before = (log.level, log.propagate)
    log.setLevel(logging.DEBUG)
    log.propagate = False
    log.addHandler(keep)
    try:
        yield
    finally:
        log.removeHandler(keep)
        log.setLevel(before[0])
        log.propagate = before[1]


def join(ray: Any, address: str) -> None:
    """``ray.init`` on the cluster at ``address`` (checked first: :func:`check_client`,
    :func:`probe`), Ray's connect window shortened to :data:`JOIN_WINDOW_S` tries and its
    SIGTERM handler undone (:func:`keep_sigterm_handler`). Ray's repeated log lines
    while it tries are kept off stderr and read for the reason. Raises
    :class:`ExecutorError` naming the address and the reason (:func:`why_refused`)."""
    check_client(address)
    probe(resolve_auto(address), CONNECT_TIMEOUT_S)
    kwargs: dict[str, Any] = {"address": address, "log_to_driver": False,
                              "logging_level": logging.ERROR}
    if not address.startswith("ray://"):
        kwargs["include_dashboard"] = False
    window = "RAY_gcs_server_port_wait_time_s"
    set_window = window not in os.environ
    if set_window:
        os.environ[window] = str(JOIN_WINDOW_S)
    client = _Lines()
    with tempfile.TemporaryFile() as log, keep_sigterm_handler():
        try:
            with _stderr_to(log), _client_log(client):
                ray.init(**kwargs)
        except Exception as exc:
            log.seek(0)
            said = log.read().decode("utf-8", "replace") + "\n".join(client.lines)
            raise ExecutorError(f"cannot join the Ray cluster at {address}: "
                                f"{why_refused(exc, said)}") from exc
        finally:
            if set_window:
                os.environ.pop(window, None)
        log.seek(0)
        said = log.read().decode("utf-8", "replace")
    if said.strip():  # what Ray said on a successful join (warnings): shown as it was
        with contextlib.suppress(OSError):
            os.write(2, said.encode())


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
