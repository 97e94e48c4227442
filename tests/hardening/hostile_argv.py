"""Hostile argument vectors for every command, generated from the parser itself.

Used by ``tests/hardening/test_hostile_every_command.py``. :func:`leaf_commands` walks
``build_parser(None)`` (every sub-command of ``run``, ``score``, the groups and the
platform commands, so a new command is covered without editing the test);
:func:`slots` reads each command's argparse actions and sorts them by role:

- **path** (``type`` is :class:`~pathlib.Path`, or a ``dest`` / ``metavar`` that names a
  file or folder: ``--data``, ``FILE.yaml``, ``RUN_DIR`` …), with whether a folder or a
  file is expected and whether it is an *output* (``--out``, ``dst``, ``--json``,
  ``--extract-to``, ``--cache``: what the command may write to);
- **number** (a ``type`` that converts ``"2"`` or ``"0.5"`` to a number, or a numeric
  list such as ``--ks``);
- **choice** (``choices``), **flag** (no value) and **text** (the rest).

:func:`plan_cases` draws the cases of one command with a fixed seed: the command with
plausible values (``base``), each path kind of :data:`PATH_KINDS` once (on one path
slot, rotated so that different kinds hit different slots), two values of
:data:`NUMBER_VALUES` on numeric slots (drawn per command, rotated likewise), an
unknown value for one choice slot, and one required slot left out.
:func:`materialise` writes the inputs a case needs into its own sandbox and returns the
argv and the output paths; :mod:`tests.hardening.hostile_run` runs it.
"""

from __future__ import annotations

import argparse
import os
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

#: (a) … (g) of the brief: kinds of hostile path
PATH_KINDS = ("missing", "wrong_type", "fifo", "empty", "random_bytes", "odd_name",
              "symlink_loop")
#: hostile numeric values ("٣" is ARABIC-INDIC DIGIT THREE, which ``int()`` accepts)
NUMBER_VALUES = ("nan", "-1", "1e999", "", "\u0663")
#: numeric values tried per command (drawn from NUMBER_VALUES; every value is tried
#: on many commands, each command on two of them)
NUMBERS_PER_COMMAND = 2
UNKNOWN_CHOICE = "no-such-choice"
#: a file name with a lone surrogate (the byte 0xFF as Python decodes it: not valid
#: UTF-8) and characters that break naive quoting, formatting and terminals (tab,
#: glob and format characters, quotes, non-ASCII, a right-to-left override)
ODD_NAME = "bad\udcff name\t[*]?%s{0}$HOME;'\"\u00df\u6f22\u202eexe"
#: flags that keep a base call short, each with the slots it would leave unread (a
#: case on such a slot goes without the flag)
CHEAP_FLAGS = {"--no-bertscore": "bertscore", "--no-figures": "", "--no-progress": ""}

#: what a command writes to: its outputs, and the response cache (``--cache``)
_OUTPUT_DESTS = frozenset({"out", "dst", "json", "extract_to", "cache"})
_PATH_DESTS = frozenset({
    "data", "src", "source", "data_source", "questions", "images", "annotations", "export",
    "answers", "prompts", "runs", "run", "predictions", "manifest", "canonical", "external",
    "cache", "regions", "types", "strata", "base_urls_file", "generated_descriptions"})
_FILE_WORDS = re.compile(r"FILE|\.jsonl|\.json|\.csv|\.yaml|\.sqlite|CSV|MANIFEST")
_DIR_WORDS = re.compile(r"DIR|DATA|OUT|RUN|SOURCE|PATH")
_FILE_DESTS = frozenset({"questions", "annotations", "export", "answers", "prompts",
                         "cache", "json", "manifest", "regions", "types", "strata",
                         "base_urls_file", "generated_descriptions", "external"})
#: numeric options that take a list and convert it later (``--ks 2-5``)
_NUMBER_LISTS = frozenset({"ks", "shot_list"})
#: numbers of the base call that the small demo data can meet (K = 8 by default needs
#: eight classes per domain; the demo has five) and that keep it short
_GOOD_NUMBERS = {"k": "3", "ks": "2", "shot_list": "1", "limit": "1"}


