"""Odd option values are refused up front, on every command (issue 22, item 8).

The rules: README "Option values" and ``core/option_checks.py`` (numbers), ``models/
endpoints.py:endpoint_root`` (endpoint URLs). Checked with generated values against an
independent reference (``decimal.Decimal`` for numbers, ``urllib.parse`` for URLs), and
over every command ``heritage-eval list`` names: a bad value is exit 2 with a message
naming the option, never a traceback and never another status.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
from decimal import Decimal, InvalidOperation
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from heritage_eval.cli.main import build_parser, main
from heritage_eval.core import option_checks as checks
from heritage_eval.core.option_checks import NumberRange, OptionValueError, parse_number
from heritage_eval.models.endpoints import EndpointError, endpoint_root, endpoint_url

RULES = [checks.TIMEOUT_S, checks.RETRIES, checks.CONCURRENCY, checks.TEMPERATURE,
         checks.MAX_TOKENS, checks.MAX_SIDE, checks.COUNT, checks.BACKOFF_S, checks.SEED,
         NumberRange(integer=False, low=0), NumberRange(integer=True)]


def _reference(text: str, rule: NumberRange) -> int | float | None:
    """What the rule should return for ``text``, by Decimal arithmetic (None: refused)."""
    if not text.isascii() or "_" in text:
        return None
    raw = text.strip()
    try:
        d = Decimal(raw)
    except InvalidOperation:
        return None
    if not d.is_finite():
        return None
    if rule.integer:
        if not raw.lstrip("+-").isdigit() or len(raw.lstrip("+-")) > checks.MAX_DIGITS:
            return None
        value: int | float = int(d)
    else:
        value = float(d)  # may overflow to inf: not finite, refused
        if not math.isfinite(value):
            return None
    low, high = rule.low, rule.high
    if low is not None and (value <= low if rule.low_open else value < low):
        return None
    if high is not None and value > high:
        return None
    return value


NUMBER_TEXT = st.one_of(
    st.sampled_from(["inf", "-inf", "+inf", "nan", "NaN", "Infinity", "1e999", "-1e999",
                     "0", "-0", "0.0", "-1", "1", "2", "2.5", "1e3", "8.0", "", " ", "abc",
                     "1_000", "0x10", "9" * 40, "1" * 31, "86400", "86400.0001", "2.0000001",
                     "4096", "4097", "100", "101", "٣"]),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet="0123456789+-.eE_ infa", max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(text=NUMBER_TEXT, rule=st.sampled_from(RULES))
def test_parse_number_matches_a_decimal_reference(text: str, rule: NumberRange) -> None:
    expected = _reference(text, rule)
    try:
        got = parse_number(text, rule)
    except OptionValueError as exc:
        assert expected is None, f"{text!r} refused under {rule}: {exc}"
        assert "must be" in str(exc)  # the message says what is accepted
        return
    assert expected is not None, f"{text!r} accepted under {rule} as {got!r}"
    assert got == expected and isinstance(got, int if rule.integer else float)
    assert math.isfinite(got)


def test_booleans_and_fractional_numbers_are_not_integers() -> None:
    for value in (True, False, 2.5, "2.5", "1e3"):
        with pytest.raises(OptionValueError):
            parse_number(value, checks.COUNT)
    assert parse_number(3.0, checks.COUNT) == 3  # a whole float from a config file


# -- every command ---------------------------------------------------------------------


def _commands() -> list[tuple[list[str], argparse.ArgumentParser]]:
    out: list[tuple[list[str], argparse.ArgumentParser]] = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and words:
            out.append((words, parser))
        for action in subs:
            for name, sub in action.choices.items():
                walk(sub, [*words, name])

    walk(build_parser(), [])
    return out


COMMANDS = _commands()


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return int(code or 0), err.getvalue()


def test_the_sweep_sees_every_listed_command() -> None:
    names = {" ".join(w) for w, _ in COMMANDS}
    # hand-picked from `heritage-eval list`: one per group
    assert {"run ancient-bench", "score ancient-bench", "hcsu canonicalize", "ingest iiif",
            "muse generate", "paper ab-table3", "export hf", "compare", "view",
            "validate muse", "stats hcsu", "prompts dump"} <= names
    assert len(COMMANDS) >= 40


def _valued_options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and a.nargs != 0
            and not isinstance(a, argparse._HelpAction | argparse._VersionAction)]


def test_no_numeric_option_bypasses_the_one_rule() -> None:
    raw = [f"{' '.join(w)} {a.option_strings[0]}" for w, p in COMMANDS
           for a in _valued_options(p) if a.type in (int, float)]
    assert not raw, f"numeric options read with bare int/float (inf, nan pass): {raw}"


BAD_NUMBERS = ["inf", "-inf", "nan", "1e999", "-5", "0", "99999999999999999999", "abc"]


@pytest.mark.parametrize("words", [w for w, _ in COMMANDS], ids=" ".join)
def test_bad_numbers_are_usage_errors_naming_the_option(words: list[str]) -> None:
    parser = dict((tuple(w), p) for w, p in COMMANDS)[tuple(words)]
    checked = 0
    for action in _valued_options(parser):
        rule = getattr(action.type, "rule", None)
        if rule is None:
            continue
        opt = action.option_strings[-1]
        for value in BAD_NUMBERS:
            if _reference(value, rule) is not None:
                continue  # in range for this option (e.g. 0 for --retries)
            code, err = _run([*words, f"{opt}={value}"])
            assert code == 2, f"{' '.join(words)} {opt}={value}: exit {code}\n{err}"
            assert f"argument {opt}" in err and ("must be" in err or "not a" in err), err
            assert "Traceback" not in err
            checked += 1
    if any(getattr(a.type, "rule", None) for a in _valued_options(parser)):
        assert checked > 0


@pytest.mark.parametrize("words", [w for w, _ in COMMANDS], ids=" ".join)
def test_other_valued_options_refuse_inf_and_nan(words: list[str]) -> None:
    """Options with their own types (grids, fractions, factors, lists of K …) refuse the
    non-finite values too."""
    parser = dict((tuple(w), p) for w, p in COMMANDS)[tuple(words)]
    for action in _valued_options(parser):
        if action.type in (None, str) or getattr(action.type, "rule", None) is not None \
                or getattr(action.type, "__name__", "") in ("Path", "PosixPath", "cache_path"):
            continue
        opt = action.option_strings[-1]
        for value in ("inf", "nan", "-inf"):
            code, err = _run([*words, f"{opt}={value}"])
            assert code == 2 and f"argument {opt}" in err, \
                f"{' '.join(words)} {opt}={value}: exit {code}\n{err}"
            assert "Traceback" not in err


def _with_required(words: list[str], base: Path) -> list[str]:
    """``words`` plus every required option and positional (harmless paths under
    ``base``), so that the value under test is the only problem of the command line."""
    parser = dict((tuple(w), p) for w, p in COMMANDS)[tuple(words)]
    argv = list(words)
    for action in parser._actions:
        if action.required and action.option_strings:
            argv += [action.option_strings[0], str(base / action.dest)]
        elif not action.option_strings and action.dest != "help" \
                and not isinstance(action, argparse._SubParsersAction):
            n = action.nargs if isinstance(action.nargs, int) else 1
            value = str(next(iter(action.choices))) if action.choices else str(base / action.dest)
            argv += [value] * n
    return argv


@pytest.mark.parametrize("words", [w for w, _ in COMMANDS], ids=" ".join)
def test_an_unknown_option_is_exit_2_without_traceback(words: list[str],
                                                       tmp_path: Path) -> None:
    code, err = _run([*_with_required(words, tmp_path), "--no-such-option-xyz"])
    assert code == 2 and "--no-such-option-xyz" in err and "Traceback" not in err
    assert not any(tmp_path.iterdir())  # nothing written


MODEL_COMMANDS = [w for w, p in COMMANDS
                  if any("--model-option" in a.option_strings for a in p._actions)]


@pytest.mark.parametrize("words", MODEL_COMMANDS, ids=" ".join)
def test_a_malformed_model_option_is_exit_2(words: list[str], tmp_path: Path) -> None:
    # was `raise SystemExit("error: …")`: status 1, which means "nothing answered"
    argv = [*_with_required([w for w in words], tmp_path), "--model", "openai:x",
            "--base-url", "http://127.0.0.1:9/v1", "--model-option", "novalue"]
    code, err = _run(argv)
    assert code == 2 and "Traceback" not in err, err
    assert "--model-option" in err or "error:" in err


# -- endpoint URLs -----------------------------------------------------------------------

HOSTS = st.sampled_from(["localhost", "127.0.0.1", "example.org", "[::1]", "gpu-3.lan"])
PORTS = st.sampled_from(["", ":8000", ":1", ":65535"])
SEGMENTS = st.lists(st.sampled_from(["v1", "api", "openai", "", "x-y", "%7Euser"]),
                    max_size=4)


@settings(max_examples=200, deadline=None)
@given(scheme=st.sampled_from(["http", "https", "HTTP"]), host=HOSTS, port=PORTS,
       segs=SEGMENTS, slashes=st.integers(0, 3),
       user=st.sampled_from(["", "user:pass@", "k@"]))
def test_endpoint_roots_normalise_paths_and_drop_credentials(
        scheme: str, host: str, port: str, segs: list[str], slashes: int, user: str) -> None:
    url = f"{scheme}://{user}{host}{port}/" + "/".join(segs) + "/" * slashes
    root = endpoint_root(url)
    parts, given_parts = urlsplit(root), urlsplit(url)  # reference: urllib's reading
    assert parts.scheme == scheme.lower()
    assert parts.hostname == given_parts.hostname and parts.port == given_parts.port
    assert "@" not in root and "pass" not in root
    assert parts.path == "".join(f"/{s}" for s in segs if s)  # '//' -> '/', no trailing '/'
    assert endpoint_root(root) == root  # a root is its own root
    assert endpoint_root(root + "/") == root


@settings(max_examples=200, deadline=None)
@given(base=st.sampled_from(["http://h:8000/v1", "https://api.x.org", "http://h//v1/"]),
       query=st.sampled_from(["api-version=2024-02-01", "key=SECRETVALUE1", "a=1&b=2/3", ""]),
       path=st.sampled_from(["/chat/completions", "/models", "models"]))
def test_a_query_is_kept_after_every_joined_path(base: str, query: str, path: str) -> None:
    root = endpoint_root(f"{base}?{query}")
    url = endpoint_url(root, path)
    parts = urlsplit(url)  # reference: urllib's reading of the joined URL
    assert parts.query == query
    assert parts.path == urlsplit(endpoint_root(base)).path + "/" + path.lstrip("/")


@settings(max_examples=100, deadline=None)
@given(base=st.sampled_from(["http://h:8000/v1", "https://api.x.org", "http://h/v1/?a=1"]),
       tail=st.sampled_from(["", "SECRETVALUE1", "key=SECRETVALUE1"]))
def test_a_fragment_is_refused_without_echoing_it(base: str, tail: str) -> None:
    with pytest.raises(EndpointError) as info:
        endpoint_root(f"{base}#{tail}")
    assert "--api-key-env" in str(info.value) and "SECRETVALUE1" not in str(info.value)


@pytest.mark.parametrize("url", ["ftp://h/v1", "h:8000/v1", "http://", "http://h:99999/v1",
                                 "http://h:0/v1", "file:///v1", "", "   "])
def test_other_non_endpoint_urls_are_refused(url: str) -> None:
    with pytest.raises(EndpointError):
        endpoint_root(url)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/v1#SECRETVALUE1", "ftp://h/v1",
                                 "http://127.0.0.1:99999/v1"])
def test_cli_refuses_a_bad_base_url_as_usage_error(url: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    code, err = _run(["run", "ancient-bench", "--data", "data/demo/ancient_bench",
                      "--model", "openai:x", "--base-url", url, "--out", str(out)])
    assert code == 2 and "argument --base-url" in err and "Traceback" not in err
    assert "SECRETVALUE1" not in err and not out.exists()


def test_a_query_in_base_url_reaches_the_server_after_the_path(tmp_path: Path) -> None:
    # was: '…/v1?api-version=X/models', a URL no server routes
    from tests.fake_server import chat_reply, fake_openai_server

    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("<res>x</res>")
        code, err = _run(["run", "ancient-bench", "--data", "data/demo/ancient_bench",
                          "--model", "openai:x", "--base-url",
                          srv.base_url + "//?api-version=2024-02-01", "--limit", "1",
                          "--out", str(tmp_path / "run")])
        assert srv.gets and all(g == "/v1/models?api-version=2024-02-01" for g in srv.gets)
    assert code == 0, err


def test_cli_urls_file_lines_follow_the_same_rule(tmp_path: Path) -> None:
    urls = tmp_path / "urls.txt"
    urls.write_text("http://127.0.0.1:9/v1\nftp://127.0.0.1:10/v1\n")
    out = tmp_path / "run"
    code, err = _run(["run", "ancient-bench", "--data", "data/demo/ancient_bench",
                      "--model", "openai:x", "--base-urls-file", str(urls), "--out", str(out)])
    assert code == 2 and f"{urls}:2" in err
