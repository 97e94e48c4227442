"""Prompts: one base rule prompt plus one addition per medium (our own wording).

The rules encode the annotation conventions described in the Ancient-Bench paper
(sections 4.2.2-4.2.4 and appendix A.5): answer inside ``<res>…</res>``, no added
punctuation, repetition marks kept, ``□`` for illegible characters, ``<unrecognizable>``
for characters outside Unicode, one line per column read right-to-left and top-to-bottom,
characters as written, later collectors' seals ignored, nothing completed from memory.

Three conventions of the paper's parsing standard (§4.2.4), written the way the released
ground truth writes them (measured on the official demo ground truth, 173 lines of all 9
media, and the real sample; see ``tests/ancient_bench/test_ab_conventions.py``):

- reading order of **horizontal** text: right to left, like vertical columns (rule 6);
- the **inter-line spacing mark**: the paper names it ``<space>``, but no released line
  contains that tag; the ground truth writes a short gap as a space (142 in the demo
  ground truth) and a wide gap between sections as an empty line (31). Rule 7 asks for
  exactly that. The official evaluator drops all whitespace (``ignore_space``), so the
  mark never changes an official score, whereas a literal ``<space>`` answer would be
  scored as 7 extra tokens (``<`` and ``>`` are kept punctuation, the letters count);
- the **bracket form of double-line interlinear notes**: full-width parentheses
  ``（…）`` around the note, in place (20 pairs in the demo ground truth: woodblock
  editions and a cliff carving) — rule 8. The brackets are Unicode punctuation
  (categories Ps / Pe), which the official evaluator drops (``ignore_punc``): the scores
  of the official protocol are unchanged, and with ``--no-ignore-punc`` an answer in
  this form matches the ground truth. Scoring is not changed for any of the three.

Templates can be replaced from a JSON file (``--prompts FILE``): an object mapping
``"base"`` and/or medium names (release folder names such as ``"seals"`` or paper names
such as ``"Seal"``) to text; entries not named keep their default. The same object may
be the ``"ancient-bench"`` section of a ``heritage-eval prompts dump`` file.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from heritage_eval.benchmarks.ancient_bench.categories import MEDIA, resolve_category
from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.prompt_templates import checked_template
from heritage_eval.core.types import stable_hash

BASE_PROMPT = """\
The image shows writing on an ancient Chinese artifact (or a rubbing or photograph of one). \
Transcribe the writing, following these rules:
1. Output the transcription between <res> and </res> and write nothing else, \
no comments before, inside or after it.
2. Do not add any punctuation that is not on the object itself (the brackets of rule 8 \
are the one exception).
3. Copy repetition and ligature marks exactly where they stand: = and - \
(and ~ or 、 when they are written).
4. Write □ for every character that is there but cannot be read. When damage hides \
a stretch whose number of characters cannot be told, write one □ for the whole stretch.
5. Write <unrecognizable> for a character that has no Unicode code point.
6. Keep the layout: one output line per column (vertical writing) or per row \
(horizontal writing). Vertical writing is read from the rightmost column to the leftmost, \
each column from top to bottom. Horizontal writing (a title, a plaque, a line across the \
top) is also read from right to left: the character at the right end comes first.
7. Show blank spacing: a short gap left in the writing (a pause) becomes one space, and a \
wide empty space that separates sections, paragraphs or separate texts becomes an empty \
line.
8. Small notes written in two half-width columns inside a main column (double-line \
interlinear notes) stay where they stand in the main text, inside full-width brackets \
（ ）: read the right half-column first, then the left one.
9. Write each character in the form it has on the object: do not turn traditional \
forms into simplified ones or the reverse, and keep variant and rare characters.
10. Leave out seals that later owners or connoisseurs stamped on the piece.
11. Transcribe only what can be seen. Never fill a gap or correct the text from a known \
version of the work you may remember."""

MEDIUM_PROMPTS: dict[str, str] = {
    "oracle_bone_artifacts": """\
