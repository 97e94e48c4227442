"""Run plumbing shared by the HCSU commands, from the typed run configuration
(:class:`~heritage_eval.core.config.RunConfig` with the options of
:mod:`.option_models`): loading ``--data`` (release zips, the Wild archive), the model,
judge and BERTScore engines, provenance and the redacted command line."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.archive import holds_wild_archive, wild_root
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.option_models import DataOptions, Judged
from heritage_eval.benchmarks.hcsu.options import bertscore_config, refuse_model
from heritage_eval.benchmarks.hcsu.pipeline import Engine
from heritage_eval.benchmarks.hcsu.prompts import prompt_hash
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.schema import DOMAIN_FOLDERS, HcsuDataset
from heritage_eval.benchmarks.hcsu.task_defaults import LIMIT_HELP as LIMIT_HELP
from heritage_eval.core.backends import (
    BackendOptions,
    ModelBackend,
    create_backend,
)
from heritage_eval.core.config import ModelConfig, RunConfig
from heritage_eval.core.provenance import provenance
from heritage_eval.core.run_parts import backend_from_config, cache_from_config, model_provenance
from heritage_eval.core.rundir import LOCK_FILE, Mode, RunSession, check_folder
from heritage_eval.core.store import RunFolder
from heritage_eval.core.types import GenerationSettings
from heritage_eval.metrics.bertscore import BertScorer, BertScoreUnavailable

SECRET_OPTIONS = ("--zip-password",)


#: ``(benchmark or command name, configuration, partial, mode)`` of the run that will
#: own ``--out`` (see :func:`claim_for_extraction`).
Claim = tuple[str, dict[str, Any], bool, Mode]


def _needs_extraction(root: Path) -> bool:
    return any(not (root / d).is_dir() and (root / f"{d}.zip").is_file()
               for d in DOMAIN_FOLDERS.values())


def claim_for_extraction(out: Path, extract: Path, claim: Claim) -> None:
    """Before release zips are extracted into ``extract`` inside ``out`` (the default
    ``OUT/extracted``), check that the run may use ``out`` (raises
    :class:`~heritage_eval.core.rundir.RunFolderConflict` before anything is written)
    and, for a new folder, write its ``run.json`` (status ``running``), so that the
    extracted files are part of the run and the run folder check does not later refuse
    the folder as "not empty and holding no run"."""
    name, config, partial, mode = claim
    out, extract = out.resolve(), extract.resolve()
    if out != extract and out not in extract.parents:
        return
    check_folder(out, name, config, partial, mode)
    if out.exists() and any(p.name != LOCK_FILE for p in out.iterdir()):
        return
    out.mkdir(parents=True, exist_ok=True)
    RunSession(out, name, config, partial, resumed=False).write_state("running")


def load_data(options: DataOptions, out: Path, data: Path | None = None,
              claim: Claim | None = None) -> HcsuDataset:
    """Load ``options.data`` (or ``data``) with the archive options (``zip_password`` /
    ``zip_password_env``, ``extract_to``, default ``out/extracted``); with ``claim``, a
    zip to extract under ``out`` first claims the run folder
    (:func:`claim_for_extraction`). Loader problems are printed as warnings (the first
    20). Raises :class:`~.loader.HcsuDataError`, :class:`~.archive.ArchiveError`,
    :class:`~heritage_eval.core.rundir.RunFolderConflict`."""
    password = zip_password(options)
    extract = Path(options.extract_to or Path(out) / "extracted")
    root = Path(data or options.data)
    if claim is not None and (_needs_extraction(root) or holds_wild_archive(root)):
        claim_for_extraction(Path(out), extract, claim)
    root = wild_root(root, extract, password)  # wild.zip.001 …: extracted (archive.py)
    ds = load_hcsu(root, extract_to=extract, password=password)
    for problem in ds.problems[:20]:
        print(f"warning: {problem}", file=sys.stderr)
    if len(ds.problems) > 20:
        print(f"warning: … {len(ds.problems) - 20} more problems (see summary.json)",
              file=sys.stderr)
    return ds


def zip_password(options: DataOptions) -> str | None:
    """The release-zip password: ``--zip-password``, else the variable named by
    ``--zip-password-env``, else ``None``."""
    return options.zip_password or os.environ.get(options.zip_password_env) or None


def model_for(model: ModelConfig, task: str) -> ModelBackend:
    """The backend named by ``model.model``, refused (:class:`HcsuConfigError`, exit 2)
    when it cannot do ``task`` (see :func:`~.options.refuse_model`). Raises
    ``ModelSpecError`` for an unknown spec."""
    backend = backend_from_config(model)
    refusal = refuse_model(backend, task)
    if refusal:
        raise HcsuConfigError(refusal)
    return backend


def engine_for(config: RunConfig, run: RunFolder, backend: ModelBackend | None = None,
               ) -> Engine:
    """The model engine (``backend``, else the one named by ``config.model``) with the
    run's decoding settings and concurrency; opens the response cache (``--cache`` or the
    run folder's; none with ``--no-cache``)."""
    return Engine(backend or backend_from_config(config.model),
                  config.generation.settings(), cache_from_config(config.output, run),
                  config.model.concurrency)


