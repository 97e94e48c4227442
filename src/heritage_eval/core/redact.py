"""Process-wide secret redaction: no key, password or URL credential reaches a file or stderr.

One :class:`Redactor` per process (:data:`REDACTOR`) knows every secret in use and
replaces it with ``***`` (:data:`MASK`) in any text:

- **values** of the API-key environment variables named by ``--api-key-env``,
  ``--judge-api-key-env`` and ``--embedder-api-key-env`` (registered by
  :func:`register_options`), of ``OPENAI_API_KEY``, and of every environment variable
  whose name ends in ``API_KEY``, ``APIKEY``, ``_KEY``, ``TOKEN``, ``SECRET``, ``PASSWORD``
  or ``PASSWD`` (read at each call, so a key set later is covered too);
- **zip passwords** (``--zip-password``, and the value of ``--zip-password-env``);
- **URL credentials**, wherever a URL appears: ``scheme://user:KEY@host`` becomes
  ``scheme://***@host``, and the values of key-like query parameters (``key``,
  ``api_key``, ``apikey``, ``token``, ``access_token``, ``auth``, ``password``, ``secret``,
  ``sig``, ``signature``) become ``***``; the credentials of URLs given as options are
  also registered as literal secrets, so a server echoing them elsewhere is covered;
- **header-shaped text**: ``Authorization: Bearer …`` / ``Basic …``, ``x-api-key: …``
  and ``sk-…`` keys; outside a header, ``Bearer`` / ``Basic`` (any case) before a
  credential-shaped value (:func:`_token_like`), so the words after "basic" in a model's
  answer stay as written.

A literal secret shorter than :data:`MIN_SECRET_CHARS` (6) characters is not replaced in
free text (it would corrupt unrelated text and numbers); it is still masked where its
context shows it (URL credentials, query values, headers, the command line). The
mechanism is applied where text leaves the process: every run-folder file
(:func:`heritage_eval.core.store.atomic_write_text`), stdout/stderr of the CLI
(:class:`RedactingStream`), log records (:class:`RedactingFilter`) and the provenance
block (:mod:`heritage_eval.core.provenance`).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

MASK = "***"
#: Shortest literal secret replaced wherever it occurs, characters.
MIN_SECRET_CHARS = 6
#: Environment variables whose values are always secrets (when set).
DEFAULT_KEY_ENVS = ("OPENAI_API_KEY",)
#: Option names (``argparse`` dests) naming an environment variable that holds a secret.
KEY_ENV_OPTIONS = ("api_key_env", "judge_api_key_env", "embedder_api_key_env",
                   "zip_password_env")
#: Option names whose value is itself a secret.
SECRET_OPTIONS = ("zip_password",)
#: Command-line flags whose next value (or ``=value``) is masked in the recorded command.
SECRET_FLAGS = ("--zip-password",)

_SECRET_ENV_NAME = re.compile(r"(API_?KEY|(^|_)KEY|TOKEN|SECRET|PASSWORD|PASSWD)$", re.I)
_URL_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)"
                           r"(?P<userinfo>[^/\s@?#\"'<>\\]+)@")
_QUERY_KEYS = r"key|api[_-]?key|apikey|token|access[_-]?token|auth|password|secret|sig|signature"
_QUERY_VALUE = re.compile(rf"(?P<lead>[?&;](?:{_QUERY_KEYS})=)"
                          r"(?P<value>[^&#;,)\s\"'<>\\]+)", re.I)
_AUTH_HEADER = re.compile(r"(?P<lead>\b(?:authorization|proxy-authorization|x-api-key|api-key)"
                          r"\\?\"?'?\s*[:=]\s*\\?\"?'?\s*)"
                          r"(?P<scheme>(?:bearer|basic|token)\s+)?(?P<value>[^\s\"',;}\\]+)",
                          re.I)
_BEARER = re.compile(r"\b(?P<scheme>bearer|basic)\s+"
                     r"(?P<value>[A-Za-z0-9._~+/=-]{15,}[A-Za-z0-9_~+/=-])", re.I)
#: A ``Bearer`` / ``Basic`` value outside a header counts as a credential only when it
#: looks like one (:func:`_token_like`); a key the run knows is masked wherever it
#: occurs, whatever its shape. A sentence's final ``.`` is never part of the value.
_HEX_RUN = re.compile(r"(?=[0-9a-fA-F]*[0-9])(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{16,}")
_TOKEN_SYMBOL = re.compile(r"[_+=~]")
_PIECE_SEP = re.compile(r"[-/.]")


def _token_like(value: str) -> bool:
    """Whether a value of 16+ token characters after ``Bearer`` / ``Basic`` in free
    text is a credential: one of its pieces (split at ``-``, ``/`` and ``.``) holds a
    digit and a letter and either letters of both cases or one of ``_+=~`` (API keys,
    base64 ``user:password``, JWTs, opaque tokens), or it holds a run of 16+ hexadecimal
    digits mixing digits and letters. Words as a model writes them are not:
    ``proportions/composition``, ``17th-century-merchant``, ``iPhone-15-photographed``,
    ``McDonaldsRestaurantSign``, ``brushwork_techniques``, ``1234567890123456``
    (tests/security/test_redaction_words.py)."""
    if _HEX_RUN.search(value):
        return True
    for piece in _PIECE_SEP.split(value):
        if not any("0" <= c <= "9" for c in piece):
            continue
        lower = any("a" <= c <= "z" for c in piece)
        upper = any("A" <= c <= "Z" for c in piece)
        if (lower and upper) or ((lower or upper) and _TOKEN_SYMBOL.search(piece)):
            return True
    return False


def _mask_token(match: re.Match[str]) -> str:
    """The replacement of one :data:`_BEARER` match: the scheme and :data:`MASK` when
    the value is a credential (:func:`_token_like`), the match unchanged otherwise."""
    if not _token_like(match.group("value")):
        return match.group(0)
    return match.group("scheme") + " " + MASK


def _line_safe(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` with every ``\\s`` outside a character class made ``[^\\S\\n]``
    (whitespace but a line break): on lines joined by ``\\n`` it finds exactly the
    matches the original finds in each line alone (no other part of these patterns can
    match a line break)."""
    out, in_class, i, src = [], False, 0, pattern.pattern
    while i < len(src):
        ch = src[i]
        if ch == "\\":
            pair = src[i:i + 2]
            out.append("[^\\S\\n]" if pair == "\\s" and not in_class else pair)
            i += 2
            continue
        in_class = True if ch == "[" else (False if ch == "]" else in_class)
        out.append(ch)
        i += 1
    return re.compile("".join(out), pattern.flags)


