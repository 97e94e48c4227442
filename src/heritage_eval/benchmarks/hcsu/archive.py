"""Extraction of the password-protected release archives ``tie.zip`` / ``bei.zip``.

The password comes from the caller (a command-line option or an environment variable)
and is never written anywhere. Python's :mod:`zipfile` decrypts the classic ZipCrypto
scheme; an archive using AES encryption is reported with a clear message (extract it
with ``7z x`` and point ``--data`` at the folder). Members are extracted below the
target only (absolute paths and ``..`` components are refused), and a leading
``tie/`` / ``bei/`` folder inside the archive is dropped, so the result is always
``TARGET/<calligrapher>-<script>/<file>``. Member names stored without the UTF-8 flag
are decoded as UTF-8 or GBK (see :func:`member_name`). Sizes are capped
(``docs/limits.md``): a member declaring more than ``max_zip_member`` bytes, or more than
``max_zip_ratio`` times its compressed size, is skipped before a byte is written, and
every copy is counted, so a member whose header under-states its size is stopped too;
such a member is one problem, and the others are extracted.

**Multi-part archives** (the Wild domain: ``wild.zip.001``, ``wild.zip.002`` …). Such
parts (7-Zip's "split to volumes") are byte ranges of one ordinary zip file, so they are
read as that file without joining them on disk: :class:`MultiPartFile` presents the parts,
in numeric order, as one seekable stream, and members are decrypted and extracted from it
as from a single archive (:func:`extract_multipart`). The parts must be numbered from
``001`` without a gap (a missing part is named in the error). The equivalent by hand is
``cat wild.zip.0* > wild.zip`` followed by ``unzip`` (or ``7z x`` for AES). Layout
expected inside: the HCSU release layout — ``bei/`` and ``tie/`` image folders of
``<calligrapher>-<script>/<file>`` with ``bei_annotations.json`` /
``tie_annotations.json`` — optionally below one top folder ``wild/``, which is dropped.
:func:`wild_root` extracts it (once; members already present with the same size are
skipped) and returns the folder to load. The password is passed in by the caller (an
option or, better, an environment variable) and never appears in a message.
"""

from __future__ import annotations

import bisect
import contextlib
import io
import logging
import re
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from heritage_eval.core.datapath import check_regular_file, open_regular
from heritage_eval.core.sizecap import (
    MAX_ZIP_MEMBER,
    MAX_ZIP_RATIO,
    ZIP_RATIO_FLOOR,
    CapExceeded,
    copy_capped,
    human,
)

log = logging.getLogger(__name__)


class ArchiveError(Exception):
    """The archive cannot be opened or decrypted; the message names the file."""


