"""``ray_connect.probe``: a cluster address nobody answers at is named once, as given,
and its host:port only when the user wrote something else (a ``ray://`` address)."""

from __future__ import annotations

import socket

import pytest

from heritage_eval.core.executors import ExecutorError
from heritage_eval.core.executors.ray_connect import probe


def _closed_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_the_address_is_named_once(scheme: str) -> None:
    port = _closed_port()
    address = f"{scheme}127.0.0.1:{port}"
    with pytest.raises(ExecutorError) as err:
        probe(address, 2.0)
    text = str(err.value)
    # hand-written expectation: the plain address alone; the ray:// one with host:port
    where = address if not scheme else f"{address} (127.0.0.1:{port})"
    assert text.startswith(f"cannot reach the Ray cluster at {where}: "), text
    assert text.count(f"127.0.0.1:{port}") == (1 if not scheme else 2)