#: The last letter of every key of ``_QUERY_KEYS`` (key, token, auth, password, secret,
#: sig, signature), both cases; no other character matches them under ``re.I``.
_QUERY_KEY_ENDS = frozenset("ynhdtgeYNHDTGE")


def _may_hold_query_key(text: str) -> bool:
    """Whether some ``=`` in ``text`` follows a letter a query key ends with: a
    necessary condition for a ``_QUERY_VALUE`` match, checked without a regex scan (most
    text has a few ``=`` and no query key)."""
    i = text.find("=")
    while i != -1:
        if i and text[i - 1] in _QUERY_KEY_ENDS:
            return True
        i = text.find("=", i + 1)
    return False


#: KELVIN SIGN: the one character outside ASCII whose ``str.lower()`` is an ASCII letter
#: (``"k"``) that can stand in a word :func:`_header_anchors` looks for.
_KELVIN = "\u212a"


def _header_anchors(text: str) -> tuple[bool, bool]:
    """``("authorization" in low or "api-key" in low, "bearer" in low or "basic" in
    low)`` for ``low = text.lower()``, exactly, at about half the cost on long text
    holding non-ASCII characters (a ``samples.jsonl`` chunk with Chinese answers).

    Why the UTF-8 bytes lowered give the same answers: every needle is ASCII; ASCII
    characters encode as themselves and every other character as bytes >= 0x80, which
    no needle holds; ``bytes.lower`` lowers exactly the ASCII letters. In
    ``str.lower`` only two characters outside ASCII give an ASCII letter (checked over
    every code point, ``tests/core/test_redact_fast.py``): U+0130 gives ``"i"`` followed
    by U+0307, and no needle ends in ``i``, so it never completes a match; U+212A
    (KELVIN SIGN) gives ``"k"``, so text holding it takes the ``str.lower`` way. Lone
    surrogates encode (``surrogatepass``) as bytes >= 0x80 too."""
    if _KELVIN in text:
        low = text.lower()
        return ("authorization" in low or "api-key" in low,
                "bearer" in low or "basic" in low)
    raw = text.encode("utf-8", "surrogatepass").lower()
    return (b"authorization" in raw or b"api-key" in raw,
            b"bearer" in raw or b"basic" in raw)


