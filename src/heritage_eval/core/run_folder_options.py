"""The words of the run-folder options ``--resume`` and ``--overwrite``: their help
texts, declared once for the typed :class:`~heritage_eval.core.config.OutputConfig` and
the argparse-built commands that write a run folder (``score NAME``, studies:
:func:`heritage_eval.cliargs.common.add_run_folder_args`).

Imports nothing, so that such a command's parser is built without pydantic (issue 23:
start-up within 0.3 s of ``python -c pass``).
"""

from __future__ import annotations

#: Help of ``--resume``: continue in a run folder that holds a run of other settings.
RESUME_HELP = ("--out holds a run of other settings: continue in it anyway (answers cached "
               "for identical requests are re-used, the results replaced). Not needed to "
               "finish an interrupted run: the same command again resumes it")
#: Help of ``--overwrite``: delete the other run's files first.
OVERWRITE_HELP = "--out holds another run: delete that run's files first"
