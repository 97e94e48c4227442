"""Declarations of ``heritage-eval paper …`` commands (light: imports nothing heavy).

MUSE: ``muse-table2`` (Table 2), ``muse-fig5`` (task radar with "Best Available"),
``muse-fig8`` (distractor types of wrong answers), ``muse-fig9`` (scores and ranks over
the affective tasks), ``muse-fig11`` (human vs models), ``muse-fig12`` (capability, level and
granularity radars). Each target is a :class:`~heritage_eval.benchmarks.registry.Command`
imported only when its command is chosen.
"""

from __future__ import annotations

from heritage_eval.benchmarks.registry import LazyCommand, register_group_command

GROUP = "paper"
GROUP_HELP = "the papers' tables and figures from run folders, one command each"
_PKG = "heritage_eval.paper"

#: command name -> (help line, "module:ATTR" under heritage_eval.paper)
COMMANDS: dict[str, tuple[str, str]] = {
    "muse-table2": ("MUSE Table 2: 12 tasks under their capabilities, Average",
                    "muse_table2:MUSE_TABLE2"),
    "muse-fig5": ("MUSE Fig. 5: per-task radar of chosen models plus 'Best Available'",
                  "muse_radar:MUSE_FIG5"),
    "muse-fig8": ("MUSE Fig. 8: distractor types chosen in wrong answers (tasks 5, 6, 11)",
                  "muse_fig8:MUSE_FIG8"),
    "muse-fig9": ("MUSE Fig. 9: scores and ranking shifts across the four affective tasks",
                  "muse_fig9:MUSE_FIG9"),
    "muse-fig11": ("MUSE Fig. 11: human vs models per task on the questions both answered",
                   "muse_fig11:MUSE_FIG11"),
    "muse-fig12": ("MUSE Fig. 12: radars per capability, cognitive level and granularity",
                   "muse_radar:MUSE_FIG12"),
}

for _name, (_help, _target) in COMMANDS.items():
    register_group_command(GROUP, GROUP_HELP, LazyCommand(_name, _help, f"{_PKG}.{_target}"))
