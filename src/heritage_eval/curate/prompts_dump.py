"""``heritage-eval prompts dump --out FILE``: the built-in prompts of every benchmark, in
the form their ``--prompts FILE`` option reads back.

The file is one JSON document with a section per benchmark::

    {"ancient-bench": {"base": ..., "oracle_bone_artifacts": ..., ...},
     "hcsu": {"system": ..., "discrimination_intro": ..., ...},
     "muse": {"box_note": ..., "drawn_note": ...}}

- ``ancient-bench``: exactly the object ``run ancient-bench --prompts`` reads
  (:func:`heritage_eval.benchmarks.ancient_bench.prompts.load_prompts`): ``base`` and one
  addition per medium (release folder names);
- ``hcsu``: the templates of :data:`heritage_eval.benchmarks.hcsu.prompts.DEFAULTS`
  (``{k}``, ``{label}``… are filled in per question), read by ``run hcsu-discrimination``,
  ``run hcsu-description`` and the HCSU studies;
- ``muse``: the shared templates of :mod:`heritage_eval.benchmarks.muse.prompts`, read by
  ``muse generate --prompts`` (MUSE prompts are written into the question file when it is
  generated; ``run muse`` sends them as they are there).

Every ``--prompts`` reads its own section of this document, or a flat object of its
section alone (``--benchmark NAME`` writes that). Texts are taken from the template
registries when the command runs, never copied here, and JSON keeps every character, so
an unchanged file gives exactly the built-in prompts back.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from heritage_eval.benchmarks.registry import Command

BENCHMARKS = ("ancient-bench", "hcsu", "muse")


def sections() -> dict[str, dict[str, str]]:
    """Benchmark name -> its built-in templates (name -> text), in :data:`BENCHMARKS`
    order."""
    from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet
    from heritage_eval.benchmarks.hcsu.prompts import TEMPLATES as HCSU
    from heritage_eval.benchmarks.muse.prompts import TEMPLATES as MUSE

    ab = PromptSet()
    return {"ancient-bench": {"base": ab.base, **ab.media}, "hcsu": dict(HCSU.defaults),
            "muse": dict(MUSE.defaults)}


def dump_text(benchmark: str | None = None) -> str:
    """The file's text: every section, or the flat object of ``benchmark`` alone; JSON,
    2-space indented, UTF-8 characters as they are, one newline at the end."""
    data: object = sections() if benchmark is None else sections()[benchmark]
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, metavar="FILE",
                   help="JSON file to write ('-' for standard output); edit it and pass it "
                        "to a run's --prompts")
    p.add_argument("--benchmark", choices=BENCHMARKS, default=None,
                   help="write only this benchmark's prompts, as a flat object (default: "
                        "one document with a section per benchmark; every --prompts reads "
                        "its own section)")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an existing FILE (without it, an existing file, perhaps "
                        "holding edited prompts, is refused)")


def _handler(args: argparse.Namespace) -> int:
    from heritage_eval.core.store import atomic_write_text

    text = dump_text(args.benchmark)
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    if out.is_dir():
        print(f"error: --out {out} is a folder; give a file name", file=sys.stderr)
        return 2
    if out.exists() and not args.overwrite:
        print(f"error: --out {out} exists; nothing was written. Use --overwrite to replace "
              "it", file=sys.stderr)
        return 2
    try:
        atomic_write_text(out, text)
    except OSError as exc:
        print(f"error: cannot write {out}: {exc}", file=sys.stderr)
        return 2
    names = [args.benchmark] if args.benchmark else list(BENCHMARKS)
    print(f"wrote the built-in prompts of {', '.join(names)} to {out}")
    print("use: heritage-eval run ancient-bench ... --prompts FILE; run hcsu-discrimination "
          "/ hcsu-description ... --prompts FILE; muse generate ... --prompts FILE",
          file=sys.stderr)
    return 0


DUMP = Command(
    name="dump", help="write the built-in prompts of every benchmark to a file that "
                      "--prompts reads",
    add_args=_add_args, handler=_handler,
    description=(
        "Write the built-in prompt templates of Ancient-Bench, HCSU and MUSE to one JSON\n"
        "file with a section per benchmark (or one benchmark's flat object with\n"
        "--benchmark). Edit the texts and pass the file back with --prompts: 'run\n"
        "ancient-bench' reads the 'ancient-bench' section (base rules and one addition per\n"
        "medium), 'run hcsu-discrimination' / 'run hcsu-description' and the HCSU studies\n"
        "the 'hcsu' section ({placeholders} are filled per question), 'muse generate' the\n"
        "'muse' section (MUSE prompts are written into the question file). Entries left\n"
        "out keep their built-in text; an unchanged file gives the built-in prompts.\n"
        "Exit status 2 when FILE exists (without --overwrite) or cannot be written."))
