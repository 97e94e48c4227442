"""Ancient-Bench ground truth <-> TEI P5 text, following the annotation standard of the
Ancient-Bench paper (§4.2.2 symbols, §4.2.4 layout).

==========================  =================================================================
ground truth                TEI (namespace ``http://www.tei-c.org/ns/1.0``)
==========================  =================================================================
start of every line         ``<lb n="k"/>`` (k = 1, 2, …); the ``\\n`` between columns (lines)
                            becomes the next ``lb``, so empty lines (wide spacing) stay
``□`` (run of N)            ``<gap reason="illegible" unit="character" quantity="N"/>``: a
                            character is there but cannot be read, so nothing can be
                            proposed (``unclear`` would carry a reading). In
                            ``silk_manuscripts`` one ``□`` may stand for a damaged stretch
                            of unknown length (§4.2.2), so there each ``□`` is
                            ``<gap reason="illegible" extent="unknown"/>``
``▢`` (U+25A2)              as ``□``; read back as ``□`` (the release writes U+25A1)
``<unrecognizable>``        ``<g type="unrecognizable"/>``: a glyph with no Unicode code point
``<undeciphered>``          ``<g type="undeciphered"/>``
``<space>``                 ``<space/>`` (a significant blank between columns)
``<note>…</note>``          ``<note place="margin">…</note>``: the margin annotations of a
                            printed edition (top, left, bottom, right; §4.2.4)
``<ignore>…</ignore>``      ``<fw type="ignore">…</fw>``: centre seam and book ears of a
                            printed edition — forme work (TEI ``fw``), outside the text
                            proper, kept because the release transcribes it
anything else               text as written (``=`` / ``-`` repetition marks, （ ） of
                            double-line notes, spaces)
==========================  =================================================================

An opening tag without its closing tag (or the reverse) is kept as literal text, so every
string maps to a well-formed tree; :func:`markup_problems` lists such tags (and a tag
nested in one of the same name) so that ``export tei`` can report them.
:func:`text_of` inverts :func:`fill`: ``text_of(fill(s)) == s`` except that ``▢`` comes
back as ``□``.
"""

from __future__ import annotations

import re

from lxml import etree

TEI_NS = "http://www.tei-c.org/ns/1.0"
#: Medium whose ``□`` may stand for a damaged stretch of unknown length.
UNKNOWN_EXTENT_MEDIA = frozenset({"silk_manuscripts"})
GLYPH_TAGS = ("unrecognizable", "undeciphered")
#: Paired tags of the release -> (TEI element, attributes)
PAIRED: dict[str, tuple[str, dict[str, str]]] = {
    "note": ("note", {"place": "margin"}),
    "ignore": ("fw", {"type": "ignore"}),
}
_TOKEN = re.compile(r"\n|[□▢]+|<(?:unrecognizable|undeciphered|space)>|</?(?:note|ignore)>")


def tei(tag: str) -> str:
    """Clark name ``{TEI namespace}tag``."""
    return f"{{{TEI_NS}}}{tag}"


def _balanced(text: str) -> set[tuple[int, int]]:
    """Spans of the paired-tag tokens that have their partner: one stack for all paired
    tags, so a closing tag matches only the innermost open one (no crossing)."""
    stack: list[tuple[str, tuple[int, int]]] = []
    ok: set[tuple[int, int]] = set()
    for m in re.finditer(r"<(/?)(note|ignore)>", text):
        name = m.group(2)
        if not m.group(1):
            stack.append((name, m.span()))
        elif stack and stack[-1][0] == name:
            ok |= {stack.pop()[1], m.span()}
    return ok


