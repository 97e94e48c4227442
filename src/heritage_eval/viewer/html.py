"""Small HTML builders shared by the header and the per-benchmark renderers.

Everything that comes from a record is escaped here (:func:`esc`); renderers never
concatenate raw record text into markup.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import Any

from heritage_eval.viewer.images import ImageEntry

#: one box drawn over an image: normalized COCO ``[x, y, w, h]`` (fractions of the image
#: width/height, (x, y) the top-left corner), a label and a CSS class
Box = tuple[Sequence[float], str, str]


def esc(value: object) -> str:
    """``value`` as escaped HTML text (``None`` -> ``""``)."""
    if value is None:
        return ""
    s = value if isinstance(value, str) else str(value)
    if not _SPECIAL.search(s):
        return s
    return escape(s, quote=True)


_SPECIAL = re.compile(r"[&<>\"']")


def needs_escape(text: str) -> bool:
    """Whether :func:`esc` would change ``text`` (it holds ``&``, ``<``, ``>``, ``"`` or
    ``'``)."""
    return _SPECIAL.search(text) is not None


def fmt_num(value: object, decimals: int = 3) -> str:
    """A number for display (``—`` for ``None``; integers without decimals)."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return esc(value)


def text_block(label: str, text: object, cls: str = "") -> str:
    """A labelled ``<pre>`` block (wrapping, whitespace kept); ``None`` shows ``(none)``."""
    body = '<span class="muted">(none)</span>' if text in (None, "") else esc(
        text if isinstance(text, str) else json.dumps(text, ensure_ascii=False))
    return (f'<div class="tb {cls}"><div class="lbl">{esc(label)}</div>'
            f'<pre class="txt">{body}</pre></div>')


def kv_table(rows: Iterable[tuple[str, object]], cls: str = "kv") -> str:
    """A two-column table of ``(name, value)``; values are escaped (dicts as JSON)."""
    out = []
    for k, v in rows:
        shown = esc(json.dumps(v, ensure_ascii=False)) if isinstance(v, dict | list) \
            else fmt_num(v) if isinstance(v, int | float) or v is None else esc(v)
        out.append(f"<tr><th>{esc(k)}</th><td>{shown}</td></tr>")
    return f'<table class="{cls}">{"".join(out)}</table>' if out else ""


def badge(state: str) -> str:
    """The coloured badge of an outcome state."""
    return f'<span class="badge st-{esc(state)}">{esc(state)}</span>'


def json_details(label: str, value: Any) -> str:
    """A collapsed ``<details>`` with ``value`` as indented JSON."""
    body = escape(json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str),
                  quote=False)
    return f'<details class="raw"><summary>{esc(label)}</summary><pre>{body}</pre></details>'


def valid_box(box: object) -> list[float] | None:
    """``box`` as ``[x, y, w, h]`` floats when it is a normalized box, else ``None``."""
    if not isinstance(box, list | tuple) or len(box) != 4:
        return None
    try:
        x, y, w, h = (float(v) for v in box)
    except (TypeError, ValueError):
        return None
    if not (-0.01 <= x <= 1.01 and -0.01 <= y <= 1.01 and 0 < w <= 1.01 and 0 < h <= 1.01):
        return None
    return [x, y, w, h]


def _box_div(box: Sequence[float], label: str, cls: str) -> str:
    x, y, w, h = (max(0.0, min(1.0, v)) * 100 for v in box)
    tag = f"<span>{esc(label)}</span>" if label else ""
    return (f'<div class="box {esc(cls)}" style="left:{x:.3f}%;top:{y:.3f}%;'
            f'width:{w:.3f}%;height:{h:.3f}%">{tag}</div>')


def figure(entry: ImageEntry | None, caption: str = "", *, boxes: Sequence[Box] = (),
           cls: str = "", large: bool = False) -> str:
    """An image as the site shows it: the thumbnail (the zoom copy for ``large``), boxes
    drawn over it as absolutely positioned ``div``s (percent of the image), a caption
    with the size and a link to the original; a placeholder naming the path when the
    file is missing. Clicking opens the zoom view (``data-full``)."""
    if entry is None:
        return ""
    cap = f"<figcaption>{esc(caption)}"
    if entry.width and entry.height:
        cap += f' <span class="muted">{entry.width}×{entry.height}</span>'
    if entry.missing:
        return (f'<figure class="img {esc(cls)}"><div class="img-missing">image missing: '
                f'<code>{esc(entry.missing)}</code></div>{cap}</figcaption></figure>')
    src = entry.full if large else entry.thumb
    ratio = (f' style="aspect-ratio:{entry.width}/{entry.height}"'
             if entry.width and entry.height else "")
    overlay = "".join(_box_div(b, label, c) for b, label, c in boxes)
    return (f'<figure class="img {esc(cls)}"><div class="imgwrap zoomable"{ratio} '
            f'data-full="{esc(entry.full)}"><img src="{esc(src)}" alt="{esc(caption)}" '
            f'loading="lazy">{overlay}</div>{cap} <a class="orig" href="{esc(entry.orig)}" '
            f'target="_blank">original</a></figcaption></figure>')


def table(head: Sequence[str], rows: Iterable[Sequence[str]], cls: str = "grid") -> str:
    """A table from already-escaped cell HTML."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def scores_line(scores: Mapping[str, float | None], decimals: int = 3) -> str:
    """``name value`` pairs of a record's scores, escaped."""
    return " ".join(f'<span class="score"><b>{esc(k)}</b> {fmt_num(v, decimals)}</span>'
                    for k, v in scores.items())
