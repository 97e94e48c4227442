"""Model-written class descriptions for the description ablation (Table 5, "generated").

File format: a JSON object mapping a class key (``"Tie/王羲之-行书"``) or a style
(``"王羲之-行书"``, used for that style in both domains) to a description string.
:func:`write_descriptions` makes such a file by asking a text model to describe each
class from its metadata alone (calligrapher, script, dynasty, medium; no image). That is
our procedure: the paper only says its ablation used "GPT-generated" descriptions, not
what the model was given, which model or which prompt (see ``docs/protocols.md``).
"""

from __future__ import annotations

import json
from pathlib import Path

from heritage_eval.benchmarks.hcsu.pipeline import Engine
from heritage_eval.benchmarks.hcsu.prompts import template
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.schema import MEDIUM, HcsuDataset, StyleClass
from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.parsing import clean_answer
from heritage_eval.core.runner import RunItem, run_items
from heritage_eval.core.types import Conversation, Message

WRITE_PROMPT = (
    "Write an expert description of the calligraphic style of {calligrapher} in {script}"
    "{dynasty}, medium: {medium}, in at most {max_words} words: brushwork, stroke "
    "shapes, structure, ink and overall character. Write the description only, in English.")


def read_generated(path: Path) -> dict[str, str]:
    """Read a generated-descriptions file. Raises :class:`HcsuConfigError` naming the
    file when it is unreadable or not an object of non-empty strings."""
    try:
        data = json.loads(read_regular_text(path, encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HcsuConfigError(f"cannot read generated descriptions {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise HcsuConfigError(f"{path}: expected a JSON object class -> description")
    bad = [k for k, v in data.items() if not isinstance(v, str) or not v.strip()]
    if bad:
        raise HcsuConfigError(f"{path}: empty or non-string description for {bad[:5]}")
    return {str(k): str(v).strip() for k, v in data.items()}


def write_conversation(cls: StyleClass, dynasty: str | None, max_words: int) -> Conversation:
    """The text-only request for one class's generated description."""
    text = WRITE_PROMPT.format(calligrapher=cls.calligrapher, script=cls.script_type,
                               dynasty=f" ({dynasty})" if dynasty else "",
                               medium=MEDIUM[cls.domain], max_words=max_words)
    return Conversation(system=template("system"), turns=(Message.user(text),),
                        payload={"task": "hcsu-write-description", "sample_id": cls.key})


def write_descriptions(dataset: HcsuDataset, engine: Engine, max_words: int = 50,
                       limit: int | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """Ask ``engine`` for one description per class (the first ``limit`` classes by key
    when given).

    Returns ``(class key -> description, class key -> error)``; failed or empty answers
    go to the second mapping, never into the file.
    """
    items = []
    for key, cls in sorted(dataset.classes.items())[:limit]:
        dynasty = next((i.record.dynasty for i in cls.images if i.record.dynasty), None)
        items.append(RunItem(key, write_conversation(cls, dynasty, max_words)))
    results = run_items(items, engine.backend, engine.settings, engine.cache,
                        engine.concurrency, desc="write descriptions")
    good: dict[str, str] = {}
    errors: dict[str, str] = {}
    for key, res in results.items():
        text = clean_answer(res.responses[-1].text or "") if res.responses else ""
        if res.error or not text:
            errors[key] = res.error or "empty answer"
        else:
            good[key] = text
    return good, errors
