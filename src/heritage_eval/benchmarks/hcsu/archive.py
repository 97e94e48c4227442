"""Extraction of the password-protected release archives ``tie.zip`` / ``bei.zip``.

The password comes from the caller (a command-line option or an environment variable)
and is never written anywhere. Python's :mod:`zipfile` decrypts the classic ZipCrypto
scheme; an archive using AES encryption is reported with a clear message (extract it
with ``7z x`` and point ``--data`` at the folder). Members are extracted below the
target only (absolute paths and ``..`` components are refused), and a leading
``tie/`` / ``bei/`` folder inside the archive is dropped, so the result is always
``TARGET/<calligrapher>-<script>/<file>``. Member names stored without the UTF-8 flag
are decoded as UTF-8 or GBK (see :func:`member_name`).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path, PurePosixPath


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


def extract_domain_zip(archive: Path, target: Path, password: str | None) -> list[str]:
    """Extract ``archive`` into ``target`` (created); returns the refused member names.

    Members already present with the same size are skipped (idempotent). Raises
    :class:`ArchiveError` for an unreadable archive, a wrong or missing password, or an
    unsupported encryption method.
    """
    strip = archive.stem  # "tie" or "bei"
    pwd = password.encode("utf-8") if password else None
    refused: list[str] = []
    try:
        with zipfile.ZipFile(archive) as zf:
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
                dest.parent.mkdir(parents=True, exist_ok=True)
                tmp = dest.with_name(f".{dest.name}.part")
                with zf.open(info, pwd=pwd) as src, tmp.open("wb") as out:
                    shutil.copyfileobj(src, out)
                tmp.replace(dest)
    except RuntimeError as exc:  # zipfile: "File ... is encrypted, password required ..."
        hint = "" if password else " (set the password with --zip-password-env VAR)"
        raise ArchiveError(f"cannot decrypt {archive}: {exc}{hint}") from exc
    except NotImplementedError as exc:
        raise ArchiveError(f"{archive} uses an encryption or compression method Python's "
                           f"zipfile cannot read ({exc}); extract it with '7z x' and pass "
                           "the extracted folder as --data") from exc
    except (zipfile.BadZipFile, OSError) as exc:
        raise ArchiveError(f"cannot read archive {archive}: {exc}") from exc
    return refused
