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
import zlib
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


def _extract_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path,
                    pwd: bytes | None) -> None:
    """Copy one member to ``dest`` through a ``.part`` sibling, removed on any failure."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.part")
    try:
        with zf.open(info, pwd=pwd) as src, tmp.open("wb") as out:
            shutil.copyfileobj(src, out)
        tmp.replace(dest)
    finally:
        tmp.unlink(missing_ok=True)


def extract_domain_zip(archive: Path, target: Path, password: str | None) -> list[str]:
    """Extract ``archive`` into ``target`` (created); returns the refused member names.

    Members already present with the same size are skipped (idempotent). Raises
    :class:`ArchiveError` for an unreadable archive, a missing password, a wrong
    password, or an unsupported encryption method. ZipCrypto lets about 1 wrong password
    in 256 pass its header check; such a password then fails while decompressing
    (``zlib.error``) or on the CRC of a stored member: both are reported as "wrong
    password (or corrupt archive)". A failed member leaves no partial file. Member names
    in messages are decoded as for extraction (:func:`member_name`).
    """
    strip = archive.stem  # "tie" or "bei"
    pwd = password.encode("utf-8") if password else None
    refused: list[str] = []
    name = "?"
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
                _extract_member(zf, info, dest, pwd)
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
        if "CRC" in str(exc) and info_encrypted(archive, name):
            raise _wrong_password(archive, name, "CRC-32 check failed", password) from exc
        raise ArchiveError(f"cannot read archive {archive} (member {name!r}): "
                           f"{exc}") from exc
    except OSError as exc:
        raise ArchiveError(f"cannot read archive {archive}: {exc}") from exc
    return refused


def info_encrypted(archive: Path, name: str) -> bool:
    """True when member ``name`` (as decoded by :func:`member_name`) of ``archive`` is
    encrypted (flag bit 0)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            return any(member_name(i) == name and i.flag_bits & 0x1 for i in zf.infolist())
    except (zipfile.BadZipFile, OSError):
        return False
