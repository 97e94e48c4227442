"""The fixed settings of the HCSU tasks that ``--help`` prints or a Benchmark class declares:
task names, paper defaults (K, shots, word limit, temperature, sweep grids), token
budgets and the ``--limit`` wording.

Plain values only, no imports: the option models (:mod:`.option_models`) and the
Benchmark classes (:mod:`.benchmark`, :mod:`.benchmark_description`) read them here, so
building the ``run hcsu-*`` parsers loads no task, data or scoring code. The task modules
re-export them under their old names (``discrimination.DEFAULT_K``,
``pipeline.PAPER_TEMPERATURE``, ``runio.LIMIT_HELP`` …).
"""

from __future__ import annotations

#: Benchmark / task names (``run NAME``; ``supported_tasks`` of a baseline).
DISCRIMINATION = "hcsu-discrimination"
DESCRIPTION = "hcsu-description"

#: K used in the paper (§3.2): candidates per discrimination question.
DEFAULT_K = 8
#: Shots used in the paper (§3.2) and the word limit of a description (§4.1).
DEFAULT_SHOTS = 2
MAX_WORDS = 50
#: Calibration grids of the paper (§3.2): K of the K sweep, N of the shot sweep.
PAPER_KS = tuple(range(2, 11))
PAPER_SHOTS = (1, 2, 3, 4, 8)

#: Decoding temperature of the paper (§4.2).
PAPER_TEMPERATURE = 0.1
#: Default ``--max-tokens`` of the K-way task (was 64). The answer itself is one letter
#: (a few tokens with ``Answer: C``), but a reasoning model spends its thinking on the same
#: budget on most OpenAI-compatible servers (vLLM counts ``reasoning_content`` against
#: ``max_tokens``): at 64 such models were cut off before giving any letter (finish reason
#: ``length``, unparsed, counted wrong). 4,096 leaves room for a typical chain of thought;
#: a model that answers at once stops after a few tokens, so the limit costs nothing there.
#: The paper gives no token limit (§4, only temperature 0.1).
DISCRIMINATION_MAX_TOKENS = 4096
#: Default ``--max-tokens`` of the description task (room for :data:`MAX_WORDS` words).
DESCRIPTION_MAX_TOKENS = 256

#: ``--limit`` wording of the HCSU commands (see :func:`~.sampling.limit_per_domain`).
LIMIT_HELP = ("at most N target images per domain (Bei, Tie), taken round-robin over its "
              "classes, after the --per-class sampling; for a quick try")
