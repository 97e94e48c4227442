"""Offline HCSU baselines, so the demo and the tests run without a VLM (registered as
backends by :mod:`.commands`, which imports this module only when one is created).

- ``baseline:image-similarity`` (discrimination): answers the label of the candidate
  whose reference image is closest to the target under classic style features
  (:mod:`.features`: gradient orientations, stroke widths, ink tone, ink coverage and
  aspect, on canonicalized images). It reads only the images, never the descriptions.
- ``baseline:nearest-description`` (description): answers the expert description of
  the few-shot example whose image is closest to the target under the same features.

Both read the conversation payload (``target_image``, ``candidates`` / ``shots``,
``domain``, and each candidate's / shot's own ``domain``) built by the HCSU tasks; a
payload without them gets an empty answer (which the task marks ``unparsed``). Each
declares its task in ``supported_tasks``: the commands refuse a baseline on another task
before running (its table would be all zeros). Ties go
to the first label in display order / the first shot. An unreadable image raises
``ImageLoadError``, which the runner turns into an ``error`` row naming the file.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from heritage_eval.benchmarks.hcsu.features import FEATURE_VERSION, image_features, style_distance
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import ModelBackend


class _FeatureBaseline(ModelBackend):

    reads_payload = True  # answers from the structured payload: part of the cache key
    backend = "baseline"
    max_concurrency = 2

    def identity(self) -> dict[str, Any]:
        return {"backend": self.backend, "model": self.model_id,
                "feature_version": FEATURE_VERSION}

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        start = time.perf_counter()
        text, meta = await asyncio.to_thread(self.answer, payload)
        return Response(text=text, latency_s=time.perf_counter() - start, meta=meta)

    def answer(self, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        raise NotImplementedError


class ImageSimilarityBaseline(_FeatureBaseline):
    """Nearest reference image among the K candidates (discrimination)."""

    #: The HCSU tasks this baseline can answer; the commands refuse it for any other.
    supported_tasks = ("hcsu-discrimination",)

    def __init__(self) -> None:
        self.model_id = "image-similarity"

    def answer(self, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """``(label, {"distances": label -> distance})`` for one discrimination payload."""
        target = payload.get("target_image")
        candidates: dict[str, dict[str, str]] = payload.get("candidates") or {}
        if not target or not candidates:
            return "", {"note": "payload has no target image or candidates"}
        domain = payload.get("domain")
        t = image_features(str(target), domain == "Bei")
        dist = {label: style_distance(t, image_features(str(c["image"]),
                                                        c.get("domain", domain) == "Bei"))
                for label, c in candidates.items()}
        best = min(dist, key=lambda lab: (dist[lab], list(candidates).index(lab)))
        return best, {"distances": dist}


class NearestDescriptionBaseline(_FeatureBaseline):
    """Description of the nearest few-shot example image (description generation)."""

    #: The HCSU tasks this baseline can answer; the commands refuse it for any other.
    supported_tasks = ("hcsu-description",)

    def __init__(self) -> None:
        self.model_id = "nearest-description"

    def answer(self, payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """``(description, {"distances": [...], "shot": index})`` for one payload."""
        target = payload.get("target_image")
        shots: list[dict[str, str]] = payload.get("shots") or []
        if not target or not shots:
            return "", {"note": "payload has no target image or shots"}
        domain = payload.get("domain")
        t = image_features(str(target), domain == "Bei")
        dist = [style_distance(t, image_features(str(s["image"]), s.get("domain", domain) == "Bei"))
                for s in shots]
        best = min(range(len(shots)), key=lambda i: (dist[i], i))
        return str(shots[best]["description"]), {"distances": dist, "shot": best}
