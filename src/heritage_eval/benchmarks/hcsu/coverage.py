"""What an HCSU average covers: the paper's averages (Table 2's Avg. Acc, the pooled
Bei + Tie of Tables 4 and the calibration tables, the Overall of the interval tables)
are over its two domains, Bei and Tie. A run in which one domain could not be loaded (an
unreadable annotation file, a missing folder) averages the other alone; such a value is
not comparable with the paper's, and every table that shows it says so.

Rule: a domain *counts* for an average when the result has an answered sample of it
(``per_domain[d]["n"] > 0``). When at least one but fewer than all of the paper's
domains count, each average cell of that row carries :data:`MARK` and the table gets
:func:`coverage_footnote`; the console's last lines say it too (:func:`coverage_lines`).
When no domain counts there is no average (``–``), and nothing is marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from heritage_eval.benchmarks.hcsu.schema import DOMAINS

#: The mark of an average over fewer domains than the paper's (``†`` is the flags' mark).
MARK = "‡"


def covered_domains(per_domain: Mapping[str, Any] | None) -> list[str]:
    """The paper's domains (Bei, Tie order) with an answered sample in ``per_domain``
    (a ``results`` entry's ``per_domain``: domain -> dict with ``n``); ``[]`` for
    ``None``."""
    per = per_domain or {}
    return [d for d in DOMAINS if int((per.get(d) or {}).get("n") or 0) > 0]


def is_partial(per_domain: Mapping[str, Any] | None) -> bool:
    """True when an average over ``per_domain`` covers some, but not all, of the
    paper's domains (:func:`covered_domains`)."""
    return 0 < len(covered_domains(per_domain)) < len(DOMAINS)


def marked(cell: str, per_domain: Mapping[str, Any] | None) -> str:
    """``cell`` (an average's text) with :data:`MARK` appended when the average covers
    fewer than the paper's domains and shows a value (not ``–``)."""
    if cell and cell != "–" and is_partial(per_domain):
        return f"{cell} {MARK}"
    return cell


def coverage_sentence(per_domain: Mapping[str, Any] | None, what: str = "Avg.") -> str | None:
    """``"Avg. covers 1 of the paper's 2 domains (Tie; no answered sample of Bei); NOT
    comparable with the paper's Avg., over Bei and Tie."`` (``what`` names the
    average), or ``None`` when the average covers all the
    paper's domains or none."""
    if not is_partial(per_domain):
        return None
    covered = covered_domains(per_domain)
    missing = [d for d in DOMAINS if d not in covered]
    return (f"{what} covers {len(covered)} of the paper's {len(DOMAINS)} domains "
            f"({', '.join(covered)}; no answered sample of {', '.join(missing)}); NOT "
            f"comparable with the paper's {what}, over {' and '.join(DOMAINS)}.")


def coverage_footnote(per_domains: Sequence[Mapping[str, Any] | None],
                      what: str = "Avg.") -> str | None:
    """The footnote of a table whose rows' averages are over ``per_domains`` (one per
    row): :data:`MARK` and :func:`coverage_sentence` when some row is marked (each
    distinct coverage once), else ``None``."""
    sentences = list(dict.fromkeys(s for p in per_domains
                                   if (s := coverage_sentence(p, what)) is not None))
    if not sentences:
        return None
    return f"{MARK} " + " ".join(sentences)


def coverage_lines(results: Sequence[Mapping[str, Any]], what: str = "Avg.") -> list[str]:
    """The console's closing lines: one ``note:`` line per result whose average covers
    fewer than the paper's domains (prefixed by the model when there are several)."""
    lines = []
    for r in results:
        sentence = coverage_sentence(r.get("per_domain"), what)
        if sentence:
            who = f"{r.get('model')}: " if len(results) > 1 else ""
            lines.append(f"note: {who}{sentence}")
    return lines