def markup_problems(gt: str) -> list[str]:
    """What in ``gt`` does not map cleanly (:func:`fill` still writes it): every paired
    tag without its partner (written as literal text, so the TEI shows ``&lt;note&gt;``
    and possibly half of a nested pair as markup), and every paired tag opened inside
    one of the same name (a margin note inside a margin note). Each item names the tag
    and its 0-based character offset; empty when the string is clean."""
    paired = _balanced(gt)
    problems: list[str] = []
    open_names: list[str] = []
    for m in re.finditer(r"<(/?)(note|ignore)>", gt):
        name, closing = m.group(2), bool(m.group(1))
        if m.span() not in paired:
            problems.append(f"unmatched {m.group(0)!r} at character {m.start()} (written "
                            "as literal text)")
        elif closing:
            open_names.pop()
        else:
            if name in open_names:
                problems.append(f"{m.group(0)!r} nested inside another <{name}> at "
                                f"character {m.start()}")
            open_names.append(name)
    return problems


class _Builder:
    def __init__(self, root: etree._Element) -> None:
        self.stack = [root]
        self.line = 0

    def text(self, s: str) -> None:
        parent = self.stack[-1]
        if len(parent):
            last = parent[-1]
            last.tail = (last.tail or "") + s
        else:
            parent.text = (parent.text or "") + s

    def empty(self, tag: str, **attrs: str) -> etree._Element:
        return etree.SubElement(self.stack[-1], tei(tag), attrs)

    def lb(self) -> None:
        self.line += 1
        self.empty("lb", n=str(self.line))


def fill(ab: etree._Element, gt: str, medium: str = "") -> etree._Element:
    """Append the TEI encoding of ground truth ``gt`` (see the table above) to ``ab``
    (normally a TEI ``<ab>``); ``medium``: the release folder name (decides the
    ``□`` encoding). Returns ``ab``. Raises ``ValueError`` (lxml) when ``gt`` holds a
    character XML cannot carry (a control character)."""
    b = _Builder(ab)
    b.lb()
    paired = _balanced(gt)
    pos = 0
    for m in _TOKEN.finditer(gt):
        if m.start() > pos:
            b.text(gt[pos:m.start()])
        tok = m.group(0)
        pos = m.end()
        if tok == "\n":
            b.lb()
        elif tok[0] in "□▢":
            if medium in UNKNOWN_EXTENT_MEDIA:
                for _ in tok:
                    b.empty("gap", reason="illegible", extent="unknown")
            else:
                b.empty("gap", reason="illegible", unit="character", quantity=str(len(tok)))
        elif tok == "<space>":
            b.empty("space")
        elif tok[1:-1] in GLYPH_TAGS:
            b.empty("g", type=tok[1:-1])
        elif m.span() not in paired:
            b.text(tok)  # an unmatched <note> / </ignore>: literal text
        elif tok.startswith("</"):
            b.stack.pop()
        else:
            name, attrs = PAIRED[tok[1:-1]]
            b.stack.append(b.empty(name, **attrs))
    if pos < len(gt):
        b.text(gt[pos:])
    return ab


def text_of(ab: etree._Element) -> str:
    """The ground-truth string of a TEI ``<ab>`` written by :func:`fill` (the first
    ``lb`` starts the text; every later one is a ``\\n``). Raises ``ValueError`` for an
    element the mapping does not know."""
    seen_lb = [False]

    def walk(el: etree._Element) -> str:
        out = [el.text or ""]
        for child in el:
            out.append(render(child))
            out.append(child.tail or "")
        return "".join(out)

    def render(el: etree._Element) -> str:
        name = etree.QName(el).localname if isinstance(el.tag, str) else ""
        if name == "lb":
            first = not seen_lb[0]
            seen_lb[0] = True
            return "" if first else "\n"
        if name == "gap":
            return "□" * int(el.get("quantity", "1"))
        if name == "space":
            return "<space>"
        if name == "g":
            return f"<{el.get('type')}>"
        for tag, (tei_name, attrs) in PAIRED.items():
            if name == tei_name and all(el.get(k) == v for k, v in attrs.items()):
                return f"<{tag}>{walk(el)}</{tag}>"
        raise ValueError(f"unexpected TEI element <{name}> in the transcription")

    return walk(ab)
