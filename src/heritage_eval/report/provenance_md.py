"""The short "Provenance" section of a run's ``summary.md``, read from the ``provenance``
block that ``summary.json`` records (:mod:`heritage_eval.core.provenance`).

Rule: the section names what a reader needs to trust or re-run the numbers — model,
data (path, and its hash where the benchmark records one), configuration hash, prompt
hash, package version and git commit, creation time — each as recorded; a field the run
did not record prints "not recorded" rather than disappearing, so its absence is seen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["provenance_markdown"]

NOT_RECORDED = "not recorded"
#: Keys that may hold the data's hash, most specific first.
_DATA_HASHES = ("question_file_sha256", "data_sha256", "images_sha256")


def _data(prov: Mapping[str, Any]) -> str:
    """The data the run read: a question file, a data folder (``data.root`` with its
    image / class counts) or ``data_info``."""
    if prov.get("question_file"):
        return f"`{prov['question_file']}`"
    data = prov.get("data")
    if isinstance(data, Mapping) and data.get("root"):
        counts = ", ".join(f"{data[k]} {k}" for k in ("images", "classes") if k in data)
        return f"`{data['root']}`" + (f" ({counts})" if counts else "")
    if isinstance(data, str) and data:
        return f"`{data}`"
    info = prov.get("data_info")
    if isinstance(info, Mapping) and info:
        return ", ".join(f"{k} `{v}`" for k, v in info.items())
    return NOT_RECORDED


def _model(summary: Mapping[str, Any], prov: Mapping[str, Any]) -> str:
    if prov.get("model"):
        return f"`{prov['model']}`"
    models = list(summary.get("models") or {})
    return ", ".join(f"`{m}`" for m in models) if models else NOT_RECORDED


def _code(value: Any) -> str:
    return NOT_RECORDED if value in (None, "") else f"`{value}`"


def provenance_markdown(summary: Mapping[str, Any], config_hash: str | None = None) -> str:
    """The ``## Provenance`` section (Markdown, starts and ends with a newline) from
    ``summary["provenance"]``; ``config_hash`` is used when the provenance has none (a
    run whose ``run.json`` holds it). Never raises on a missing or odd block."""
    raw = summary.get("provenance")
    prov: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    data_hash = next((prov[k] for k in _DATA_HASHES if prov.get(k)), None)
    lines = [
        f"- model: {_model(summary, prov)}",
        f"- data: {_data(prov)}",
        f"- data hash: {_code(data_hash)}",
        f"- config hash: {_code(prov.get('config_hash') or config_hash)}",
        f"- prompt hash: {_code(prov.get('prompt_hash') or prov.get('prompt_templates_hash'))}",
        f"- package: heritage-eval {_code(prov.get('package_version'))}",
        f"- git commit: {_code(prov.get('git_commit'))}",
        f"- created (UTC): {_code(prov.get('created_utc'))}",
    ]
    for key in ("judge_model", "judge", "embedder", "bertscore"):
        if isinstance(prov.get(key), str) and prov[key]:
            lines.append(f"- {key.replace('_', ' ')}: {_code(prov[key])}")
    return "\n## Provenance\n\n" + "\n".join(lines) + "\n\nFull record: `summary.json` " \
        "(`provenance`) and `run.json`.\n"
