"""The emotion slot of the affective dialogue: turn 3 names the emotion the model chose.

Paper, App. B.3: the Visual Clue Identification turn repeats the model's own answer to the
Emotion Detection turn as ``[emotion] {identified_emotion}``. The generator writes the
slot :data:`EMOTION_SLOT` into the turn-3 prompt; just before that turn is sent, the
runner (``Conversation.fill_turn``, :class:`EmotionCarry`) replaces it with
:func:`identified_emotion` of the model's turn-2 answer:

- parsed (a valid letter, or an echoed option text): the chosen option's label text,
  e.g. ``B`` -> ``Joy``;
- unparsed (no valid letter): the model's own answer as it gave it, whitespace collapsed,
  a leading ``[emotion]`` tag dropped and cut to :data:`MAX_UNPARSED_CHARS` characters
  (an ellipsis marks a cut); an empty answer gives :data:`NO_EMOTION`. Decision (see
  ``GENERATION.md``): the turn then still asks about *what the model said*, the dialogue
  stays the model's own, and the turn-2 row is already counted as invalid.

A question file without the slot (written before it existed) is sent unchanged. Light
module (no image libraries): ``run muse`` imports it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from heritage_eval.benchmarks.muse.questions import Question, QuestionTurn
from heritage_eval.core.parsing import parse_choice
from heritage_eval.core.types import Message, TextPart

#: Placeholder in the turn-3 prompt, replaced at run time.
EMOTION_SLOT = "{identified_emotion}"
#: Task whose answer fills the slot.
SOURCE_TASK = "emotion_detection"
#: Longest unparsed answer inserted (characters, before the ellipsis).
MAX_UNPARSED_CHARS = 80
#: Inserted when the turn-2 answer is empty.
NO_EMOTION = "(no emotion given)"

_TAG = re.compile(r"^\s*\[\s*emotion\s*\]\s*", re.IGNORECASE)


def identified_emotion(turn: QuestionTurn, answer: str) -> str:
    """The emotion named by ``answer`` to the emotion-detection ``turn`` (module
    docstring): the chosen option's text when it parses, else the trimmed answer."""
    labels = [o.label for o in turn.options]
    texts = {o.label: o.text for o in turn.options if o.text}
    parsed = parse_choice(answer, labels, texts or None, tag=turn.tag)
    if parsed.ok:
        return texts.get(str(parsed.value), str(parsed.value))
    raw = " ".join(_TAG.sub("", answer).split())
    if not raw:
        return NO_EMOTION
    return raw if len(raw) <= MAX_UNPARSED_CHARS else raw[:MAX_UNPARSED_CHARS].rstrip() + "…"


def needs_fill(question: Question) -> bool:
    """Whether some turn of ``question`` carries :data:`EMOTION_SLOT`."""
    return any(EMOTION_SLOT in t.prompt for t in question.turns)


def filled_prompt(question: Question, index: int, answers: Sequence[str]) -> str:
    """The prompt of turn ``index`` as sent, given the model's ``answers`` to the earlier
    turns: the slot replaced by the emotion of the latest earlier emotion-detection turn.
    Unchanged when the turn has no slot or no such turn was answered."""
    prompt = question.turns[index].prompt
    if EMOTION_SLOT not in prompt:
        return prompt
    source = [i for i in range(min(index, len(answers)))
              if question.turns[i].task == SOURCE_TASK]
    if not source:
        return prompt
    return prompt.replace(EMOTION_SLOT, identified_emotion(question.turns[source[-1]],
                                                           answers[source[-1]]))


def filled_question(question: Question, answers: Sequence[str]) -> Question:
    """``question`` with every slot filled from ``answers`` (one per turn answered): the
    prompts as the model saw them, for the run's records."""
    if not needs_fill(question):
        return question
    turns = [t.model_copy(update={"prompt": filled_prompt(question, i, answers)})
             for i, t in enumerate(question.turns)]
    return question.model_copy(update={"turns": turns})


@dataclass(frozen=True, eq=False)
class EmotionCarry:
    """``Conversation.fill_turn`` of one question: rewrites the text parts of turn
    ``index`` with :func:`filled_prompt` (images untouched). Picklable; hashed by
    identity (a frozen ``Conversation`` holding it stays hashable)."""

    question: Question

    def __call__(self, index: int, message: Message, answers: Sequence[str]) -> Message:
        prompt = self.question.turns[index].prompt
        if EMOTION_SLOT not in prompt:
            return message
        text = filled_prompt(self.question, index, answers)
        parts = tuple(TextPart(text=p.text.replace(prompt, text))
                      if isinstance(p, TextPart) else p for p in message.content)
        return message.model_copy(update={"content": parts})