This is an oracle-bone inscription (on turtle shell or bone, or a rubbing of it). \
Give each archaic glyph as the modern standard character scholars use to transcribe it. \
Inscriptions may sit in separate groups around cracks; keep each group's own column order.""",
    "bronze_rubbings": """\
This is a rubbing of an inscription cast or engraved on a bronze vessel. Give each archaic \
glyph as the modern standard character scholars use to transcribe it, and ignore the \
decorative patterns around the text.""",
    "bamboo_wooden_slips": """\
These are bamboo or wooden slips. Each slip normally holds one column; read the slips \
from right to left. Faded, split or broken places get □ as in rule 4.""",
    "silk_manuscripts": """\
This is a manuscript written on silk. Much of it may be lost or stained: mark each \
unreadable character with □, and a lost stretch of unknown length with a single □.""",
    "seals": """\
This is a seal, either the impression or the carved face. Here the seal text itself is \
what must be transcribed (rule 10 does not apply). The characters may be raised (red on \
white) or cut in (white on red), and a carved face shows them mirrored: read them as they \
appear in the impression. Seal legends usually run in columns, right to left.""",
    "inscription_rubbings": """\
This is a rubbing of a carved stone stele, usually light characters on a dark ground. \
Follow the reading order of the main body of text and transcribe it column by column.""",
    "cliff_carvings": """\
This inscription is carved into a natural rock face and may be weathered. Take the \
reading direction of the body text (the longest passage, in the largest characters) and \
use it for the whole inscription.""",
    "traditional_chinese_book_editions": """\
This is a page of a traditional printed book (woodblock edition). Transcribe the main text \
and its small double-column interlinear notes in reading order (the notes in （ ） as in \
rule 8). Put the centre seam and the book ears inside <ignore></ignore>, centre seam \
first and then the book ears, one line per column. Put annotations in the margins (top \
margin, side notes, bottom margin) inside <note></note>, going round the page \
anticlockwise: top, then left, then bottom, then right, one line per column.""",
    "calligraphys": """\
This is a work of calligraphy (a letter, a poem draft, a colophon and the like), often in \
running or cursive script. Identify each cursive form as the character it stands for and \
write that character in the form used on the page.""",
}


@functools.lru_cache(maxsize=256)
def _full_prompt(base: str, extra: str) -> str:
    """One string object per (base, addition): 10,000 samples of a medium share it."""
    return f"{base}\n\n{extra}" if extra else base


class PromptSet(BaseModel):
    """The effective prompts: ``base`` and ``media`` (release folder name -> addition)."""

    model_config = ConfigDict(frozen=True)
    base: str = BASE_PROMPT
    media: dict[str, str] = Field(default_factory=lambda: dict(MEDIUM_PROMPTS))
    source: str = "built-in"

    def prompt(self, category: str) -> str:
        """Full prompt for a category: base rules, a blank line, the medium addition
        (base rules only for a category without an addition)."""
        return _full_prompt(self.base, self.media.get(category, ""))

    def hash(self) -> str:
        """Fingerprint of the whole template set (16 hex characters); recorded in
        provenance as ``prompt_templates_hash`` (per-sample rows carry
        :func:`prompt_hash` of the one full prompt sent instead)."""
        return stable_hash({"base": self.base, "media": self.media})


def prompt_hash(text: str) -> str:
    """Fingerprint of one full prompt text (16 hex characters); the per-sample
    ``prompt_hash`` of ``samples.jsonl``."""
    return stable_hash(text)


def load_prompts(path: str | Path | None) -> PromptSet:
    """The default prompts, with the entries named in the JSON file ``path`` replaced.

    Every entry is sent as written, so — as for every ``--prompts`` file — it is read as
    a ``str.format`` template with no placeholder: a literal brace is written doubled
    (``{{`` / ``}}``, sent as one brace) and any ``{name}`` is refused
    (:func:`~heritage_eval.core.prompt_templates.checked_template`), never sent unfilled.

    Raises ``ValueError`` (naming the file and entry) for invalid JSON, a non-object, a
    non-string value, a key that is neither ``"base"`` nor a known medium, an unbalanced
    brace or a ``{placeholder}``.
    """
    if path is None:
        return PromptSet()
    p = Path(path)
    try:
        data = json.loads(read_regular_text(p))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read prompt file {p}: {exc}") from exc
    if isinstance(data, dict) and isinstance(data.get("ancient-bench"), dict):
        data = data["ancient-bench"]  # a 'heritage-eval prompts dump' file of every benchmark
    if not isinstance(data, dict):
        raise ValueError(f"prompt file {p}: expected a JSON object of name -> text")
    base = BASE_PROMPT
    media = dict(MEDIUM_PROMPTS)
    for key, value in data.items():
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"prompt file {p}: entry {key!r} must be a non-empty string")
        value = checked_template(value, (), f"prompt file {p}: entry {key!r}",
                                 formatted=False)
        if key == "base":
            base = value
            continue
        folder = resolve_category(key)
        if folder not in MEDIA:
            raise ValueError(f"prompt file {p}: unknown key {key!r}; use 'base' or one of "
                             f"{', '.join(MEDIA)} (or their paper names)")
        media[folder] = value
    return PromptSet(base=base, media=media, source=str(p))
