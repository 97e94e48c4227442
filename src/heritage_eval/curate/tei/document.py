"""One TEI P5 document per Ancient-Bench image.

Structure (every element in the TEI namespace, default prefix)::

    TEI
      teiHeader
        fileDesc
          titleStmt/title            "<medium name> <image stem>: transcription"
          publicationStmt            publisher (heritage-eval version), date (UTC),
                                     availability/licence (--license)
          sourceDesc/bibl            title (image stem), idno type="image" (file name),
                                     idno type="sample" (sample id), note type="medium"
                                     (paper name, folder name), and script / period /
                                     institution notes when conv.jsonl gives them
        encodingDesc/editorialDecl/p the symbol mapping (see :mod:`.markup`)
        profileDesc/textClass/keywords/term type="medium"
      facsimile/surface xml:id="surface-1"/graphic url="<image, relative to the document>"
      text/body/div type="edition" facs="#surface-1"/ab   the transcription

Every document is re-parsed after serialisation (:func:`check`), so a file on disk is
well-formed XML whose root is ``{TEI}TEI``. No TEI RelaxNG schema is available offline;
the structure above is what the tests assert.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lxml import etree

from heritage_eval.curate.tei.markup import TEI_NS, fill, tei, text_of

XML_NS = "http://www.w3.org/XML/1998/namespace"
MAPPING_NOTE = (
    "Transcription after the Ancient-Bench annotation standard. Each column (line of "
    "the ground truth) starts with lb. The damage placeholder (U+25A1) is gap "
    "reason=illegible (quantity = run length; extent=unknown in silk manuscripts); "
    "<unrecognizable> is g type=unrecognizable; <space> is space; <note> (margin "
    "annotations) is note place=margin; <ignore> (centre seam, book ears) is fw "
    "type=ignore. Repetition marks and brackets are kept as written.")


@dataclass(frozen=True)
class Entry:
    """What one document describes: ``sample_id``, ``medium`` (folder name),
    ``medium_name`` (paper name), ``image_name`` (as in conv.jsonl), ``image_url``
    (relative path from the document to the image), ``gt`` and optional ``metadata``
    (script, period, institution)."""

    sample_id: str
    medium: str
    medium_name: str
    image_name: str
    image_url: str
    gt: str
    metadata: Mapping[str, str]


def _sub(parent: etree._Element, tag: str, text: str | None = None,
         **attrs: str) -> etree._Element:
    el = etree.SubElement(parent, tei(tag), attrs)
    if text is not None:
        el.text = text
    return el


def build(entry: Entry, license_text: str, publisher: str, date: str) -> etree._Element:
    """The ``<TEI>`` element of ``entry``. Raises ``ValueError`` (lxml) when a text holds a
    character XML cannot carry."""
    stem = entry.image_name.rsplit(".", 1)[0]
    root = etree.Element(tei("TEI"), nsmap={None: TEI_NS})
    header = _sub(root, "teiHeader")
    file_desc = _sub(header, "fileDesc")
    _sub(_sub(file_desc, "titleStmt"), "title", f"{entry.medium_name} {stem}: transcription")
    pub = _sub(file_desc, "publicationStmt")
    _sub(pub, "publisher", publisher)
    _sub(pub, "date", date, when=date[:10])
    _sub(_sub(pub, "availability"), "licence", license_text)
    bibl = _sub(_sub(file_desc, "sourceDesc"), "bibl")
    _sub(bibl, "title", stem)
    _sub(bibl, "idno", entry.image_name, type="image")
    _sub(bibl, "idno", entry.sample_id, type="sample")
    _sub(bibl, "note", f"{entry.medium_name} ({entry.medium})", type="medium")
    for key, value in entry.metadata.items():
        _sub(bibl, "note", str(value), type=key)
    _sub(_sub(_sub(header, "encodingDesc"), "editorialDecl"), "p", MAPPING_NOTE)
    keywords = _sub(_sub(_sub(header, "profileDesc"), "textClass"), "keywords")
    _sub(keywords, "term", entry.medium_name, type="medium")
    surface = _sub(_sub(root, "facsimile"), "surface")
    surface.set(f"{{{XML_NS}}}id", "surface-1")
    _sub(surface, "graphic", url=entry.image_url)
    div = _sub(_sub(_sub(root, "text"), "body"), "div", type="edition", facs="#surface-1")
    fill(_sub(div, "ab"), entry.gt, entry.medium)
    return root


def serialise(root: etree._Element) -> bytes:
    """UTF-8 XML with declaration; header and facsimile indented, the ``text`` element
    left as built (indenting would add whitespace to the transcription)."""
    root.text = "\n "
    for child in root:
        if child.tag != tei("text"):
            etree.indent(child, space=" ", level=1)
        child.tail = "\n "
    root[-1].tail = "\n"
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8") + b"\n"


def check(data: bytes) -> etree._Element:
    """Re-parse ``data``; returns the root. Raises ``ValueError`` when it is not a
    well-formed TEI document (root not ``{TEI}TEI``, no ``ab``)."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"not well-formed XML: {exc}") from exc
    if root.tag != tei("TEI"):
        raise ValueError(f"root element is {root.tag}, not {tei('TEI')}")
    if edition_ab(root) is None:
        raise ValueError("no text/body/div[@type='edition']/ab")
    return root


def edition_ab(root: etree._Element) -> etree._Element | None:
    """The transcription's ``ab`` of a document written by :func:`build`."""
    found = root.find(f"{tei('text')}/{tei('body')}/{tei('div')}[@type='edition']/{tei('ab')}")
    return found


def transcription(root: etree._Element) -> str:
    """The ground-truth string of a document (:func:`.markup.text_of` of its ``ab``)."""
    ab = edition_ab(root)
    if ab is None:
        raise ValueError("no transcription (text/body/div[@type='edition']/ab)")
    return text_of(ab)
