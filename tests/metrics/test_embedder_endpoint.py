"""The openai:NAME embedder follows the one endpoint-URL rule of --base-url
(core/endpoint_urls.py): a query string stays after the path (Azure-style
``?api-version=…``), a fragment or a non-http scheme is refused before anything runs,
and no default host is assumed (an unset URL is a usage error, not api.openai.com)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from heritage_eval.metrics.embeddings import OpenAIEmbedder


class _Reply:
    status_code = 200
    text = ""

    def json(self) -> dict[str, Any]:
        return {"data": [{"index": 0, "embedding": [1.0, 0.0]}]}


@pytest.mark.parametrize("root, posted", [
    # hand-written: the path goes before the query, as for chat requests
    ("http://127.0.0.1:9/v1?api-version=2024-02-01",
     "http://127.0.0.1:9/v1/embeddings?api-version=2024-02-01"),
    ("http://127.0.0.1:9/v1/", "http://127.0.0.1:9/v1/embeddings"),
])
def test_the_query_stays_after_the_path(monkeypatch: pytest.MonkeyPatch, root: str,
                                        posted: str) -> None:
    seen: list[str] = []

    def post(self: httpx.Client, url: str, **kw: Any) -> _Reply:
        seen.append(str(url))
        return _Reply()

    monkeypatch.setattr(httpx.Client, "post", post)
    OpenAIEmbedder("m", root).embed(["a"])
    assert seen == [posted]


@pytest.mark.parametrize("bad", ["http://127.0.0.1:9/v1#frag", "ftp://h/v1", "h/v1"])
def test_bad_urls_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match="--embedder-base-url"):
        OpenAIEmbedder("m", bad)


def test_no_default_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="no default host"):
        OpenAIEmbedder("m")
