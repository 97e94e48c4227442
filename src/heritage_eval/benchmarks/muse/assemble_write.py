"""Writing an assembled MUSE benchmark as a frozen question file (``muse assemble``).

The output is a question file exactly as ``muse generate`` writes it
(:func:`~.questions.write_questions`: same schema, sorted keys, one question per line, in
pool order) so ``run muse --questions OUT`` reads it unchanged, plus its own
``<out stem>_assets/`` folder:

- generated images the chosen questions use (jigsaw pieces, drawn boxes) are copied from
  the pool's ``<pool stem>_assets/`` and their references rewritten to
  ``<out stem>_assets/…`` — the frozen file does not depend on the pool's folder;
- source artworks stay ``@images/…`` references; the header's
  ``source.images_dir_relative`` is recomputed for the output's folder (the absolute
  folder is kept). When the pool carries its own copy of the artworks
  (``muse generate --copy-images``), the used artworks are copied into
  ``<out stem>_assets/images/`` instead, so the output is self-contained as well.

The header keeps the pool's generation record (``generator_version``, generation
``seed``, ``params``, ``source``) with ``source.n_questions``, ``n_images`` and
``turns_per_task`` counted on the output, and adds ``source.assembly`` (pool file name
and SHA-256, assembly seed, N, strategy, strata sources, counts). The assets folder is
built under a temporary name and moved into place, then the question file is written
atomically; a failure leaves neither behind.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from heritage_eval.benchmarks.muse.assemble_pool import Pool
from heritage_eval.benchmarks.muse.questions import (
    IMAGES_PREFIX,
    Question,
    QuestionFileError,
    QuestionFileHeader,
    write_questions,
)
from heritage_eval.core.paths import resolve_inside


class _Assets:
    """Copies the files the output refers to into the temporary assets folder."""

    def __init__(self, pool: Pool, tmp: Path, out_prefix: str) -> None:
        self.pool_base = pool.path.resolve().parent
        self.pool_prefix = f"{pool.path.stem}_assets/"
        self.tmp, self.out_prefix = tmp, out_prefix
        self.copied: dict[str, str] = {}

    def move(self, ref: str, qid: str) -> str:
        """The output's reference for pool reference ``ref`` (copying the file once)."""
        if ref in self.copied:
            return self.copied[ref]
        inner = (ref[len(self.pool_prefix):] if ref.startswith(self.pool_prefix)
                 else f"pool/{ref}")
        src = resolve_inside(self.pool_base, ref)
        self._copy(src, self.tmp / inner, f"question {qid}: image {ref!r}")
        self.copied[ref] = self.out_prefix + inner
        return self.copied[ref]

    def artwork(self, src: Path, tail: str, qid: str) -> None:
        """Copy a source artwork (pool made with --copy-images) to ``images/<tail>``."""
        key = IMAGES_PREFIX + tail
        if key not in self.copied:
            self._copy(src, self.tmp / "images" / tail, f"question {qid}: artwork {key!r}")
            self.copied[key] = key

    @staticmethod
    def _copy(src: Path, dst: Path, what: str) -> None:
        if not src.is_file():
            raise QuestionFileError(f"{what} not found at {src} (the pool's assets folder "
                                    "is incomplete; regenerate the pool)")
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)


def _copied_images_dir(pool: Pool) -> Path | None:
    """The pool's own copy of the artworks (``--copy-images``), else ``None``."""
    rel = pool.header.source.get("images_dir_relative")
    if pool.header.source.get("images_copied") and isinstance(rel, str) \
            and rel.startswith(f"{pool.path.stem}_assets/"):
        return pool.path.resolve().parent / rel
    return None


def _images_relative(pool: Pool, out_base: Path) -> str | None:
    """``images_dir_relative`` for a file in ``out_base`` pointing where the pool's did."""
    src = pool.header.source
    rel, absolute = src.get("images_dir_relative"), src.get("images_dir_absolute")
    folder = None
    if isinstance(rel, str) and rel:
        folder = pool.path.resolve().parent / rel
    if (folder is None or not folder.is_dir()) and isinstance(absolute, str) and absolute:
        folder = Path(absolute)
    if folder is None:
        return None
    return Path(os.path.relpath(folder.resolve(), out_base)).as_posix()


def _rewrite(questions: list[Question], assets: _Assets, artworks: Path | None) -> None:
    for q in questions:
        for turn in q.turns:
            refs = []
            for ref in turn.images:
                if ref.startswith(IMAGES_PREFIX):
                    if artworks is not None:
                        tail = ref[len(IMAGES_PREFIX):]
                        assets.artwork(resolve_inside(artworks, tail), tail, q.id)
                    refs.append(ref)
                else:
                    refs.append(assets.move(ref, q.id))
            turn.images = refs
            for opt in turn.options:
                if opt.image is not None and not opt.image.startswith(IMAGES_PREFIX):
                    opt.image = assets.move(opt.image, q.id)


def frozen_header(pool: Pool, out_base: Path, questions: list[Question],
                  assembly: dict[str, Any], images_relative: str | None
                  ) -> QuestionFileHeader:
    """The output's header (module doc)."""
    source = dict(pool.header.source)
    if images_relative is not None:
        source["images_dir_relative"] = images_relative
    turns: dict[str, int] = {}
    for q in questions:
        for t in q.turns:
            turns[t.task] = turns.get(t.task, 0) + 1
    source.update(n_questions=len(questions), n_images=len({q.image_id for q in questions}),
                  turns_per_task={t: turns.get(t, 0) for t in pool.header.tasks},
                  assembly=assembly)
    return pool.header.model_copy(update={"source": source})


def write_frozen(out: str | Path, pool: Pool, questions: list[Question],
                 assembly: dict[str, Any]) -> tuple[Path, int]:
    """Write the frozen question file ``out`` and ``<out stem>_assets/`` (rewriting the
    questions' references in place); returns (assets folder, files copied). Raises
    :class:`~.questions.QuestionFileError` when a referenced pool asset is missing and
    :class:`~heritage_eval.core.paths.PathOutsideRoot` for a reference leaving the pool's
    folder and ``ValueError`` when ``out``'s assets folder would be the pool's; nothing
    is left behind then."""
    out = Path(out)
    out_base = out.resolve().parent
    final = out_base / f"{out.stem}_assets"
    if final == pool.path.resolve().parent / f"{pool.path.stem}_assets":
        raise ValueError(f"{out}: its assets folder would be the pool's own ({final})")
    tmp = out_base / f".{out.stem}_assets.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    artworks = _copied_images_dir(pool)
    try:
        assets = _Assets(pool, tmp, f"{out.stem}_assets/")
        _rewrite(questions, assets, artworks)
        rel = f"{out.stem}_assets/images" if artworks is not None \
            else _images_relative(pool, out_base)
        header = frozen_header(pool, out_base, questions, assembly, rel)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    write_questions(out, header, questions)
    return final, len(assets.copied)
