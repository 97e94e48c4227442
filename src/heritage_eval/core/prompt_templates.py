"""Named prompt templates that a ``--prompts FILE`` can replace (HCSU, MUSE).

A :class:`TemplateSet` holds a benchmark's built-in templates (name -> text, with
``str.format`` placeholders such as ``{k}``) and the ones in use. A prompt file is JSON:
either a flat object of name -> text, or a document with one object per benchmark (the
file ``heritage-eval prompts dump`` writes), from which the set's own ``section`` is
read. Names not given keep the built-in text. Every entry is a ``str.format`` template:
it may use only its built-in template's placeholders (none for a template sent as
written), and a literal brace is doubled (``{{``, ``}}``) in every entry. Message builders call
:meth:`TemplateSet.get` at call time, so :meth:`TemplateSet.using` takes effect for
every prompt built inside it; the built-in texts are back after it (in-process runs do
not leak into each other).
"""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from heritage_eval.core.datapath import read_regular_text
from heritage_eval.core.types import stable_hash

#: Section names of a ``heritage-eval prompts dump`` document (one per benchmark).
SECTIONS = ("ancient-bench", "hcsu", "muse")


class PromptFileError(ValueError):
    """A ``--prompts`` file that cannot be used; the message names the file."""


def fields(text: str) -> set[str]:
    """The ``{placeholder}`` names of a ``str.format`` template. Raises ``ValueError``
    for an unbalanced brace."""
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


def checked_template(text: str, known: Iterable[str], where: str, *,
                     formatted: bool) -> str:
    """``text`` read as a ``str.format`` template that may use only the placeholders
    ``known`` (an empty set: a text sent as written). Returns the text to store: as
    given when ``formatted`` (filled in later), else with doubled braces undone (what
    the model sees). Raises :class:`PromptFileError` starting with ``where`` for an
    unbalanced brace or any other placeholder — ``{name}``, ``{}``, ``{0}``,
    ``{k.attr}`` — so a template is never sent with a ``{…}`` left unfilled."""
    allowed = set(known)
    try:
        extra = fields(text) - allowed
    except ValueError as exc:
        raise PromptFileError(f"{where}: {exc} (write a literal brace as {{{{ or }}}})"
                              ) from exc
    if extra:
        raise PromptFileError(
            f"{where} uses unknown placeholder(s) "
            f"{', '.join(f or '{}' for f in sorted(extra))}; it may use "
            f"{', '.join(sorted(allowed)) or 'none'} (write a literal brace as {{{{ or }}}})")
    return text if formatted else text.format()


class TemplateSet:
    """The templates of one benchmark: ``section`` (its key in a ``prompts dump`` file),
    ``defaults`` (name -> built-in text, in a fixed order) and ``formatted``, the names
    filled in with ``str.format`` (the others are sent as written, braces included)."""

    def __init__(self, section: str, defaults: Mapping[str, str],
                 formatted: Iterable[str] = ()) -> None:
        self.section = section
        self.defaults = dict(defaults)
        self.formatted = frozenset(formatted)
        self._active = dict(defaults)

    def get(self, name: str) -> str:
        """The template ``name`` in use. Raises ``KeyError`` for an unknown name."""
        return self._active[name]

    def hash(self) -> str:
        """Fingerprint of the templates in use (16 hex characters)."""
        return stable_hash([self._active[name] for name in self.defaults])

    def load(self, path: str | Path) -> dict[str, str]:
        """The templates named in the JSON file ``path`` (module docstring). Every entry is
        read as a ``str.format`` template: it may use the placeholders of its built-in
        template and no other (an entry whose built-in text has none allows none), and a
        literal brace is written doubled, ``{{`` / ``}}``, as in ``str.format``; an entry
        not in ``formatted`` is stored with its doubled braces undone, so the model sees
        one brace. Raises :class:`PromptFileError` naming the file (and the entry) for
        invalid JSON, a non-object, a section that is no object, a document without this
        section, an unknown name, an empty or non-string text, an unbalanced brace or an
        unknown placeholder."""
        p = Path(path)
        try:
            data = json.loads(read_regular_text(p))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PromptFileError(f"cannot read prompt file {p}: {exc}") from exc
        if isinstance(data, dict) and self.section in data:
            data = data[self.section]
            if not isinstance(data, dict):
                raise PromptFileError(
                    f"prompt file {p}: section {self.section!r} must be a JSON object of "
                    f"template name -> text, not {type(data).__name__}")
        elif isinstance(data, dict) and data and set(data) <= set(SECTIONS):
            raise PromptFileError(
                f"prompt file {p}: no {self.section!r} section (it has "
                f"{', '.join(data)}); add one, or give a flat object of {self.section} "
                f"templates ({', '.join(self.defaults)})")
        if not isinstance(data, dict):
            raise PromptFileError(f"prompt file {p}: expected a JSON object of name -> text")
        out: dict[str, str] = {}
        for key, value in data.items():
            if key not in self.defaults:
                raise PromptFileError(f"prompt file {p}: unknown {self.section} template "
                                      f"{key!r}; use one of {', '.join(self.defaults)}")
            if not isinstance(value, str) or not value.strip():
                raise PromptFileError(f"prompt file {p}: entry {key!r} must be a non-empty "
                                      "string")
            known = fields(self.defaults[key]) if key in self.formatted else set()
            out[key] = checked_template(value, known, f"prompt file {p}: entry {key!r}",
                                        formatted=key in self.formatted)
        return out

    def use(self, replaced: Mapping[str, str]) -> None:
        """Use the built-in templates with ``replaced`` ones (name -> text) from now on."""
        self._active = {**self.defaults, **replaced}

    @contextmanager
    def using(self, path: str | Path | None) -> Iterator[None]:
        """Use the templates of the file ``path`` (``None``: the built-in ones) inside the
        block, the built-in ones after it. Raises :class:`PromptFileError` as
        :meth:`load`."""
        self.use(self.load(path) if path is not None else {})
        try:
            yield
        finally:
            self.use({})
