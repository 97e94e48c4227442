"""The CJK font for figures with Chinese labels (calligraphers, scripts, dynasties, media).

matplotlib lists fonts from a cache built the first time it runs; a font installed later
(``make fonts``, ``apt install fonts-noto-cjk``) is missing from that cache until it is
rebuilt, so a figure would fall back to boxes or to Latin labels on a machine that has the
font. :func:`cjk_family` therefore also looks at the system's font files
(``font_manager.findSystemFonts``, fontconfig's list) when the cache knows no CJK family,
and registers the CJK ones with matplotlib for this process.

Matplotlib is imported inside the functions (this module is light to import). The
viewer's notice (:func:`has_cjk_font`) also works without matplotlib, which the base
install lacks (it comes with the ``hcsu``, ``muse`` and ``curate`` extras).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

#: Preferred CJK font families, in order (Noto / Source Han / Debian / desktop names).
CJK_FAMILIES: tuple[str, ...] = (
    "Noto Sans CJK SC", "Noto Sans CJK TC", "Noto Sans CJK JP", "Noto Sans SC",
    "Noto Serif CJK SC", "Noto Serif CJK TC", "Source Han Sans SC", "Source Han Sans CN",
    "WenQuanYi Micro Hei", "WenQuanYi Zen Hei", "AR PL UMing TW", "AR PL UKai TW",
    "AR PL UMing CN", "AR PL UKai CN", "Droid Sans Fallback", "SimHei", "Microsoft YaHei",
    "PingFang SC", "Heiti SC",
)
#: Substrings of a family or file name that mark a CJK font, tried after the list above.
CJK_HINTS = ("cjk", "han sans", "han serif", "wenquanyi", "wqy", "ar pl", "uming", "ukai",
             "cwtex", "hei", "song", "kai", "ming")
#: Environment variable naming a font file (.ttf/.otf/.ttc) with CJK glyphs.
CJK_FONT_ENV = "HERITAGE_EVAL_CJK_FONT"
#: Font file suffixes looked at without matplotlib.
FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")


def _pick(names: set[str]) -> str | None:
    found = next((name for name in CJK_FAMILIES if name in names), None)
    if found is None:
        found = next((n for n in sorted(names) if any(h in n.lower() for h in CJK_HINTS)),
                     None)
    return found


@functools.cache
def _register_system_cjk_files() -> None:
    """Register with matplotlib every system font file whose name looks CJK (once)."""
    from matplotlib import font_manager

    for path in font_manager.findSystemFonts():
        if any(h in Path(path).name.lower() for h in CJK_HINTS):
            try:
                font_manager.fontManager.addfont(path)
            except (OSError, RuntimeError, ValueError):  # an unreadable font file: skip
                continue


def cjk_family() -> str | None:
    """Family name of a font with Chinese glyphs, or ``None`` when the machine has none.

    Order: the file named by ``$HERITAGE_EVAL_CJK_FONT`` (registered); a family of
    :data:`CJK_FAMILIES` known to matplotlib; any family whose name matches
    :data:`CJK_HINTS`; the same two after registering the system's CJK font files (a font
    installed after matplotlib built its cache)."""
    from matplotlib import font_manager

    env = os.environ.get(CJK_FONT_ENV)
    if env and Path(env).is_file():
        font_manager.fontManager.addfont(env)
        return str(font_manager.FontProperties(fname=env).get_name())
    found = _pick({f.name for f in font_manager.fontManager.ttflist})
    if found is None:
        _register_system_cjk_files()
        found = _pick({f.name for f in font_manager.fontManager.ttflist})
    return found


def has_cjk_font() -> bool:
    """Whether this machine has a font with Chinese glyphs (the viewer's notice).

    With matplotlib installed: :func:`cjk_family` is not ``None``. Without it (the base
    install): ``$HERITAGE_EVAL_CJK_FONT`` names a file, fontconfig lists a font for
    Chinese (``fc-list :lang=zh``), or a font file in the usual font folders has a name
    matching :data:`CJK_HINTS` (the file-name test matplotlib's lookup adds, above).
    """
    from heritage_eval.core.extras import missing_modules

    if not missing_modules(("matplotlib",)):
        return cjk_family() is not None
    env = os.environ.get(CJK_FONT_ENV)
    if env and Path(env).is_file():
        return True
    try:
        listed = subprocess.run(["fc-list", ":lang=zh", "file"], capture_output=True,
                                text=True, timeout=20, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):  # no fontconfig (macOS, Windows)
        listed = ""
    return bool(listed) or any(any(h in f.name.lower() for h in CJK_HINTS)
                               for f in _font_files())


def _font_files() -> Iterator[Path]:
    """Font files under the usual system and user font folders (Linux, macOS, Windows)."""
    home = Path.home()
    roots = [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"),
             home / ".local/share/fonts", home / ".fonts", Path("/Library/Fonts"),
             Path("/System/Library/Fonts"), home / "Library/Fonts"]
    if sys.platform == "win32":
        roots.append(Path(os.environ.get("WINDIR", "C:/Windows")) / "Fonts")
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                if name.lower().endswith(FONT_SUFFIXES):
                    yield Path(folder) / name
