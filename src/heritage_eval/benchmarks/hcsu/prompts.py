"""Prompt wording for the two HCSU tasks (our own words, following the protocol of §4).

Both prompts cast the model as an expert in Chinese calligraphy history and script
identification (§4.2). Images travel as separate image parts in one user message, in the
order the text announces them. :data:`PROMPT_HASH` fingerprints every built-in template
string; :func:`prompt_hash` (the templates in use) is recorded in each run's provenance.

The templates in use can be replaced from a JSON file (``--prompts FILE``, the ``hcsu``
section of ``heritage-eval prompts dump``): an object mapping names of :data:`DEFAULTS`
(``system``, ``discrimination_intro``…) to text, or a document with an ``"hcsu"`` object
of them; names not given keep the built-in text. The message builders read the templates
at call time (:func:`template`), so ``TEMPLATES.using(path)``
(:class:`~heritage_eval.core.prompt_templates.TemplateSet`) takes effect for the
questions built inside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from heritage_eval.core.prompt_templates import TemplateSet
from heritage_eval.core.types import ImagePart, Message, TextPart, stable_hash

SYSTEM = "You are an expert in Chinese calligraphy history and script identification."

DISCRIMINATION_INTRO = (
    "You will see a target character image and {k} candidate styles labelled {first}-{last}. "
    "Each candidate gives an expert description of one calligrapher's style in one script "
    "and a reference image of a character written in that style. Decide which candidate's "
    "hand and script produced the target.")
DISCRIMINATION_TARGET = "Target image:"
DISCRIMINATION_CANDIDATE = "Candidate {label}\nStyle description: {description}\nReference image:"
DISCRIMINATION_ASK = (
    "Compare the target with every candidate: the brushwork of single strokes (how each "
    "stroke enters, travels and ends), the structure of the character, and its spatial "
    "arrangement and running momentum (qi). Reply with the letter of the matching candidate "
    "only, without any explanation.")

DESCRIPTION_INTRO = ("Each example below pairs an image of a calligraphy character with an "
                     "expert description of its style.")
DESCRIPTION_SHOT_IMAGE = "Example {index} image:"
DESCRIPTION_SHOT_TEXT = "Example {index} style description: {description}"
DESCRIPTION_TARGET = "Target image:"
DESCRIPTION_ASK = (
    "Describe the calligraphic style of the target character in at most {max_words} words, "
    "in the manner and language of the examples: brushwork and stroke shapes, structure, "
    "ink, and overall character. Write the description only.")

PROMPT_HASH = stable_hash([SYSTEM, DISCRIMINATION_INTRO, DISCRIMINATION_TARGET,
                           DISCRIMINATION_CANDIDATE, DISCRIMINATION_ASK, DESCRIPTION_INTRO,
                           DESCRIPTION_SHOT_IMAGE, DESCRIPTION_SHOT_TEXT, DESCRIPTION_TARGET,
                           DESCRIPTION_ASK])


#: Template name -> built-in text, in :data:`PROMPT_HASH` order.
DEFAULTS: dict[str, str] = {
    "system": SYSTEM, "discrimination_intro": DISCRIMINATION_INTRO,
    "discrimination_target": DISCRIMINATION_TARGET,
    "discrimination_candidate": DISCRIMINATION_CANDIDATE,
    "discrimination_ask": DISCRIMINATION_ASK, "description_intro": DESCRIPTION_INTRO,
    "description_shot_image": DESCRIPTION_SHOT_IMAGE,
    "description_shot_text": DESCRIPTION_SHOT_TEXT, "description_target": DESCRIPTION_TARGET,
    "description_ask": DESCRIPTION_ASK}
TEMPLATES = TemplateSet("hcsu", DEFAULTS, formatted=(
    "discrimination_intro", "discrimination_candidate", "description_shot_image",
    "description_shot_text", "description_ask"))


def template(name: str) -> str:
    """The template ``name`` in use (built-in unless a ``--prompts`` file replaced it)."""
    return TEMPLATES.get(name)


def prompt_hash() -> str:
    """Fingerprint of the templates in use (16 hex characters; :data:`PROMPT_HASH` when
    none is replaced)."""
    return TEMPLATES.hash()


def discrimination_message(target_image: str,
                           candidates: Sequence[tuple[str, str, str]]) -> Message:
    """The user message of one K-way question.

    ``candidates``: ``(label, description, reference image path)`` in display order.
    Parts: intro, target text + image, then per candidate its text + reference image, then
    the instruction; so image ``i + 1`` is candidate ``i``'s reference.
    """
    labels = [c[0] for c in candidates]
    parts: list[TextPart | ImagePart] = [
        TextPart(text=template("discrimination_intro").format(
            k=len(candidates), first=labels[0], last=labels[-1])),
        TextPart(text=template("discrimination_target")), ImagePart(path=target_image)]
    for label, description, image in candidates:
        parts.append(TextPart(text=template("discrimination_candidate").format(
            label=label, description=description)))
        parts.append(ImagePart(path=image))
    parts.append(TextPart(text=template("discrimination_ask")))
    return Message(role="user", content=tuple(parts))


def description_message(target_image: str, shots: Sequence[tuple[str, str]],
                        max_words: int) -> Message:
    """The user message of one N-shot description request.

    ``shots``: ``(image path, expert description)`` in display order; the target image
    comes last, then the instruction.
    """
    parts: list[TextPart | ImagePart] = [TextPart(text=template("description_intro"))]
    for index, (image, description) in enumerate(shots, start=1):
        parts.append(TextPart(text=template("description_shot_image").format(index=index)))
        parts.append(ImagePart(path=image))
        parts.append(TextPart(text=template("description_shot_text").format(
            index=index, description=description)))
    parts += [TextPart(text=template("description_target")), ImagePart(path=target_image),
              TextPart(text=template("description_ask").format(max_words=max_words))]
    return Message(role="user", content=tuple(parts))
