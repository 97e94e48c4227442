"""The dataset card (``README.md``) of an export: YAML front matter and a body.

Front matter (the Hugging Face Hub's dataset card metadata, read by
``datasets.load_dataset(folder)``): ``license``, ``pretty_name``, ``configs`` (one
``default`` config over every shard plus one per medium / domain / task, each with its
``test`` split's ``data_files``) and ``dataset_info`` (per config: the features and the
split's row count). The body gives the columns, the statistics tables and the
provenance (source path, tool version, date, licence, seed when the source has one).
Reference: huggingface.co/docs/hub/datasets-cards and datasets-manual-configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from heritage_eval.curate.hf.features import card_features
from heritage_eval.curate.hf.spec import ExportSource, StatTable
from heritage_eval.curate.hf.write import DATA_DIR, SPLIT

#: Card licence when ``--license`` is not given: the Hub's "other" (see the source).
DEFAULT_LICENSE = "other"


def front_matter(src: ExportSource, shards: Mapping[str, tuple[int, list[Path]]],
                 license_id: str) -> dict[str, Any]:
    """The card's YAML metadata as a dict (see the module docstring)."""
    features = card_features(src.columns)
    total = sum(n for n, _ in shards.values())
    configs: list[dict[str, Any]] = [{
        "config_name": "default", "default": True,
        "data_files": [{"split": SPLIT, "path": f"{DATA_DIR}/*/*.parquet"}]}]
    info: list[dict[str, Any]] = [{"config_name": "default", "features": features,
                                   "splits": [{"name": SPLIT, "num_examples": total}]}]
    for config, (n, _paths) in shards.items():
        configs.append({"config_name": config, "data_files": [
            {"split": SPLIT, "path": f"{DATA_DIR}/{config}/*.parquet"}]})
        info.append({"config_name": config, "features": features,
                     "splits": [{"name": SPLIT, "num_examples": n}]})
    return {"license": license_id, "pretty_name": src.pretty_name,
            "tags": ["heritage-eval", src.benchmark, "cultural-heritage"],
            "configs": configs, "dataset_info": info}


class _PlainDumper(yaml.SafeDumper):
    """Safe YAML without ``&anchor`` / ``*alias`` (the features list repeats per config;
    some card parsers do not follow aliases)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _table(t: StatTable) -> list[str]:
    lines = [f"### {t.title}", "", "| " + " | ".join(t.header) + " |",
             "|" + "---|" * len(t.header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in t.rows]
    return [*lines, ""]


def render_card(src: ExportSource, shards: Mapping[str, tuple[int, list[Path]]],
                license_id: str, provenance: Mapping[str, Any]) -> str:
    """The whole ``README.md`` text: ``---`` YAML ``---`` then the Markdown body."""
    meta = yaml.dump(front_matter(src, shards, license_id), Dumper=_PlainDumper,
                     allow_unicode=True, sort_keys=False)
    total = sum(n for n, _ in shards.values())
    body = [f"# {src.pretty_name}", "", src.description, "",
            f"{total} rows in {sum(len(p) for _, p in shards.values())} parquet shard(s), "
            f"split `{SPLIT}`. Load with `datasets.load_dataset(\"<this folder>\")` "
            "(config `default` = everything) or give the folder back to heritage-eval "
            f"(`--data` / `--questions`): it is read back into the release layout.", "",
            "## Configs", "", "| config | rows | content |", "|---|---|---|"]
    body += [f"| `{c}` | {n} | {src.config_docs.get(c, '')} |" for c, (n, _) in shards.items()]
    body += ["", "## Columns", "", "| column | type | meaning |", "|---|---|---|"]
    body += [f"| `{c.name}` | {c.kind} | {c.doc} |" for c in src.columns]
    body += ["", "## Statistics", ""]
    for t in src.tables:
        body += _table(t)
    body += ["## Provenance", ""]
    body += [f"- **{k}**: {', '.join(map(str, v)) if isinstance(v, list) else v}"
             for k, v in provenance.items()]
    if license_id == DEFAULT_LICENSE:
        body += ["", "**Licence not stated** (`license: other`): check the rights of the "
                 "source material before sharing this dataset."]
    body += [""]
    return f"---\n{meta}---\n\n" + "\n".join(body)


def read_front_matter(text: str, where: str) -> dict[str, Any]:
    """The YAML metadata of a card's text; raises ``ValueError`` naming ``where`` when
    there is no ``---`` block or it is not a mapping."""
    if not text.startswith("---"):
        raise ValueError(f"{where}: no YAML front matter (the card must start with '---')")
    end = text.find("\n---", 3)
    if end < 0:
        raise ValueError(f"{where}: YAML front matter is not closed by '---'")
    data = yaml.safe_load(text[3:end])
    if not isinstance(data, dict):
        raise ValueError(f"{where}: YAML front matter is not a mapping")
    return data
