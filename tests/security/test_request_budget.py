"""Issue 10, item 10: requests over the byte budget are re-encoded before they are sent.

The budget (``--model-option max_request_mb``, default 20 MB) is checked on the estimated
request size (data URLs = encoded bytes x 4/3, plus the text); images are stepped down
JPEG 90 -> 75 -> 60 -> smaller sides until it fits, and each change is recorded. A 413 is
its own outcome naming the byte count; a 404 only for big requests is hinted as a size
limit (:func:`~heritage_eval.models.openai_body.probable_size_limit`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from heritage_eval.core.images import SizeCap
from heritage_eval.core.types import GenerationSettings, ImagePart, Message
from heritage_eval.models.openai_body import (
    BUDGET_FIELD,
    BUDGET_STEPS,
    ImageCache,
    SentImages,
    body_options,
    build_body,
    probable_size_limit,
    request_budget_bytes,
)
from tests.fake_server import Scripted, chat_reply, fake_openai_server
from tests.models.util import generate, make_backend

SETTINGS = GenerationSettings(max_tokens=50)
CAP = SizeCap(max_side=2048)


def _noise(path: Path, side: int) -> Path:
    """Random RGB noise: PNG cannot compress it (about 3 bytes per pixel)."""
    rng = np.random.default_rng(0)
    Image.fromarray(rng.integers(0, 256, (side, side, 3), dtype=np.uint8)).save(path)
    return path


def _body(path: Path, fields: dict[str, object]) -> tuple[dict[str, Any], SentImages, int]:
    body, sizes = build_body("m", [Message.user(ImagePart(path=str(path)), "read it")],
                             SETTINGS, CAP, ImageCache(), fields)
    return body, sizes, len(json.dumps(body).encode())


def test_budget_option_parsing() -> None:
    # guards against: a budget in the wrong unit, a bad value accepted, the field sent
    assert request_budget_bytes("20") == 20_000_000
    assert request_budget_bytes("0.5") == 500_000
    for bad in ("0", "-1", "lots", "inf", "nan"):
        with pytest.raises(ValueError, match=f"max_request_mb must be .* got '{bad}'"):
            request_budget_bytes(bad)
    fields, _ = body_options({"max_request_mb": "2"})
    assert fields == {BUDGET_FIELD: 2_000_000}


def test_small_request_is_sent_as_png_unchanged(tmp_path: Path) -> None:
    # guards against: re-encoding requests that fit (default budget 20 MB)
    body, sizes, _ = _body(_noise(tmp_path / "a.png", 64), {})
    url = body["messages"][0]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,") and BUDGET_FIELD not in body
    assert sizes == [[64, 64]] and sizes.transforms == []


def test_over_budget_request_is_reencoded_until_it_fits(tmp_path: Path) -> None:
    # guards against: a 6.75 MB PNG (1,500 x 1,500 noise -> 9 MB of base64) sent to a
    # server that takes 2 MB
    path = _noise(tmp_path / "big.png", 1_500)
    png_bytes = path.stat().st_size
    assert png_bytes > 6_700_000
    body, sizes, n = _body(path, {BUDGET_FIELD: 2_000_000})
    assert n <= 2_000_000 and BUDGET_FIELD not in body
    url = body["messages"][0]["content"][0]["image_url"]["url"]
    assert url.startswith("data:image/jpeg;base64,")
    (t,) = sizes.transforms
    step = BUDGET_STEPS.index((t["quality"], t["scale"]))
    side = int(1_500 * t["scale"])
    # the sizes returned are those sent; the record says what was done
    assert sizes == [[side, side]] and t["size"] == [side, side]
    assert (t["image"], t["path"], t["format"]) == (0, str(path), "JPEG")
    assert t["bytes_before"] == pytest.approx(png_bytes, abs=3)  # the PNG of the cap
    assert t["bytes_after"] < 1_500_000  # 2 MB of JSON holds at most 1.5 MB of image
    # the step before did not fit: the ladder stops at the first step that does
    if step > 0:
        q, s = BUDGET_STEPS[step - 1]
        cache = ImageCache()
        url_before, _ = cache.variant(ImagePart(path=str(path)), CAP, q, s, {})
        assert len(url_before) + 1024 > 2_000_000


def test_hopeless_budget_sends_the_smallest_and_says_so(tmp_path: Path) -> None:
    # guards against: an endless loop, or silently claiming the request fits
    _, sizes, _ = _body(_noise(tmp_path / "a.png", 800), {BUDGET_FIELD: 1_000})
    # 1,000 bytes < the 1,024 bytes of JSON around the messages: nothing can fit; every
    # step was taken, the last being quality 75 at 1/8 side: 800 x 0.125 = 100 px
    assert sizes.over_budget and sizes == [[100, 100]]
    (t,) = sizes.transforms
    assert (t["quality"], t["scale"], t["size"]) == (75, 0.125, [100, 100])


def test_largest_image_is_reduced_first(tmp_path: Path) -> None:
    # guards against: shrinking a small image while the big one still breaks the budget
    big, small = _noise(tmp_path / "big.png", 1_000), _noise(tmp_path / "small.png", 100)
    body, sizes = build_body("m", [Message.user(ImagePart(path=str(small)),
                                                ImagePart(path=str(big)), "compare")],
                             SETTINGS, CAP, ImageCache(), {BUDGET_FIELD: 3_000_000})
    # big: 3 MB PNG -> 4 MB base64, over; small: 30 KB: untouched
    assert [t["image"] for t in sizes.transforms] == [1]
    assert sizes[0] == [100, 100]
    assert len(json.dumps(body).encode()) <= 3_000_000


def test_budget_applies_in_the_backend(tmp_path: Path) -> None:
    # guards against: the option being accepted but not applied to what is sent
    path = _noise(tmp_path / "big.png", 1_200)
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("ok")
        b = make_backend(srv.base_url, max_request_mb="1")
        b.cap = CAP
        r = generate(b, Message.user(ImagePart(path=str(path)), "read"))
        (sent,) = srv.requests
    assert r.ok and len(json.dumps(sent).encode()) <= 1_000_000
    assert sent["messages"][0]["content"][0]["image_url"]["url"].startswith("data:image/jpeg")
    assert BUDGET_FIELD not in sent
    side = r.meta["sent_image_sizes"][0][0]
    assert side <= 1_200 and r.meta["sent_image_sizes"] == [[side, side]]


def test_413_is_its_own_outcome_with_the_exact_byte_count() -> None:
    # guards against: a 413 retried, cached or reported without the size that caused it
    body, _ = build_body("test-vlm", [Message.user("hi")], SETTINGS, SizeCap(max_side=64),
                         ImageCache(), {})
    n = len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    with fake_openai_server() as srv:
        srv.responder = lambda body: Scripted(status=413, body={"error": "too large"})
        r = generate(make_backend(srv.base_url))
        assert len(srv.requests) == 1
    assert r.meta["failure"] == "input_too_large" and not r.ok
    assert r.error is not None and f"HTTP 413: request of {n:,} bytes too large" in r.error


def test_404_for_big_requests_only_is_a_probable_size_limit() -> None:
    # guards against: a size limit reported as "is the model name right?"
    assert probable_size_limit(404, 25_000_000, 1_200_000) == (
        "probably a request-size limit: this request was 25,000,000 bytes, the largest "
        "answered one 1,200,000 bytes; lower --model-option max_request_mb")
    assert probable_size_limit(404, 500_000, 1_000) is None      # small: a real 404
    assert probable_size_limit(404, 25_000_000, None) is None    # nothing answered yet
    assert probable_size_limit(404, 2_000_000, 3_000_000) is None  # bigger ones worked
    assert probable_size_limit(400, 25_000_000, 1_000) is None