#: The patterns as applied to whole-line chunks (:meth:`Redactor.redact_lines`).
_LINE_SAFE = {p.pattern: _line_safe(p) for p in (_AUTH_HEADER, _BEARER)}
_SK_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{12,}")


class Redactor:
    """Knows the secrets of this process and removes them from text (thread-safe).

    :meth:`add_secret` / :meth:`add_env` / :meth:`add_url` register; :meth:`redact`
    applies. Registering never fails and never logs a secret.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._envs: set[str] = set(DEFAULT_KEY_ENVS)
        # (registration version, environment snapshot) -> the sorted secrets
        self._version = 0
        self._cached: tuple[tuple[int, object], list[str]] | None = None

    def add_secret(self, value: object) -> None:
        """Register a literal secret (ignored when empty or not a string)."""
        if isinstance(value, str) and value.strip():
            with self._lock:
                self._secrets.add(value)
                decoded = unquote(value)
                if decoded != value:
                    self._secrets.add(decoded)
                self._version += 1

    def add_env(self, name: object) -> None:
        """Register an environment variable whose value (read at each call) is secret."""
        if isinstance(name, str) and name:
            with self._lock:
                self._envs.add(name)
                self._version += 1

    def add_url(self, url: object) -> None:
        """Register the user-info (user and password) and key-like query values of
        ``url`` as literal secrets. Unparsable URLs are ignored."""
        if not isinstance(url, str) or "://" not in url:
            return
        try:
            parts = urlsplit(url.strip())
        except ValueError:
            return
        if "@" in parts.netloc:
            userinfo = parts.netloc.rsplit("@", 1)[0]
            self.add_secret(userinfo)
            for piece in userinfo.split(":", 1):
                self.add_secret(piece)
        for m in _QUERY_VALUE.finditer("?" + parts.query if parts.query else ""):
            self.add_secret(m.group("value"))

    def secrets(self) -> list[str]:
        """Every literal secret known now (registered values and the values of secret
        environment variables), longest first, each at least :data:`MIN_SECRET_CHARS`.
        Recomputed only when a secret is registered or the environment changes."""
        raw = getattr(os.environ, "_data", None)  # the undecoded mapping: cheap to compare
        snapshot: object = tuple(raw.items()) if isinstance(raw, dict) else tuple(
            os.environ.items())
        with self._lock:
            state = (self._version, snapshot)
            if self._cached is not None and self._cached[0] == state:
                return self._cached[1]
            found = set(self._secrets)
            envs = set(self._envs)
        for name, value in os.environ.items():
            if name in envs or _SECRET_ENV_NAME.search(name):
                found.add(value)
        result = sorted((s for s in found if len(s.strip()) >= MIN_SECRET_CHARS),
                        key=lambda s: (-len(s), s))
        with self._lock:
            self._cached = (state, result)
        return result

    def redact(self, text: str) -> str:
        """``text`` with every known secret and every credential-shaped span replaced
        by :data:`MASK` (see the module docstring). Non-strings are returned as is."""
        if not isinstance(text, str) or not text:
            return text
        return self._apply(text, self.secrets(), _AUTH_HEADER, _BEARER)

    def redact_lines(self, lines: list[str]) -> str:
        """``"".join(redact(line) + "\\n" for line in lines)``, computed in one pass over
        the joined chunk (one secrets look-up, one scan per pattern): the same text, as
        no pattern can match across a line break. Falls back to line by line when a
        line or a known secret itself holds a line break."""
        secrets = self.secrets()
        if any("\n" in s for s in secrets) or any("\n" in line for line in lines):
            return "".join(self.redact(line) + "\n" for line in lines)
        if not lines:
            return ""
        text = "\n".join(lines) + "\n"
        return self._apply(text, secrets, _LINE_SAFE[_AUTH_HEADER.pattern],
                           _LINE_SAFE[_BEARER.pattern])

    @staticmethod
    def _apply(text: str, secrets: list[str], auth_header: re.Pattern[str],
               bearer: re.Pattern[str]) -> str:
        for secret in secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        # each pattern only where its anchor occurs (most text has none: fast path);
        # "@" first: a one-character search is many times faster than "://"
        if "@" in text and "://" in text:
            text = _URL_USERINFO.sub(lambda m: m.group("scheme") + MASK + "@", text)
        if "=" in text and _may_hold_query_key(text):
            text = _QUERY_VALUE.sub(lambda m: m.group("lead") + MASK, text)
        header, scheme = _header_anchors(text)
        if header:
            text = auth_header.sub(
                lambda m: m.group("lead") + (m.group("scheme") or "") + MASK, text)
        if scheme:
            text = bearer.sub(_mask_token, text)
        if "sk-" in text:
            text = _SK_KEY.sub("sk-" + MASK, text)
        return text

    def clear(self) -> None:
        """Forget registered secrets (tests); the default environment names stay."""
        with self._lock:
            self._secrets.clear()
            self._envs = set(DEFAULT_KEY_ENVS)
            self._version += 1


#: The process-wide redactor.
REDACTOR = Redactor()


def redact(text: str) -> str:
    """:meth:`Redactor.redact` of the process-wide :data:`REDACTOR`."""
    return REDACTOR.redact(text)


def redact_lines(lines: list[str]) -> str:
    """:meth:`Redactor.redact_lines` of the process-wide :data:`REDACTOR`."""
    return REDACTOR.redact_lines(lines)


def redact_obj(value: Any) -> Any:
    """A copy of a JSON-like value (dicts, lists, tuples, strings) with every string
    redacted; keys are redacted too; other values are returned unchanged."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k) if isinstance(k, str) else k: redact_obj(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redact_obj(v) for v in value)
    return value


