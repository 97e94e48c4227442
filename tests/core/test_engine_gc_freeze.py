"""The engine freezes what is loaded out of the cyclic collector's reach for the run and
gives it back after (issue 23), and leaves a host's own frozen objects alone."""

from __future__ import annotations

import gc

import pytest

from heritage_eval.core.engine import _collector_frozen_after


@pytest.fixture(autouse=True)
def _nothing_frozen() -> None:
    if gc.get_freeze_count():
        pytest.skip("this test process froze objects itself")


def test_frozen_for_the_run_then_given_back() -> None:
    with _collector_frozen_after() as freeze:
        assert gc.get_freeze_count() == 0  # nothing before freeze() is called
        freeze()
        count = gc.get_freeze_count()
        assert count > 0
        freeze()  # once only
        assert gc.get_freeze_count() == count
    assert gc.get_freeze_count() == 0


def test_given_back_when_the_run_raises() -> None:
    with pytest.raises(RuntimeError), _collector_frozen_after() as freeze:
        freeze()
        raise RuntimeError("a failed run")
    assert gc.get_freeze_count() == 0


def test_a_hosts_own_freeze_is_kept() -> None:
    gc.freeze()
    try:
        count = gc.get_freeze_count()
        with _collector_frozen_after() as freeze:
            freeze()
            assert gc.get_freeze_count() == count
        assert gc.get_freeze_count() == count
    finally:
        gc.unfreeze()


def test_nothing_frozen_with_the_collector_off() -> None:
    gc.disable()
    try:
        with _collector_frozen_after() as freeze:
            freeze()
            assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
