"""The two scoring protocols: ``official`` (what the official code computes, the default)
and ``corrected`` (what its README and the paper describe).

Each field is one place where the official code and its README disagree
(docs/chronicles-ocr.md lists the sources):

``strict_iou``
    README: a box counts at "IoU > 0.75". Code (``judges/spotting.py`` ``_match``):
    ``iou >= 0.75``. Corrected: strictly greater.
``unk_before_punct``
    README: ``[UNK]`` "is filtered before scoring" the parsing text. Code
    (``judges/extract_text.py`` ``judge``): punctuation — brackets included — is removed
    first, so ``[UNK]`` and ``<UNK>`` become the letters ``UNK``, which the ``[UNK]`` rule
    no longer finds; they stay in the text and count as three characters in the edit
    distance (only □ ■ ▢ ◻ ◼ are removed). Corrected: the placeholders are removed
    before the punctuation.
``score_unread_spotting``
    README: Spotting is an F1 per image. Code: an answer from which no valid box list
    can be read has no ``extract`` (``infer.py``), the judge scores it ``no_extract``
    without the F1 fields, and ``summarize.py`` then leaves the image out of Spotting and
    Detection (while an unread answer of any other task counts 0). Corrected: the image
    stays in, with F1 = 0.
``keep_valid_boxes``
    Code (``prompts/spotting.py`` ``extract``): one invalid element (a bad ``bbox``) makes
    the whole answer unread (previous point). Corrected: the valid boxes are scored.
``drop_targetless_recognition``
    README: recognition names "the modern character inside a red box". Code: an image
    with no readable, non-``[UNK]`` reference box gets no red box and no question
    (``no_referring_target``), yet the summary counts it as a wrong answer (0).
    Corrected: such an image is not a recognition sample (listed, not scored).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: the IoU a predicted box needs (with the comparison the protocol names)
IOU_THRESHOLD = 0.75


@dataclass(frozen=True)
class Protocol:
    """One protocol's choices (module docstring)."""

    name: str
    strict_iou: bool
    unk_before_punct: bool
    score_unread_spotting: bool
    keep_valid_boxes: bool
    drop_targetless_recognition: bool

    def as_dict(self) -> dict[str, Any]:
        """The choices as a JSON-ready dict (provenance)."""
        return asdict(self)


OFFICIAL = Protocol("official", strict_iou=False, unk_before_punct=False,
                    score_unread_spotting=False, keep_valid_boxes=False,
                    drop_targetless_recognition=False)
CORRECTED = Protocol("corrected", strict_iou=True, unk_before_punct=True,
                     score_unread_spotting=True, keep_valid_boxes=True,
                     drop_targetless_recognition=True)
PROTOCOLS = {p.name: p for p in (OFFICIAL, CORRECTED)}
