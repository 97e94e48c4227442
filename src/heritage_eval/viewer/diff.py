"""Character-level alignment of a ground truth and a prediction, for the viewer.

The alignment is computed once at build time (``Levenshtein.opcodes``) and stored in the
page data as a short list of operations; the browser only colours them.

An operation is ``[kind, gt, pred]`` with ``kind`` one of

- ``"="``: the same text on both sides (consecutive equal characters merged);
- ``"s"``: a substitution of one character (``gt`` -> ``pred``);
- ``"t"``: a substitution that is only a simplified/traditional difference
  (OpenCC ``t2s`` maps both characters to the same one, e.g. 黃 -> 黄);
- ``"i"``: an insertion (``pred`` only, ``gt`` is ``""``);
- ``"d"``: a deletion (``gt`` only, ``pred`` is ``""``).

Of the optimal (minimum-cost) alignments the one that pairs simplified/traditional
variants is preferred, so ``天地玄黃`` vs ``天地元黄宇`` gives
``[["=", "天地", "天地"], ["s", "玄", "元"], ["t", "黃", "黄"], ["i", "", "宇"]]``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import Levenshtein

Op = list[str]

#: one token: the ``<unrecognizable>`` placeholder of Ancient-Bench, or one character
_TOKEN = re.compile(r"<unrecognizable>|.", re.DOTALL)


def tokens(text: str) -> list[str]:
    """``text`` split into characters (``<unrecognizable>`` stays one token)."""
    return _TOKEN.findall(text)


@lru_cache(maxsize=1)
def _t2s() -> Callable[[str], str]:
    import opencc

    convert: Callable[[str], str] = opencc.OpenCC("t2s").convert
    return convert


@lru_cache(maxsize=65536)
def simplified(token: str) -> str:
    """The OpenCC ``t2s`` form of one token (the token itself when the conversion would
    change its length, e.g. a phrase rule)."""
    if len(token) != 1:
        return token
    out = _t2s()(token)
    return out if len(out) == 1 else token


def st_equivalent(a: str, b: str) -> bool:
    """Whether two different tokens differ only as simplified/traditional forms."""
    return a != b and simplified(a) == simplified(b)


def _ops(gt: Sequence[str], pred: Sequence[str],
         codes: list[tuple[str, int, int, int, int]]) -> list[Op]:
    out: list[Op] = []

    def push(kind: str, g: str, p: str) -> None:
        if kind == "=" and out and out[-1][0] == "=":
            out[-1][1] += g
            out[-1][2] += p
        else:
            out.append([kind, g, p])

    for tag, i1, i2, j1, j2 in codes:
        if tag == "equal" and gt[i1:i2] == pred[j1:j2]:  # the whole block at once
            push("=", "".join(gt[i1:i2]), "".join(pred[j1:j2]))
        elif tag in ("equal", "replace"):
            for g, p in zip(gt[i1:i2], pred[j1:j2], strict=True):
                push("=" if g == p else "t" if st_equivalent(g, p) else "s", g, p)
        elif tag == "insert":
            for p in pred[j1:j2]:
                push("i", "", p)
        else:  # delete
            for g in gt[i1:i2]:
                push("d", g, "")
    return out


def cost(ops: Sequence[Op]) -> int:
    """Edit distance an operation list stands for (each non-``=`` op counts 1)."""
    return sum(1 for op in ops if op[0] != "=")


def char_ops(gt: str, pred: str) -> list[Op]:
    """The alignment of ``gt`` and ``pred`` as operations (see the module docstring).

    Both strings are compared as given (normalise them first, as the scorer did). Among
    minimum-cost alignments the one found on the ``t2s`` forms is used when it is also
    optimal on the raw strings, so that variant pairs line up."""
    g, p = tokens(gt), tokens(pred)
    raw = _ops(g, p, Levenshtein.opcodes(g, p))
    if not any(op[0] == "s" for op in raw):
        return raw  # no substitution that a variant pairing could turn into "t"
    gs, ps = [simplified(t) for t in g], [simplified(t) for t in p]
    if gs == g and ps == p:
        return raw
    via_st = _ops(g, p, Levenshtein.opcodes(gs, ps))
    return via_st if cost(via_st) <= cost(raw) else raw


def op_counts(ops: Sequence[Op]) -> dict[str, int]:
    """``{"equal", "substitutions", "st_only", "insertions", "deletions"}`` in tokens
    (``substitutions`` includes the ``st_only`` ones)."""
    counts = {"equal": 0, "substitutions": 0, "st_only": 0, "insertions": 0, "deletions": 0}
    for kind, g, _ in ops:
        if kind == "=":
            counts["equal"] += len(tokens(g))
        elif kind in ("s", "t"):
            counts["substitutions"] += 1
            counts["st_only"] += kind == "t"
        elif kind == "i":
            counts["insertions"] += 1
        else:
            counts["deletions"] += 1
    return counts
