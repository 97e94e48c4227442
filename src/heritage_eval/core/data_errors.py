"""An image a request needs that cannot be read is the sample's DATA error.

**Rule.** An image that cannot be read or decoded — missing, zero bytes, truncated, not
an image, a format Pillow cannot read, over the pixel cap
(:data:`~heritage_eval.core.images.MAX_PIXELS`) — is a *data* error of that one sample,
whatever backend reads it (``rapidocr``, ``hf:``, ``openai:``, the baselines) and
whatever benchmark planned it: never an API error, never a model failure, never cached
as an answer; the message names the image file and the reason; the run goes on.

**Mechanism** (the same for every backend, plug-ins included):

- a backend lets :class:`~heritage_eval.core.images.ImageLoadError` propagate out of
  :meth:`~heritage_eval.core.backends.ModelBackend.generate` (it never turns it into a
  :class:`~heritage_eval.core.types.Response` itself);
- the runner (:func:`~heritage_eval.core.runner.run_conversation`, the cache lookup of
  :func:`~heritage_eval.core.runner.cached_prefixes`, the Ray executor) turns it into
  :func:`image_error_response`: ``text`` ``None``, ``error`` the exception's message,
  ``meta["failure"]`` :data:`IMAGE_UNREADABLE`. A response with an error is never
  stored in the cache, so a re-run after the image is repaired sends the sample again;
- benchmarks read :func:`is_data_error`: Ancient-Bench files the row as
  ``error_kind: "data"``, and the engine's record pass
  (:func:`~heritage_eval.core.model_failures.mark_records`) sets
  ``details.error_kind = "data"`` on every ``error`` record of every benchmark with such
  a turn (:func:`mark_data_error`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heritage_eval.core.types import Outcome, Response

if TYPE_CHECKING:
    from heritage_eval.core.record import ResponseRecord, SampleRecord

#: ``failure`` of a response whose request could not be built because an image could not
#: be read (the response's ``error`` names the file and the reason).
IMAGE_UNREADABLE = "image_unreadable"
#: Every response ``failure`` that is the data's fault, not the model's or the server's.
DATA_FAILURES = frozenset({IMAGE_UNREADABLE})
#: ``details.error_kind`` of an ``error`` record whose data could not be used.
DATA_KIND = "data"

__all__ = ["DATA_FAILURES", "DATA_KIND", "IMAGE_UNREADABLE", "image_error_response",
           "is_data_error", "mark_data_error"]


def image_error_response(reason: BaseException | str) -> Response:
    """The failed response of a request whose image could not be read: ``text`` ``None``,
    ``error`` ``str(reason)`` (an :class:`~heritage_eval.core.images.ImageLoadError`
    names the file and why), ``attempts`` 1, ``meta["failure"]``
    :data:`IMAGE_UNREADABLE`. Not ``ok``: never cached."""
    return Response(text=None, error=str(reason), meta={"failure": IMAGE_UNREADABLE})


def is_data_error(resp: Response | ResponseRecord | None) -> bool:
    """True when ``resp`` failed because of the data (its ``failure`` is one of
    :data:`DATA_FAILURES`); False for ``None``, an answer, or any other failure."""
    if resp is None:
        return False
    failure = resp.meta.get("failure") if isinstance(resp, Response) else resp.failure
    return failure in DATA_FAILURES


def mark_data_error(record: SampleRecord) -> None:
    """Set ``details["error_kind"] = "data"`` on an ``error`` record one of whose turns
    has a data-error response (:func:`is_data_error`), unless the benchmark set a kind
    already. Other records are left as they are."""
    if record.state is not Outcome.ERROR or "error_kind" in record.details:
        return
    if any(is_data_error(t.response) for t in record.turns):
        record.details["error_kind"] = DATA_KIND
