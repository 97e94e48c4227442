"""Which samples the models disagree on ("where models disagree"), over a stream.

Two records *share a question* when they have the same benchmark and sample id. The
records of a question disagree when they come from at least two (run, model) pairs and
differ: another outcome state, a 0/1 metric whose values differ, or another metric whose
values spread by at least :data:`DISAGREE_THRESHOLD` (score units, as ``heritage-eval
compare``'s default threshold). Every record of such a question is flagged.

:class:`Disagreements` decides from a few numbers per question (the (run, model) pairs,
the states, per metric min / max / count / all 0 or 1), so the decision needs no record
kept; :class:`KeySpool` writes those facts to a file while the site is built, and
:meth:`KeySpool.flags` reads it twice (once to decide, once to emit the per-sample flag
in file order). Memory: one small entry per question, and only when two or more
(run, model) pairs share a benchmark (otherwise every flag is 0 without reading).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from heritage_eval.viewer.index_columns import dump
from heritage_eval.viewer.textio import encode_text

#: a non-0/1 metric "disagrees" when two models' values differ by this much
DISAGREE_THRESHOLD = 0.1


class Disagreements:
    """Per question: the (run, model) pairs, the states, and per metric
    ``[min, max, count, all values 0 or 1]``; :meth:`differs` applies the rule."""

    def __init__(self) -> None:
        self._q: dict[str, tuple[set[tuple[int, str]], set[str],
                                 dict[str, list[float | int | bool]]]] = {}

    def add(self, key: str, run: int, model: str, state: str,
            scores: Mapping[str, float | None]) -> None:
        """One record of question ``key`` (benchmark + NUL + id)."""
        pairs, states, metrics = self._q.setdefault(key, (set(), set(), {}))
        pairs.add((run, model))
        states.add(state)
        for name, value in scores.items():
            if value is None:
                continue
            v = float(value)
            m = metrics.get(name)
            if m is None:
                metrics[name] = [v, v, 1, v in (0.0, 1.0)]
            else:
                m[0], m[1] = min(float(m[0]), v), max(float(m[1]), v)
                m[2] = int(m[2]) + 1
                m[3] = bool(m[3]) and v in (0.0, 1.0)

    def differs(self, key: str) -> bool:
        """Whether question ``key``'s records disagree (module docstring)."""
        pairs, states, metrics = self._q.get(key, (set(), set(), {}))
        if len(pairs) < 2:
            return False
        if len(states) > 1:
            return True
        for lo, hi, count, binary in metrics.values():
            if int(count) < 2:
                continue
            spread = float(hi) - float(lo)
            if (spread > 0) if binary else spread >= DISAGREE_THRESHOLD - 1e-9:
                return True
        return False

    def differing(self) -> set[str]:
        """The keys of every question that disagrees."""
        return {k for k in self._q if self.differs(k)}


def question_key(benchmark: str, sample_id: str) -> str:
    """The key of a question: ``benchmark`` NUL ``sample_id``."""
    return f"{benchmark}\0{sample_id}"


class KeySpool:
    """The facts :class:`Disagreements` needs, one JSON line per sample, in a file.

    :attr:`compare` says whether any benchmark has records of two (run, model) pairs
    (only then can a flag be 1). Use as a context manager around the writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.n = 0
        self._pairs: dict[str, set[tuple[int, str]]] = {}
        self._fh = path.open("wb")

    def add(self, benchmark: str, sample_id: str, run: int, model: str, state: str,
            scores: Mapping[str, float | None]) -> None:
        """One sample, in site order."""
        self._pairs.setdefault(benchmark, set()).add((run, model))
        line = dump([question_key(benchmark, sample_id), run, model, state, scores])
        self._fh.write(encode_text(line) + b"\n")
        self.n += 1

    @property
    def compare(self) -> bool:
        """Whether some benchmark has records of two or more (run, model) pairs."""
        return any(len(p) > 1 for p in self._pairs.values())

    def close(self) -> None:
        """Finish writing (idempotent)."""
        self._fh.close()

    def __enter__(self) -> KeySpool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lines(self) -> Iterator[list[object]]:
        with self.path.open("rb") as fh:
            for line in fh:
                yield json.loads(line)

    def flags(self) -> Iterator[int]:
        """Per sample in site order 1 when its question disagrees, else 0 (reads the
        file twice when :attr:`compare`, not at all otherwise)."""
        self.close()
        if not self.compare:
            yield from (0 for _ in range(self.n))
            return
        d = Disagreements()
        for key, run, model, state, scores in self._lines():
            d.add(str(key), int(str(run)), str(model), str(state),
                  scores if isinstance(scores, dict) else {})
        differ = d.differing()
        del d
        for line in self._lines():
            yield 1 if line[0] in differ else 0