def member_name(info: zipfile.ZipInfo) -> str:
    """The member's real name. Archives made without the UTF-8 flag (bit 11) store raw
    bytes that :mod:`zipfile` decodes as CP437; such a name is re-decoded as UTF-8, else
    as GBK (common for archives made on Chinese Windows), else left as it is."""
    if info.flag_bits & 0x800:
        return info.filename
    raw = info.filename.encode("cp437", errors="replace")
    for encoding in ("utf-8", "gbk"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return info.filename


def _member_target(name: str, strip: str, target: Path) -> Path | None:
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if parts and parts[0].casefold() == strip.casefold():
        parts = parts[1:]
    if not parts or any(p in {"..", ""} for p in parts) or name.startswith(("/", "\\")):
        return None
    return target.joinpath(*parts)


#: Hint shown when an encrypted archive is opened without a password.
PASSWORD_HINT = ("set the password in the environment variable HCSU_ZIP_PASSWORD (the "
                 "default of --zip-password-env), or name another variable with "
                 "--zip-password-env VAR")


def _wrong_password(archive: Path, name: str, detail: str, password: str | None) -> ArchiveError:
    if password is None:
        return ArchiveError(f"cannot decrypt {archive} (member {name!r}): a password is "
                            f"required; {PASSWORD_HINT}")
    return ArchiveError(f"cannot extract {archive} (member {name!r}): wrong password (or "
                        f"corrupt archive): {detail}")


def member_too_big(info: zipfile.ZipInfo, where: str) -> str | None:
    """Why member ``info`` is not extracted for its declared size, else ``None``: more
    than ``max_zip_member`` bytes uncompressed, or (above
    :data:`~heritage_eval.core.sizecap.ZIP_RATIO_FLOOR`) more than ``max_zip_ratio``
    times its compressed size -- a zip bomb's signature (docs/limits.md)."""
    if info.file_size > MAX_ZIP_MEMBER.value():
        return MAX_ZIP_MEMBER.message(where, "uncompressed size", human(info.file_size))
    ratio = MAX_ZIP_RATIO.value()
    if info.file_size > max(ZIP_RATIO_FLOOR, ratio * max(1, info.compress_size)):
        return MAX_ZIP_RATIO.message(
            where, "compression ratio", f"{human(info.file_size)} from "
            f"{human(info.compress_size)}, {info.file_size / max(1, info.compress_size):,.0f}:1")
    return None


def _member_limit(info: zipfile.ZipInfo) -> int:
    """Bytes a member may produce whatever its header says: both caps of
    :func:`member_too_big` applied to the compressed size actually stored."""
    return min(MAX_ZIP_MEMBER.value(),
               max(ZIP_RATIO_FLOOR, MAX_ZIP_RATIO.value() * max(1, info.compress_size)))


def _extract_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path,
                    pwd: bytes | None, where: str) -> None:
    """Copy one member to ``dest`` through a ``.part`` sibling, removed on any failure;
    the copy is counted (:func:`~heritage_eval.core.sizecap.copy_capped`), so a member
    whose header under-states its size is stopped at :func:`_member_limit` with
    :class:`~heritage_eval.core.sizecap.CapExceeded`."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.part")
    try:
        with zf.open(info, pwd=pwd) as src, tmp.open("wb") as out:
            copy_capped(src, out, MAX_ZIP_MEMBER, where, "uncompressed data",
                        _member_limit(info))
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)


def extract_domain_zip(archive: Path, target: Path, password: str | None,
                       problems: list[str] | None = None) -> list[str]:
    """Extract ``archive`` into ``target`` (created); returns the refused member names
    (unsafe paths). A leading folder named like the archive (``tie/`` in ``tie.zip``) is
    dropped. A member over a size cap (:func:`member_too_big`, or producing more than
    it declared) or whose data fails its CRC-32 while unencrypted is skipped, the others
    extracted; its message (naming archive, member, cap and how to raise it) goes to
    ``problems`` when given, and to the log.

    Members already present with the same size are skipped (idempotent). Raises
    :class:`ArchiveError` for an unreadable archive, a missing password, a wrong
    password, or an unsupported encryption method. ZipCrypto lets about 1 wrong password
    in 256 pass its header check; such a password then fails while decompressing
    (``zlib.error``) or on the CRC of a stored member: both are reported as "wrong
    password (or corrupt archive)". A failed member leaves no partial file. Member names
    in messages are decoded as for extraction (:func:`member_name`).
    """
    return _extract(lambda: archive, archive, archive.stem, target, password, problems)


def _skip(problems: list[str] | None, message: str) -> None:
    log.warning(message)
    if problems is not None:
        problems.append(message)


def _extract(source: Callable[[], Path | io.RawIOBase], label: Path, strip: str, target: Path,
             password: str | None, problems: list[str] | None = None) -> list[str]:
    """Extract the zip that ``source()`` opens (a path or a binary stream; called again
    to check a failed member's flags) into ``target``; ``label`` names it in messages and
    ``strip`` is the top folder dropped from member names. See
    :func:`extract_domain_zip` for the errors."""
    pwd = password.encode("utf-8") if password else None
    refused: list[str] = []
    name = "?"
    archive = label
    try:
        with _opened(source) as stream, zipfile.ZipFile(stream) as zf:
            for info in zf.infolist():
                if info.is_dir():
                    continue
                name = member_name(info)
                dest = _member_target(name, strip, target)
                if dest is None:
                    refused.append(name)
                    continue
                if dest.is_file() and dest.stat().st_size == info.file_size:
                    continue
                where = f"{archive} member {name!r}"
                if (why := member_too_big(info, where)) is not None:
                    _skip(problems, f"{why}: not extracted")
                    continue
                try:
                    _extract_member(zf, info, dest, pwd, where)
                except CapExceeded as exc:
                    _skip(problems, f"{exc}: not extracted")
                except zipfile.BadZipFile as exc:  # CRC: a wrong password when encrypted
                    if info.flag_bits & 0x1 or "CRC" not in str(exc):
                        raise
                    _skip(problems, f"{where}: its data does not match its header "
                                    f"({exc}): not extracted")
    except RuntimeError as exc:  # zipfile: "Bad password for file …" / "… password required"
        raise _wrong_password(archive, name, "the password check failed", password) from exc
    except zlib.error as exc:  # a wrong password that passed the 1-byte header check
        raise _wrong_password(archive, name, f"decompression failed ({exc})",
                              password) from exc
    except NotImplementedError as exc:
        raise ArchiveError(f"{archive} uses an encryption or compression method Python's "
                           f"zipfile cannot read ({exc}); extract it with '7z x' and pass "
                           "the extracted folder as --data") from exc
    except zipfile.BadZipFile as exc:
        if "CRC" in str(exc) and info_encrypted(source, name):
            raise _wrong_password(archive, name, "CRC-32 check failed", password) from exc
        raise ArchiveError(f"cannot read archive {archive} (member {name!r}): "
                           f"{exc}") from exc
    except OSError as exc:
        raise ArchiveError(f"cannot read archive {archive}: {exc}") from exc
    return refused


@contextlib.contextmanager
def _opened(source: Callable[[], Path | io.RawIOBase]) -> Iterator[Path | io.RawIOBase]:
    """``source()``, closed afterwards when it is a stream (:class:`zipfile.ZipFile`
    closes only the files it opened itself)."""
    opened = source()
    if isinstance(opened, Path):
        check_regular_file(opened)  # a FIFO or device is refused, never opened (OSError)
    try:
        yield opened
    finally:
        if not isinstance(opened, Path):
            opened.close()


def info_encrypted(archive: Path | Callable[[], Path | io.RawIOBase], name: str) -> bool:
    """True when member ``name`` (as decoded by :func:`member_name`) of ``archive`` (a
    path, or a function opening the archive) is encrypted (flag bit 0)."""
    try:
        with _opened(archive if callable(archive) else lambda: archive) as stream, \
                zipfile.ZipFile(stream) as zf:
            return any(member_name(i) == name and i.flag_bits & 0x1 for i in zf.infolist())
    except (zipfile.BadZipFile, OSError):
        return False


_PART = re.compile(r"\.(\d{3,})$")


def archive_parts(first: Path) -> list[Path]:
    """The parts of the multi-part archive whose first part is ``first``
    (``NAME.zip.001``), in order: ``NAME.zip.001``, ``.002`` … up to the highest number
    present. Raises :class:`ArchiveError` when ``first`` is not a ``.001`` part or a part
    in between is missing (naming it)."""
    match = _PART.search(first.name)
    if match is None or int(match.group(1)) != 1:
        raise ArchiveError(f"{first}: not the first part of a multi-part archive "
                           "(expected NAME.zip.001)")
    width, stem = len(match.group(1)), first.name[:match.start()]
    numbers = sorted(int(m.group(1)) for p in first.parent.iterdir()
                     if p.name.startswith(stem + ".")
                     and (m := _PART.search(p.name)) is not None
                     and p.name[:m.start()] == stem and p.is_file())
    parts = [first.parent / f"{stem}.{n:0{width}d}" for n in range(1, numbers[-1] + 1)]
    missing = [p.name for p in parts if not p.is_file()]
    if missing:
        raise ArchiveError(f"multi-part archive {first.parent / stem}: part(s) "
                           f"{', '.join(missing)} missing (found {len(numbers)} of "
                           f"{len(parts)})")
    return parts


class MultiPartFile(io.RawIOBase):
    """The parts of a split archive (:func:`archive_parts`) read as one seekable binary
    stream, without joining them on disk; one part file is open at a time."""

    def __init__(self, parts: list[Path]) -> None:
        super().__init__()
        self.parts = list(parts)
        self.sizes = [p.stat().st_size for p in self.parts]
        self.starts = [sum(self.sizes[:i]) for i in range(len(self.sizes))]
        self.size = sum(self.sizes)
        self.pos = 0
        self._open: tuple[int, io.BufferedReader] | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.size}[whence]
        if base + offset < 0:
            raise OSError(f"negative seek position {base + offset}")
        self.pos = base + offset
        return self.pos

    def _part(self, index: int) -> io.BufferedReader:
        if self._open is None or self._open[0] != index:
            if self._open is not None:
                self._open[1].close()
            self._open = (index, open_regular(self.parts[index]))
        return self._open[1]

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self.pos < self.size:
            # the last part starting at or before pos: never an empty one (an empty part
            # starts where the next one does)
            index = bisect.bisect_right(self.starts, self.pos) - 1
            offset = self.pos - self.starts[index]
            f = self._part(index)
            f.seek(offset)
            n = f.readinto(view[done:done + min(len(view) - done,
                                                self.sizes[index] - offset)])
            if not n:
                break
            done += n
            self.pos += n
        return done

    def close(self) -> None:
        if self._open is not None:
            self._open[1].close()
            self._open = None
        super().close()


def extract_multipart(first: Path, target: Path, password: str | None,
                      strip: str = "wild", problems: list[str] | None = None) -> list[str]:
    """Extract the split archive starting at ``first`` (``NAME.zip.001``) into ``target``,
    streaming the parts in order (:class:`MultiPartFile`); ``strip``: top folder dropped
    from member names. Returns the refused member names; raises :class:`ArchiveError` as
    :func:`extract_domain_zip` does, and for a missing part."""
    parts = archive_parts(first)
    return _extract(lambda: MultiPartFile(parts), first.parent / first.name[:-4], strip,
                    target, password, problems)


#: First part of the Wild archive inside a data folder.
WILD_FIRST_PART = "wild.zip.001"


def holds_wild_archive(root: Path) -> bool:
    """True when ``root`` holds the Wild archive (``wild.zip.001`` …) and no release
    layout of its own (no ``bei/``, ``tie/``, ``bei.zip``, ``tie.zip``)."""
    own = any((root / n).exists() for n in ("bei", "tie", "bei.zip", "tie.zip"))
    return not own and (root / WILD_FIRST_PART).is_file()


def wild_root(root: Path, extract_to: Path, password: str | None) -> Path:
    """The folder to load for ``root``: ``root`` itself, unless
    :func:`holds_wild_archive`; then the archive is extracted into ``extract_to/wild``
    (see the module doc) and that folder is returned. Raises :class:`ArchiveError`."""
    if not holds_wild_archive(root):
        return root
    target = extract_to / "wild"
    extract_multipart(root / WILD_FIRST_PART, target, password)
    return target
