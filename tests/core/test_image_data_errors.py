"""An image that cannot be read is the sample's DATA error, whatever backend reads it.

The rule (:mod:`heritage_eval.core.data_errors`): missing, zero bytes, truncated, not an
image, a format Pillow cannot read, over the pixel cap -> the response of that one request
has ``failure == "image_unreadable"``, an error naming the image file and the reason, is
no model failure, is never cached, and after the image is repaired the request is sent
again. Checked here through the runner (:func:`~heritage_eval.core.runner.run_items`,
with the response cache) for every kind of broken image x every backend that reads
images: the real ``rapidocr``, a tiny ``hf:`` model, ``openai:`` against the fake server
(:mod:`tests.fake_server`), and the HCSU and MUSE baselines. The end-to-end runs are in
``tests/models/test_image_data_errors_runs.py``.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from heritage_eval.core.backends import BackendOptions, ModelBackend, create_backend
from heritage_eval.core.cache import ResponseCache
from heritage_eval.core.data_errors import IMAGE_UNREADABLE, is_data_error
from heritage_eval.core.images import ImageLoadError, SizeCap, load_image
from heritage_eval.core.model_failures import failure_kind
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import Conversation, GenerationSettings, ImagePart, Message
from tests.core.broken_images import KINDS, break_image
from tests.fake_server import FakeServer, chat_reply, fake_openai_server

REPO = Path(__file__).resolve().parents[2]
GOOD = REPO / "data" / "demo" / "ancient_bench" / "seals" / "images" / "seals_000002.jpg"
SETTINGS = GenerationSettings(max_tokens=4)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_load_image_names_the_file_and_the_reason(kind: str, tmp_path: Path) -> None:
    # guards against: a message showing Pillow's file handle ("cannot identify image file
    # <_io.BufferedReader name=24>") instead of the path; the expected words are KINDS
    path = tmp_path / "img.jpg"
    shutil.copyfile(GOOD, path)
    break_image(path, kind)
    with pytest.raises(ImageLoadError) as err:
        load_image(path, 0, SizeCap(max_side=960))
    message = str(err.value)
    assert str(path) in message and KINDS[kind] in message, message
    assert "<_io." not in message and "name=" not in message


# -- the backends ------------------------------------------------------------------------

def _jigsaw_payload(context: Path) -> dict[str, Any]:
    """A MUSE jigsaw turn whose context image is ``context`` (two piece images beside it)."""
    from heritage_eval.benchmarks.muse.questions import OptionRecord, Question, QuestionTurn

    for name in ("p1.jpg", "p2.jpg"):
        shutil.copyfile(GOOD, context.parent / name)
    turn = QuestionTurn(task="jigsaw_puzzle", prompt="Which piece fits?", tag="option",
                        images=[context.name, "p1.jpg", "p2.jpg"], answer_format="choice",
                        options=[OptionRecord(label="A", image="p1.jpg",
                                              distractor_type="correct"),
                                 OptionRecord(label="B", image="p2.jpg",
                                              distractor_type="rotated")], answer="A")
    question = Question(id="q:jigsaw_puzzle:0", image_id="q", turns=[turn])
    return {"question": question.model_dump(mode="json"), "base_dir": str(context.parent)}


def _similarity_payload(target: Path) -> dict[str, Any]:
    """An HCSU discrimination payload whose target image is ``target``."""
    return {"target_image": str(target), "domain": "Tie",
            "candidates": {"A": {"image": str(GOOD)}, "B": {"image": str(GOOD)}}}


@pytest.fixture(scope="module")
def server() -> Iterator[FakeServer]:
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("天地")
        yield srv


@pytest.fixture(scope="module")
def tiny_hf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.models.test_hf_backend import build_tiny_vlm

    return build_tiny_vlm(tmp_path_factory.getbasetemp())


Factory = Callable[[], ModelBackend]


def _backend(name: str, request: pytest.FixtureRequest) -> tuple[Factory, Callable[[Path],
                                                                                   dict[str, Any]]]:
    """``(make the backend, payload for an image)`` for the backend ``name``."""
    def plain(_: Path) -> dict[str, Any]:
        return {}

    if name == "rapidocr":
        pytest.importorskip("rapidocr")
        return (lambda: create_backend("rapidocr")), plain
    if name == "hf":
        folder: Path = request.getfixturevalue("tiny_hf")
        import heritage_eval.models.hf_backend  # noqa: F401  (registers hf:)

        return (lambda: create_backend(f"hf:{folder}", BackendOptions(
            extra={"device": "cpu"}))), plain
    if name == "openai":
        srv: FakeServer = request.getfixturevalue("server")
        return (lambda: create_backend("openai:vlm", BackendOptions(
            base_url=srv.base_url, max_retries=0))), plain
    if name == "baseline:image-similarity":
        return (lambda: create_backend(name)), _similarity_payload
    if name == "baseline:jigsaw-edges":
        pytest.importorskip("cv2")
        return (lambda: create_backend(name)), _jigsaw_payload
    raise ValueError(name)


#: the real OCR model and the tiny transformers model take seconds: marked slow
BACKENDS = [pytest.param("rapidocr", marks=pytest.mark.slow),
            pytest.param("hf", marks=pytest.mark.slow), "openai",
            "baseline:image-similarity", "baseline:jigsaw-edges"]


def _cached_rows(path: Path) -> int:
    con = sqlite3.connect(path)
    try:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    finally:
        con.close()


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("name", BACKENDS)
def test_broken_image_is_a_data_error_never_cached_and_sent_again(
        name: str, kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    # guards against: a backend that catches ImageLoadError and returns a plain error
    # (filed as an API failure), or an empty answer (a model failure, cached: the
    # repaired image would never be read); expected values: the rule of core.data_errors
    make, payload_of = _backend(name, request)
    image = tmp_path / "img.jpg"
    shutil.copyfile(GOOD, image)
    payload = payload_of(image)
    break_image(image, kind)
    item = RunItem(id="s1", conversation=Conversation(
        turns=(Message.user(ImagePart(path=str(image)), "Transcribe."),), payload=payload))
    cache_path = tmp_path / "cache.sqlite"
    sent_before = len(request.getfixturevalue("server").requests) if name == "openai" else 0
    with ResponseCache(cache_path) as cache:
        resp = run_items([item], make(), SETTINGS, cache)["s1"].responses[-1]
    assert resp.text is None and resp.meta.get("failure") == IMAGE_UNREADABLE
    assert is_data_error(resp) and failure_kind(resp) is None  # not the model's failure
    assert resp.error is not None and str(image) in resp.error and KINDS[kind] in resp.error
    assert "<_io." not in resp.error
    assert _cached_rows(cache_path) == 0  # never stored as an answer
    if name == "openai":  # nothing reached the server
        assert len(request.getfixturevalue("server").requests) == sent_before
    # repaired: the same request is sent again and answered (not served from the cache)
    shutil.copyfile(GOOD, image)
    with ResponseCache(cache_path) as cache:
        again = run_items([item], make(), SETTINGS, cache)["s1"].responses[-1]
    assert again.ok and not again.cached and not is_data_error(again), again.error