def judge_backend(options: Judged, model: ModelConfig) -> ModelBackend | None:
    """The judge backend, or ``None`` without ``--judge``: at ``--judge-base-url``
    (default: the first ``--base-url``) with ``--judge-api-key-env`` (default:
    ``--api-key-env``) and the run's timeout and retries. A judge that cannot read the
    rubric (OCR engine, offline baseline) is refused with :class:`HcsuConfigError`;
    ``ModelSpecError`` for an unknown spec."""
    if not options.judge:
        return None
    first_url = model.base_url[0] if model.base_url else None
    opts = BackendOptions(base_url=options.judge_base_url or first_url,
                          api_key_env=options.judge_api_key_env or model.api_key_env,
                          timeout_s=model.timeout, max_retries=model.retries)
    backend = create_backend(options.judge, opts)
    if not backend.reads_prompt or backend.reads_payload:
        raise HcsuConfigError(f"--judge {options.judge!r} cannot read the judging rubric; "
                              "use a chat model such as 'openai:deepseek-chat'")
    return backend


#: The judge's decoding settings (deterministic, room for the JSON reply).
JUDGE_SETTINGS = GenerationSettings(temperature=0.0, max_tokens=300)


def judge_engine(config: RunConfig, run: RunFolder, backend: ModelBackend | None
                 ) -> Engine | None:
    """The judge engine (:data:`JUDGE_SETTINGS`, the run's cache and concurrency), or
    ``None`` without a judge ``backend``."""
    if backend is None:
        return None
    return Engine(backend, JUDGE_SETTINGS, cache_from_config(config.output, run),
                  config.model.concurrency)


def quiet_hugging_face() -> None:
    """Silence Hugging Face progress bars ("Loading weights …") and info logging, which
    would otherwise leak into the output when a model loads (warnings and errors stay)."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        from huggingface_hub.utils import disable_progress_bars
    except ImportError:
        return
    disable_progress_bars()


def scorer_for(options: Judged) -> tuple[BertScorer | None, str | None]:
    """``(scorer, None)`` or ``(None, reason)`` when disabled (``--no-bertscore``) or
    unavailable (a warning). Hugging Face progress bars and logging are silenced first,
    unless debug logging is on (``-v``). Raises
    :class:`~heritage_eval.metrics.bertscore.BertScoreConfigError` (a usage error) for a
    setting that cannot work."""
    if options.no_bertscore:
        return None, "BERTScore disabled (--no-bertscore)"
    if not logging.getLogger().isEnabledFor(logging.DEBUG):
        quiet_hugging_face()
    try:
        return BertScorer(bertscore_config(options)), None
    except BertScoreUnavailable as exc:
        print(f"warning: {exc}; BERTScore will be unscored", file=sys.stderr)
        return None, str(exc)


def redacted_command(argv: list[str] | None = None) -> str:
    """The command line with the value of every secret option replaced by ``***``."""
    args = list(sys.argv if argv is None else argv)
    out: list[str] = []
    hide = False
    for a in args:
        if hide:
            out.append("***")
            hide = False
        elif a in SECRET_OPTIONS:
            out.append(a)
            hide = True
        elif any(a.startswith(f"{s}=") for s in SECRET_OPTIONS):
            out.append(a.split("=", 1)[0] + "=***")
        else:
            out.append(a)
    return " ".join(out)


def run_provenance(model: ModelConfig, engine: Engine, dataset: HcsuDataset,
                   task: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Provenance block of a study: package, git, model (``model``'s image cap), settings,
    task spec, prompt hash, data, and ``extra`` fields."""
    return provenance(command=redacted_command(), task=task, prompt_hash=prompt_hash(),
                      data=data_info(dataset),
                      **model_provenance(model, engine.backend, engine.settings), **extra)


def data_info(dataset: HcsuDataset) -> dict[str, Any]:
    """The data block of the provenance: root folder and counts."""
    return {"root": str(dataset.root), "images": len(dataset.images),
            "classes": len(dataset.classes), "problems": len(dataset.problems)}
