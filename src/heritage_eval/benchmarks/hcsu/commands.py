"""Declarations of every HCSU command and baseline, imported by
:func:`heritage_eval.benchmarks.registry.load_all` (and so by ``--help``, ``list`` and
``create_backend``). Light on purpose: only the registry and the backend table are
imported here; the task code (scikit-image, OpenCV, pandas, torch …) is imported when a
command runs or a baseline is created.

- ``run hcsu-discrimination`` / ``run hcsu-description``: the benchmarks
  (:mod:`.benchmark`, :mod:`.benchmark_description`), run by the platform's generic
  ``run NAME`` command from their typed options (:mod:`.option_models`), with the HCSU
  messages from their hooks (:mod:`.bench_base`);
- ``hcsu canonicalize | k-sweep | shot-sweep | ablation | robustness |
  write-descriptions | report`` (:mod:`.cli_tools`, :mod:`.cli_studies`);
- backends ``baseline:image-similarity`` and ``baseline:nearest-description``
  (:mod:`.baselines`), registered with factories that import their module on use.
"""

from __future__ import annotations

from typing import Any

from heritage_eval.benchmarks.registry import (
    LazyCommand,
    register_benchmark,
    register_group_command,
)
from heritage_eval.core.backends import BackendOptions, ModelBackend, register_backend

_PKG = "heritage_eval.benchmarks.hcsu"
DISCRIMINATION_HELP = "HCSU K-way calligraphy style discrimination (Table 2)"
DESCRIPTION_HELP = "HCSU N-shot calligraphy style description (Table 3)"
GROUP = "hcsu"
GROUP_HELP = "HCSU tools: canonicalize images, calibration sweeps, ablations, robustness"
#: ``hcsu`` sub-command -> (help line, ``module:Command``)
TOOLS: dict[str, tuple[str, str]] = {
    "canonicalize": ("canonicalize character images (paper §3.3) on all cores",
                     "canonical_command:CANONICALIZE"),
    "k-sweep": ("discrimination accuracy for K = 2..10 against chance 1/K",
                "cli_studies:K_SWEEP"),
    "shot-sweep": ("description scores for 1, 2, 3, 4, 8 shots", "cli_studies:SHOT_SWEEP"),
    "ablation": ("discrimination with random / generated / expert descriptions (Table 5)",
                 "cli_studies:ABLATION"),
    "robustness": ("both tasks on Wild (raw), Wild-Resize and canonical images (Table 4)",
                   "cli_studies:ROBUSTNESS"),
    "write-descriptions": ("ask a text model for one style description per class (for "
                           "--descriptions generated)", "cli_tools:WRITE_DESCRIPTIONS"),
    "report": ("merge run folders of one command into one table (e.g. several models)",
               "cli_tools:REPORT"),
}
BASELINES = {
    "baseline:image-similarity": (
        "ImageSimilarityBaseline",
        "HCSU discrimination: candidate whose reference image is nearest under classic "
        "style features (HOG orientations, stroke width, ink tone)"),
    "baseline:nearest-description": (
        "NearestDescriptionBaseline",
        "HCSU description: the expert description of the nearest few-shot image"),
}


def _baseline_factory(class_name: str) -> Any:
    def make(rest: str, opts: BackendOptions) -> ModelBackend:
        from heritage_eval.core.extras import require_extra

        require_extra("hcsu", ("cv2", "skimage"), f"the HCSU baseline {class_name}")
        from heritage_eval.benchmarks.hcsu import baselines

        backend: ModelBackend = getattr(baselines, class_name)()
        return backend
    return make


register_benchmark("hcsu-discrimination", DISCRIMINATION_HELP,
                   f"{_PKG}.benchmark:HcsuDiscrimination")
register_benchmark("hcsu-description", DESCRIPTION_HELP,
                   f"{_PKG}.benchmark_description:HcsuDescription")
for _name, (_help, _target) in TOOLS.items():
    register_group_command(GROUP, GROUP_HELP, LazyCommand(_name, _help, f"{_PKG}.{_target}"))
for _spec, (_cls, _help) in BASELINES.items():
    register_backend(_spec, _baseline_factory(_cls), _help)