def _walk_urls(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if "://" in value:
            yield value
    elif isinstance(value, list | tuple | set):
        for v in value:
            yield from _walk_urls(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _walk_urls(v)


def register_options(opts: Mapping[str, Any] | object) -> None:
    """Register every secret named by parsed options: the key environment variables
    (:data:`KEY_ENV_OPTIONS`), literal secrets (:data:`SECRET_OPTIONS`), the
    credentials of every URL-valued option, and ``$OPENAI_BASE_URL``'s. Unknown or
    missing options are skipped; calling it again adds to what is known."""
    values = dict(opts) if isinstance(opts, Mapping) else dict(vars(opts))
    for name in KEY_ENV_OPTIONS:
        REDACTOR.add_env(values.get(name))
    for name in SECRET_OPTIONS:
        REDACTOR.add_secret(values.get(name))
    for url in _walk_urls(values):
        REDACTOR.add_url(url)
    REDACTOR.add_url(os.environ.get("OPENAI_BASE_URL"))
    for item in values.get("model_option") or []:  # KEY=VALUE; extra_body JSON too
        _register_option_secrets(str(item))


_SECRET_KEY = re.compile(r"key|token|auth|secret|passw|credential|bearer", re.I)


def _register_option_secrets(item: str) -> None:
    """A ``--model-option KEY=VALUE`` whose key (or, for a JSON value, any nested key)
    looks secret (``api_key``, ``auth_token``, ``password`` …) registers its value."""
    key, _, value = item.partition("=")
    if _SECRET_KEY.search(key):
        REDACTOR.add_secret(value)
    try:
        data = json.loads(value)
    except ValueError:
        return
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, dict | list):
                    stack.append(v)
                elif _SECRET_KEY.search(str(k)) and v is not None:
                    REDACTOR.add_secret(str(v))
        elif isinstance(node, list):
            stack.extend(node)


def redact_argv(argv: Iterable[str]) -> list[str]:
    """``argv`` with the values of :data:`SECRET_FLAGS` masked (``--zip-password X`` and
    ``--zip-password=X`` both become ``… ***``), then every word redacted."""
    out: list[str] = []
    mask_next = False
    for word in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        flag, sep, _ = word.partition("=")
        if flag in SECRET_FLAGS:
            if sep:
                out.append(f"{flag}={MASK}")
            else:
                out.append(word)
                mask_next = True
            continue
        out.append(redact(word))
    return out
