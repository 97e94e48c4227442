"""``rapidocr`` — the bundled offline OCR specialist (PP-OCR models inside ``rapidocr``).

Reads the first image of the conversation's last user turn and returns the recognised
text, one output line per detected column (vertical text) or line (horizontal text).
Classical Chinese is written in vertical columns read right to left, but OCR engines
return boxes left to right, so columns are re-ordered right-to-left, top-to-bottom
(:func:`order_reading`). Settings follow DESIGN.md: ``Det.limit_type=max`` and
``Det.limit_side_len=960`` (otherwise small images are upscaled and lines take ~5 s).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from heritage_eval.core.extras import require_extra
from heritage_eval.core.images import load_image
from heritage_eval.core.types import GenerationSettings, Message, Response
from heritage_eval.models.base import BackendOptions, ModelBackend, register_backend

if TYPE_CHECKING:
    import numpy as np

#: A box is a vertical column when its height exceeds this multiple of its width.
VERTICAL_RATIO = 1.2


def order_reading(boxes: np.ndarray, texts: list[str]) -> list[str]:
    """Order OCR results in classical reading order.

    ``boxes``: array ``(N, 4, 2)`` of corner points in pixels; ``texts``: N strings.
    When most boxes are vertical (height > 1.2 x width), columns are grouped by horizontal
    overlap and read right-to-left, each group top-to-bottom; otherwise lines are read
    top-to-bottom, left-to-right. Returns the texts in that order.
    """
    if len(texts) == 0:
        return []
    xs0, xs1 = boxes[:, :, 0].min(axis=1), boxes[:, :, 0].max(axis=1)
    ys0, ys1 = boxes[:, :, 1].min(axis=1), boxes[:, :, 1].max(axis=1)
    vertical = (ys1 - ys0) > VERTICAL_RATIO * (xs1 - xs0)
    idx = list(range(len(texts)))
    if vertical.sum() * 2 >= len(texts):
        # Sort by right edge descending; a box whose x-centre lies inside the previous
        # column's span continues that column (read top to bottom).
        idx.sort(key=lambda i: -float(xs1[i]))
        columns: list[list[int]] = []
        for i in idx:
            cx = (xs0[i] + xs1[i]) / 2
            if columns:
                last = columns[-1]
                lo = min(xs0[j] for j in last)
                hi = max(xs1[j] for j in last)
                if lo <= cx <= hi:
                    last.append(i)
                    continue
            columns.append([i])
        ordered = [sorted(col, key=lambda j: float(ys0[j])) for col in columns]
        return ["".join(texts[j] for j in col) for col in ordered]
    idx.sort(key=lambda i: (float(ys0[i]), float(xs0[i])))
    return [texts[i] for i in idx]


class RapidOCRBackend(ModelBackend):
    """Offline PP-OCR (``rapidocr`` + ``onnxruntime``); one image per request."""

    backend = "rapidocr"
    reads_prompt = False

    def __init__(self, variant: str, options: BackendOptions) -> None:
        if variant:
            raise ValueError("rapidocr takes no model name: use --model rapidocr")
        self.model_id = ""
        extra = options.extra
        limit_type = extra.get("det_limit_type", "max")
        if limit_type not in ("max", "min"):
            raise ValueError(f"det_limit_type must be 'max' or 'min', got {limit_type!r}")
        self.params: dict[str, Any] = {
            "Det.limit_type": limit_type,
            "Det.limit_side_len": _positive_int(extra.get("det_limit_side_len", "960"),
                                                "det_limit_side_len"),
        }
        self.max_side = options.image_cap.max_side or 2048
        self.max_concurrency = 1  # onnxruntime already uses every core per image
        self._engine: Any = None
        self._lock = threading.Lock()

    def identity(self) -> dict[str, Any]:
        import rapidocr

        return {"backend": self.backend, "version": getattr(rapidocr, "__version__", "3.10.0"),
                "params": self.params, "max_side": self.max_side}

    def _get_engine(self) -> Any:
        if self._engine is None:
            from rapidocr import RapidOCR

            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
            self._engine = RapidOCR(params=self.params)
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
        return self._engine

    def recognise(self, path: str, page: int = 0) -> tuple[str, dict[str, Any]]:
        """OCR one image file; returns (text with one line per column, meta). Raises
        :class:`~heritage_eval.core.images.ImageLoadError` naming the file when it cannot
        be read or decoded."""
        import numpy as np

        from heritage_eval.core.images import SizeCap

        img = load_image(path, page, SizeCap(max_side=self.max_side))
        with self._lock:
            engine = self._get_engine()
            out = engine(np.asarray(img)[:, :, ::-1])  # RGB -> BGR as OpenCV expects
        if out.boxes is None or out.txts is None:
            return "", {"n_boxes": 0, "sent_image_sizes": [[img.width, img.height]]}
        lines = order_reading(np.asarray(out.boxes), list(out.txts))
        meta = {"n_boxes": len(lines), "sent_image_sizes": [[img.width, img.height]],
                "mean_confidence": float(np.mean(out.scores)) if out.scores else None}
        return "\n".join(lines), meta

    async def generate(self, messages: list[Message], settings: GenerationSettings,
                       payload: dict[str, Any]) -> Response:
        """OCR the last image of the user turns. Raises ``ImageLoadError`` for an image
        that cannot be read (the runner records it as that sample's data error)."""
        images = [im for m in messages if m.role == "user" for im in m.images()]
        if not images:
            return Response(text=None, error="rapidocr needs an image in the request")
        image = images[-1]
        start = time.perf_counter()
        # an unreadable image raises ImageLoadError: the runner files it as the sample's
        # data error (heritage_eval.core.data_errors), like every other backend
        text, meta = await asyncio.to_thread(self.recognise, image.path, image.page)
        return Response(text=text, latency_s=time.perf_counter() - start, meta=meta)


def _positive_int(value: str, key: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise ValueError(f"{key} must be an integer, got {value!r}") from None
    if number < 1:
        raise ValueError(f"{key} must be >= 1, got {value!r}")
    return number


def _make(rest: str, options: BackendOptions) -> ModelBackend:
    """The ``rapidocr`` factory; raises :class:`~heritage_eval.core.extras.MissingExtraError`
    (exit status 2, before any run folder) without the ``ocr`` extra."""
    require_extra("ocr", ("rapidocr", "onnxruntime"), "--model rapidocr (the bundled OCR)")
    return RapidOCRBackend(rest, options)


register_backend("rapidocr", _make,
                 "bundled offline Chinese OCR (PP-OCRv6 small via rapidocr + onnxruntime); "
                 "images are capped by --max-side",
                 option_keys={"det_limit_type": "'max' (default) or 'min': how "
                                                "det_limit_side_len applies",
                              "det_limit_side_len": "detector image side limit, px "
                                                    "(default 960)"})
