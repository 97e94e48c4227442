"""Declarations of ``heritage-eval paper …`` commands (light: imports nothing heavy).

Ancient-Bench: ``ab-table3`` (Table 3), ``ab-fig4`` (Fig. 4-style error breakdown).
HCSU: ``hcsu-table2`` … ``hcsu-table5``, ``hcsu-confusion`` (per-class accuracy and
confusion matrix), ``hcsu-fig4a`` / ``hcsu-fig4b`` / ``hcsu-fig4c`` (calibration).
Each target is a :class:`~heritage_eval.benchmarks.registry.Command` imported only when
its command is chosen.
"""

from __future__ import annotations

from heritage_eval.benchmarks.registry import LazyCommand, register_group_command

GROUP = "paper"
GROUP_HELP = "the papers' tables and figures from run folders, one command each"
_PKG = "heritage_eval.paper"

#: command name -> (help line, "module:ATTR" under heritage_eval.paper)
COMMANDS: dict[str, tuple[str, str]] = {
    "ab-table3": ("Ancient-Bench Table 3: NED / F1 per medium, general VLMs vs OCR models",
                  "ab_table3:AB_TABLE3"),
    "ab-fig4": ("Ancient-Bench Fig. 4-style errors on one medium: insertions, deletions, "
                "substitutions, hallucination rate", "ab_fig4:AB_FIG4"),
    "hcsu-table2": ("HCSU Table 2: 8-way discrimination per domain and Avg. Acc",
                    "hcsu_tables:HCSU_TABLE2"),
    "hcsu-table3": ("HCSU Table 3: description BERTScore, Term. and Rich. (Δ to expert)",
                    "hcsu_table3:HCSU_TABLE3"),
    "hcsu-table4": ("HCSU Table 4: robustness, Wild / Wild-Resize / Origin (pooled)",
                    "hcsu_tables:HCSU_TABLE4"),
    "hcsu-table5": ("HCSU Table 5: description ablation (random / generated / expert)",
                    "hcsu_tables:HCSU_TABLE5"),
    "hcsu-confusion": ("HCSU per-class accuracy and confusion matrix (table and heatmap)",
                       "hcsu_confusion:HCSU_CONFUSION"),
    "hcsu-fig4a": ("HCSU Fig. 4a: accuracy vs images per class (--per-class runs)",
                   "hcsu_fig4:HCSU_FIG4A"),
    "hcsu-fig4b": ("HCSU Fig. 4b: accuracy per K with chance 1/K (a k-sweep run)",
                   "hcsu_fig4:HCSU_FIG4B"),
    "hcsu-fig4c": ("HCSU Fig. 4c: description scores per shot count (a shot-sweep run)",
                   "hcsu_fig4:HCSU_FIG4C"),
}

for _name, (_help, _target) in COMMANDS.items():
    register_group_command(GROUP, GROUP_HELP, LazyCommand(_name, _help, f"{_PKG}.{_target}"))