@dataclass(frozen=True)
class Slot:
    """One argparse action of a command: ``flag`` (``None`` for a positional), ``dest``,
    ``role`` (path, number, choice, flag, text), ``wants`` (``"dir"`` / ``"file"`` for a
    path), ``output`` (a path the command writes to), ``required``, ``many`` (takes
    one or more values) and the first of its ``choices``."""

    flag: str | None
    dest: str
    role: str
    wants: str | None = None
    output: bool = False
    required: bool = False
    many: bool = False
    first_choice: str | None = None

    @property
    def name(self) -> str:
        """How the slot is named in messages: its flag, or the positional's dest."""
        return self.flag or self.dest


def leaf_commands(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()
                  ) -> list[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (command words, parser) of ``parser`` that has no sub-command, depth first."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(words, parser)] if words else []
    out: list[tuple[tuple[str, ...], argparse.ArgumentParser]] = []
    for action in subs:
        for name, sub in action.choices.items():
            out += leaf_commands(sub, (*words, name))
    return out


def _numeric(action: argparse.Action) -> bool:
    if action.dest in _NUMBER_LISTS:
        return True
    convert = action.type
    if convert is None or convert in (str, Path) or not callable(convert):
        return False
    for text in ("2", "0.5"):
        try:
            value = convert(text)
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            continue
        return isinstance(value, int | float) and not isinstance(value, bool)
    return False


def _path_role(action: argparse.Action) -> tuple[bool, str | None]:
    """Whether ``action`` takes a path, and which kind (``"dir"``, ``"file"``, None)."""
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    is_path = (action.type is Path or action.dest in _PATH_DESTS
               or action.dest in _OUTPUT_DESTS
               or bool(_FILE_WORDS.search(metavar) or _DIR_WORDS.search(metavar)))
    if not is_path or _numeric(action):
        return False, None
    if action.dest in _FILE_DESTS or _FILE_WORDS.search(metavar):
        return True, "file"
    if action.dest in _OUTPUT_DESTS or _DIR_WORDS.search(metavar) or action.dest in {
            "data", "src", "source", "data_source", "images", "runs", "run", "predictions",
            "canonical"}:
        return True, "dir"
    return True, None


def slots(parser: argparse.ArgumentParser) -> list[Slot]:
    """The :class:`Slot` of every action of a leaf command's ``parser`` (help and version
    left out)."""
    out: list[Slot] = []
    for a in parser._actions:
        if isinstance(a, argparse._HelpAction | argparse._VersionAction):
            continue
        flag = next((s for s in a.option_strings if s.startswith("--")),
                    a.option_strings[0] if a.option_strings else None)
        required = bool(a.required) or (flag is None and a.nargs not in ("?", "*"))
        many = a.nargs in ("+", "*")
        if a.nargs == 0:
            out.append(Slot(flag, a.dest, "flag"))
            continue
        is_path, wants = _path_role(a)
        if a.choices and not is_path:
            out.append(Slot(flag, a.dest, "choice", required=required, many=many,
                            first_choice=str(next(iter(a.choices)))))
        elif is_path:
            out.append(Slot(flag, a.dest, "path", wants, a.dest in _OUTPUT_DESTS,
                            required, many))
        elif _numeric(a):
            out.append(Slot(flag, a.dest, "number", required=required, many=many))
        else:
            out.append(Slot(flag, a.dest, "text", required=required, many=many))
    return out


@dataclass(frozen=True)
class Case:
    """One call: ``kind`` (``base``, ``path:<kind>``, ``number:<value>``, ``choice``,
    ``missing``) on ``slot`` (``None`` for ``base``)."""

    words: tuple[str, ...]
    kind: str
    slot: Slot | None

    def label(self) -> str:
        """``"run muse --questions path:fifo"``."""
        where = f" {self.slot.name}" if self.slot else ""
        return f"{' '.join(self.words)}{where} {self.kind}"


def _rotate(items: Sequence[Slot], n: int, rng: random.Random) -> list[Slot]:
    """``n`` slots of ``items`` taken in turn from a random start (all, if n >= len)."""
    if not items:
        return []
    start = rng.randrange(len(items))
    return [items[(start + i) % len(items)] for i in range(n)]


def plan_cases(words: tuple[str, ...], parser: argparse.ArgumentParser, seed: int
               ) -> list[Case]:
    """The cases of one command (module docstring); the same ``seed`` gives the same
    cases."""
    rng = random.Random(f"{seed}:{' '.join(words)}")
    all_slots = slots(parser)
    paths = [s for s in all_slots if s.role == "path"]
    numbers = [s for s in all_slots if s.role == "number"]
    choices = [s for s in all_slots if s.role == "choice"]
    required = [s for s in all_slots if s.required]
    cases = [Case(words, "base", None)]
    rotated = _rotate(paths, len(PATH_KINDS), rng)
    inputs = [s for s in paths if not s.output]
    for kind, slot in zip(PATH_KINDS, rotated, strict=False):
        if kind == "missing" and slot.output and inputs:  # a missing --out is the base
            slot = rng.choice(inputs)  # call: a missing input says more
        cases.append(Case(words, f"path:{kind}", slot))
    values = rng.sample(NUMBER_VALUES, NUMBERS_PER_COMMAND)
    cases += [Case(words, f"number:{v}", s)
              for v, s in zip(values, _rotate(numbers, len(values), rng), strict=False)]
    cases += [Case(words, "choice", s) for s in rng.sample(choices, min(1, len(choices)))]
    cases += [Case(words, "missing", s) for s in rng.sample(required, min(1, len(required)))]
    return cases


# --- inputs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Goods:
    """Plausible inputs for the base argv: the demo data folders, a MUSE question file,
    small run folders and an IIIF manifest made once per test module."""

    ancient_bench: Path
    hcsu: Path
    muse: Path
    questions: Path
    hcsu_run: Path
    muse_run: Path
    ab_run: Path
    predictions: Path
    manifest: Path


def family(words: Sequence[str], all_slots: Sequence[Slot]) -> str:
    """Which benchmark's data a command reads: named in its words (``run muse``,
    ``paper ab-table3``), by the first value of a required choice (``export hf
    BENCHMARK``), or Ancient-Bench for its exports (``export predictions`` / ``tei``);
    HCSU otherwise."""
    text = " ".join([*words, *(s.first_choice or "" for s in all_slots
                               if s.role == "choice" and s.required)])
    for fam in ("ancient-bench", "ab-", "predictions", "tei", "hcsu", "muse"):
        if fam in text:
            return fam if fam in ("hcsu", "muse", "ancient-bench") else "ancient-bench"
    return "hcsu"


def good_value(fam: str, words: Sequence[str], slot: Slot, goods: Goods, out: Path
               ) -> str | None:
    """A plausible value of ``slot`` for the base argv of a command reading ``fam``
    data, or ``None`` to leave it out."""
    d = slot.dest
    if slot.output:  # every output but the cache (the run folder's, by default)
        if d == "cache":
            return None
        return str(out / f"{d}.json" if slot.wants == "file" else out / d)
    if slot.role == "choice":  # the defaults, unless one must be named
        return slot.first_choice if slot.required else None
    if slot.role == "number":
        return _GOOD_NUMBERS.get(d)
    if d == "model":
        if fam == "ancient-bench":
            return "openai:x"  # refused at once by the probe of a closed port (no network)
        described = any(w in ("hcsu-description", "shot-sweep", "write-descriptions")
                        for w in words)
        return "baseline:nearest-description" if described else "baseline:random"
    if d == "base_url" and fam == "ancient-bench":
        return "http://127.0.0.1:9/v1"
    if d == "description_model":
        return "baseline:nearest-description"
    if (slot.flag is None and not slot.required) or (d == "images" and fam != "muse"):
        return None  # SOURCE beside --data: one of the two; --images is MUSE's
    data = {"ancient-bench": goods.ancient_bench, "hcsu": goods.hcsu, "muse": goods.muse}
    runs = {"ancient-bench": goods.ab_run, "hcsu": goods.hcsu_run, "muse": goods.muse_run}
    table: dict[str, Path] = {
        "data": data[fam], "src": data[fam], "source": data[fam], "data_source": data[fam],
        "questions": goods.questions, "images": goods.muse / "images",
        "annotations": goods.muse / "annotations.json", "export": goods.muse /
        "annotations.json", "answers": goods.muse / "human_answers_example.csv",
        "runs": runs[fam], "run": runs[fam], "predictions": goods.predictions,
        "manifest": goods.manifest}
    if d in table:
        return str(table[d])
    return "x" if slot.required else None


def _write_hostile(kind: str, slot: Slot, where: Path, rng: random.Random) -> Path:
    """Make the hostile path ``kind`` for ``slot`` under ``where`` (created)."""
    where.mkdir(parents=True, exist_ok=True)
    ext = ".jsonl" if slot.dest in ("questions",) else ".json" if slot.wants == "file" \
        else ".txt"
    if kind == "missing":
        return where / "no" / f"such{ext}"
    if kind == "wrong_type":
        if slot.wants == "file":
            p = where / f"a_folder{ext}"
            p.mkdir()
        else:
            p = where / "a_file"
            p.write_text("not a folder\n", encoding="utf-8")
        return p
    if kind == "fifo":
        p = where / f"fifo{ext}"
        os.mkfifo(p)
        return p
    if kind == "empty":
        p = where / f"empty{ext}"
        p.write_bytes(b"")
        return p
    if kind == "random_bytes":
        p = where / f"random{ext}"
        p.write_bytes(b"\xff\xfe\x80{\n" + rng.randbytes(4096) + b"\n\xc3(\xed\xa0\x80")
        return p
    if kind == "odd_name":
        p = where / (ODD_NAME + ext)
        if slot.wants == "dir" and not slot.output:
            p.mkdir()
            (p / ("inner" + ODD_NAME)).write_bytes(rng.randbytes(64))
        elif not slot.output:
            p.write_bytes(b'{"id": "\xff"}\n' + rng.randbytes(64))
        return p
    if kind == "symlink_loop":
        a, b = where / f"loop_a{ext}", where / f"loop_b{ext}"
        a.symlink_to(b)
        b.symlink_to(a)
        return a
    raise ValueError(f"unknown path kind {kind!r}")


@dataclass(frozen=True)
class Call:
    """A case made concrete: ``argv`` after ``heritage_eval.cli.main``, the ``outputs``
    it may write to, and its sandbox ``root`` (``cwd``, ``home``, ``cache``, ``tmp``)."""

    case: Case
    argv: list[str]
    outputs: list[Path]
    root: Path


def materialise(case: Case, all_slots: Sequence[Slot], goods: Goods, root: Path,
                seed: int) -> Call:
    """The argv of ``case`` in the sandbox ``root`` (its hostile input written there)."""
    rng = random.Random(f"{seed}:{case.label()}")
    fam = family(case.words, all_slots)
    for sub in ("cwd", "home", "cache", "tmp", "in", "out"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    out = root / "out"
    argv: list[str] = list(case.words)
    outputs: list[Path] = []
    positionals: list[str] = []
    for s in all_slots:
        if s.role == "flag":
            continue
        value: str | None
        if case.slot is not None and s == case.slot:
            if case.kind == "missing":
                continue
            if case.kind.startswith("path:"):
                value = str(_write_hostile(case.kind[5:], s, root / "in", rng))
            elif case.kind.startswith("number:"):
                value = case.kind[7:]
            else:  # choice
                value = UNKNOWN_CHOICE
        else:
            value = good_value(fam, case.words, s, goods, out)
        if value is None:
            continue
        if s.output:
            outputs.append(Path(value))
        if s.flag is None:
            positionals.append(value)
        elif s.many:
            argv += [s.flag, value]
        else:
            argv.append(f"{s.flag}={value}")
    target = case.slot.dest if case.slot else ""
    argv += [s.flag for s in all_slots if s.role == "flag" and s.flag in CHEAP_FLAGS
             and not (CHEAP_FLAGS[s.flag] and target.startswith(CHEAP_FLAGS[s.flag]))]
    return Call(case, argv + positionals, outputs, root)
