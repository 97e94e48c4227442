"""MUSE declarations for the command registry (light: imports nothing heavy).

``run muse`` (:class:`.benchmark.Muse` through the platform engine), ``muse generate``
(:mod:`.cli_generate`) and ``muse analyze`` (:mod:`.cli_analyze`) are declared with
their help lines and imported only when chosen, so ``heritage-eval --help``, ``--version``
and ``list`` never import OpenCV, matplotlib, scikit-learn or the embedder. The offline
baseline ``baseline:jigsaw-edges`` (:mod:`.baselines`, OpenCV) is registered here with a
factory that imports its module on first use.
"""

from __future__ import annotations

from heritage_eval.benchmarks.registry import (
    LazyCommand,
    register_benchmark,
    register_group_command,
)
from heritage_eval.models.base import BackendOptions, ModelBackend, register_backend

GROUP = "muse"
GROUP_HELP = "MUSE benchmark: generate questions, analyze runs"
PKG = "heritage_eval.benchmarks.muse"
JIGSAW_EDGES = "baseline:jigsaw-edges"


def _jigsaw_edges(rest: str, opts: BackendOptions) -> ModelBackend:
    from heritage_eval.core.extras import require_extra

    require_extra("muse", ("cv2",), f"--model {JIGSAW_EDGES}")
    from heritage_eval.benchmarks.muse.baselines import JigsawEdgesBaseline

    return JigsawEdgesBaseline(opts)


register_benchmark("muse", "run a model on a MUSE question file and score all 12 tasks",
                   f"{PKG}.benchmark:Muse")
register_group_command(GROUP, GROUP_HELP, LazyCommand(
    "generate", "generate MUSE questions (12 tasks) from Label Studio annotations",
    f"{PKG}.cli_generate:COMMAND"))
register_group_command(GROUP, GROUP_HELP, LazyCommand(
    "analyze", "tables, correlations and figures over several MUSE runs",
    f"{PKG}.cli_analyze:COMMAND"))
register_group_command(GROUP, GROUP_HELP, LazyCommand(
    "assemble", "sample N questions per task from a generated pool, balanced and seeded",
    f"{PKG}.cli_assemble:COMMAND"))
register_group_command(GROUP, GROUP_HELP, LazyCommand("import-human", "import human answers (CSV) to a MUSE question file as a scored run folder", f"{PKG}.human_import:COMMAND"))  # noqa: E501
register_backend(JIGSAW_EDGES, _jigsaw_edges,
                 "MUSE jigsaw solver: the piece whose border best continues the image "
                 "(attempts only jigsaw_puzzle; run muse skips the other tasks)")
