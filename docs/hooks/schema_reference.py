"""MkDocs hook: one reference page per JSON Schema file shipped with the package.

Every ``*.json`` file in ``src/heritage_eval/schemas/`` (found when the site is built;
no file name is written here) becomes ``reference/schemas/<stem>.md``: the schema's
title, ``$id`` and description, a table of its top-level fields, one table per
definition in ``$defs``, and a link to the file itself, which is copied into the site.
``reference/schemas.md`` (generated too) lists them. The nav entry that names
``reference/schemas.md`` is turned into a section holding that overview and one entry
per schema file, so a new schema file appears in the site without editing
``mkdocs.yml``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

SCHEMAS = Path(__file__).resolve().parents[2] / "src" / "heritage_eval" / "schemas"
OVERVIEW = "reference/schemas.md"


def schema_files() -> list[Path]:
    """The schema files, sorted by name."""
    return sorted(SCHEMAS.glob("*.json"))


def page_of(path: Path) -> str:
    """The site path of ``path``'s page."""
    return f"reference/schemas/{path.stem}.md"


def title_of(path: Path) -> str:
    """The nav title of a schema file: its file name."""
    return path.name


def _md(text: str) -> str:
    """A docstring-style description as Markdown: ``x`` becomes `x`; a pointer to a
    design note that is not part of this site (``(DESIGN.md rule 1)``) is dropped."""
    text = re.sub(r"\s*\(DESIGN\.md[^)]*\)", "", text)
    return re.sub(r"``(.+?)``", r"`\1`", text)


def _cell(text: str) -> str:
    return _md(" ".join(text.split())).replace("|", "\\|")


def type_of(spec: dict[str, Any]) -> str:
    """A short type expression for a property ``spec`` (links to definitions)."""
    if "$ref" in spec:
        name = str(spec["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    if "const" in spec:
        return f"`{json.dumps(spec['const'], ensure_ascii=False)}`"
    if "enum" in spec:
        return " \\| ".join(f"`{json.dumps(v, ensure_ascii=False)}`" for v in spec["enum"])
    for key in ("anyOf", "oneOf"):
        if key in spec:
            return " or ".join(type_of(part) for part in spec[key])
    kind = spec.get("type")
    if kind == "array":
        return f"array of {type_of(spec.get('items', {}))}"
    if kind == "object" and isinstance(spec.get("additionalProperties"), dict):
        return f"object of {type_of(spec['additionalProperties'])}"
    if isinstance(kind, list):
        return " or ".join(f"`{k}`" for k in kind)
    return f"`{kind}`" if kind else "any"


def fields_table(obj: dict[str, Any]) -> list[str]:
    """Markdown table rows for the ``properties`` of ``obj``."""
    props = obj.get("properties") or {}
    if not props:
        return []
    required = set(obj.get("required") or [])
    rows = ["| field | type | required | default | description |",
            "|---|---|---|---|---|"]
    for name, spec in props.items():
        default = (f"`{json.dumps(spec['default'], ensure_ascii=False)}`"
                   if "default" in spec else "")
        rows.append(f"| `{name}` | {type_of(spec)} | {'yes' if name in required else ''} "
                    f"| {default} | {_cell(str(spec.get('description', '')))} |")
    return rows


def render(path: Path) -> str:
    """The Markdown page of the schema file at ``path``."""
    schema = json.loads(path.read_text("utf-8"))
    lines = [f"# `{path.name}`", ""]
    if schema.get("title"):
        lines += [f"**{_md(str(schema['title']))}**", ""]
    if schema.get("$id"):
        lines += [f"Schema id: `{schema['$id']}`. Shipped with the package as "
                  f"`heritage_eval/schemas/{path.name}`; this page is generated from that "
                  "file when the site is built.", ""]
    if schema.get("description"):
        lines += [_md(str(schema["description"])), ""]
    table = fields_table(schema)
    if table:
        lines += ["## Fields", "", *table, ""]
    defs = schema.get("$defs") or {}
    if defs:
        lines += ["## Definitions", ""]
    for name, spec in defs.items():
        lines += [f"### {name}", ""]
        if spec.get("description"):
            lines += [_md(str(spec["description"])), ""]
        if "enum" in spec:
            lines += [f"One of: {type_of(spec)}.", ""]
        lines += [*fields_table(spec), ""]
    lines += ["## The schema file", "",
              f"The file itself, as shipped: [{path.name}]({path.name}).", ""]
    return "\n".join(lines)


def render_overview(paths: list[Path]) -> str:
    """The overview page listing every schema file."""
    lines = ["# Schemas", "",
             "The JSON Schema files shipped in `heritage_eval/schemas/`, one page each "
             "(generated from the files when the site is built). The files of a run folder "
             "that follow them are described in [Run folder](run-folder.md).", "",
             "| file | title |", "|---|---|"]
    for path in paths:
        title = json.loads(path.read_text("utf-8")).get("title", "")
        lines.append(f"| [{path.name}](schemas/{path.stem}.md) | {_cell(str(title))} |")
    return "\n".join(lines) + "\n"


def _expand(nav: Any, paths: list[Path]) -> Any:
    """``nav`` with the entry naming :data:`OVERVIEW` turned into a section."""
    if isinstance(nav, list):
        return [_expand(item, paths) for item in nav]
    if isinstance(nav, dict):
        out: dict[str, Any] = {}
        for title, value in nav.items():
            if value == OVERVIEW:
                value = [OVERVIEW, *({title_of(p): page_of(p)} for p in paths)]
            out[title] = _expand(value, paths)
        return out
    return nav


def on_config(config: Any) -> Any:
    """Add a nav entry per schema file under the entry naming :data:`OVERVIEW`."""
    if config.get("nav"):
        config["nav"] = _expand(config["nav"], schema_files())
    return config


def on_files(files: Files, config: Any) -> Files:
    """Add the generated overview and schema pages."""
    paths = schema_files()
    files.append(File.generated(config, OVERVIEW, content=render_overview(paths)))
    for path in paths:
        files.append(File.generated(config, page_of(path), content=render(path)))
        files.append(File.generated(config, f"reference/schemas/{path.name}",
                                    abs_src_path=str(path)))
    return files
