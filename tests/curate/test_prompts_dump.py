"""``heritage-eval prompts dump``: the dumped file reads back through every benchmark's
``--prompts`` to exactly the built-in prompts, and an edited prompt is the one sent
(checked in the samples.jsonl of real runs on the bundled demo data)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import heritage_eval as he
from heritage_eval.benchmarks.ancient_bench.categories import MEDIA
from heritage_eval.benchmarks.ancient_bench.prompts import PromptSet, load_prompts
from heritage_eval.benchmarks.hcsu import prompts as hcsu_prompts
from heritage_eval.benchmarks.muse import prompts as muse_prompts
from heritage_eval.cli.main import main
from heritage_eval.core.benchmark import UsageError
from heritage_eval.core.prompt_templates import PromptFileError
from tests.fake_server import chat_reply, fake_openai_server

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "data" / "demo"


def dump(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "prompts.json"
    assert main(["prompts", "dump", "--out", str(out), *extra]) == 0
    return out


def samples(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "samples.jsonl").read_text().splitlines()]


def test_unchanged_round_trip_gives_the_built_in_prompts(tmp_path: Path) -> None:
    path = dump(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert list(data) == ["ancient-bench", "hcsu", "muse"]
    ab, built_in = load_prompts(path), PromptSet()
    assert ab.base == built_in.base
    assert all(ab.prompt(m) == built_in.prompt(m) for m in MEDIA)
    assert ab.hash() == built_in.hash()
    assert hcsu_prompts.TEMPLATES.load(path) == hcsu_prompts.DEFAULTS
    assert muse_prompts.TEMPLATES.load(path) == {"box_note": muse_prompts.BOX_NOTE,
                                                 "drawn_note": muse_prompts.DRAWN_NOTE}
    again = tmp_path / "again"
    again.mkdir()
    assert dump(again).read_bytes() == path.read_bytes()  # dumping is deterministic
    # --benchmark: Ancient-Bench's own flat format (base + one entry per medium folder)
    flat = dump(tmp_path / "ab", "--benchmark", "ancient-bench")
    assert json.loads(flat.read_text(encoding="utf-8")) == data["ancient-bench"]
    assert set(data["ancient-bench"]) == {"base", *MEDIA}
    assert load_prompts(flat).prompt("seals") == built_in.prompt("seals")


def test_existing_file_refused_and_bad_files_named(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    path = dump(tmp_path)
    path.write_text('{"hcsu": {"discrimination_intro": "Pick {letter}"}}')
    assert main(["prompts", "dump", "--out", str(path)]) == 2
    assert "Pick {letter}" in path.read_text()  # the edited file was kept
    with pytest.raises(PromptFileError, match=r"prompts\.json: entry 'discrimination_intro' "
                                              r"uses unknown placeholder\(s\) letter; "
                                              r"it may use first, k, last"):
        hcsu_prompts.TEMPLATES.load(path)
    path.write_text('{"muse": {"box_nte": "x"}}')
    with pytest.raises(PromptFileError, match="unknown muse template 'box_nte'"):
        muse_prompts.TEMPLATES.load(path)
    code = main(["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"), "--model",
                 "baseline:random", "--k", "5", "--limit", "1", "--prompts", str(path),
                 "--out", str(tmp_path / "run")])
    assert code == 2
    assert f"prompt file {path}: no 'hcsu' section (it has muse)" in capsys.readouterr().err


def test_edited_ancient_bench_prompt_is_sent(tmp_path: Path) -> None:
    path = dump(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["ancient-bench"]["seals"] = "EDITED: read the seal."
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    run = tmp_path / "run"
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("<res>之</res>")
        assert main(["run", "ancient-bench", "--data", str(DEMO / "ancient_bench"),
                     "--categories", "seals", "--limit", "1", "--model", "openai:fake",
                     "--base-url", srv.base_url, "--retries", "0", "--prompts", str(path),
                     "--out", str(run)]) == 0
    (row,) = samples(run)
    # the full prompt is the base rules, a blank line, then the medium addition
    assert row["turns"][0]["prompt"] == PromptSet().base + "\n\nEDITED: read the seal."


def test_edited_hcsu_prompt_is_sent_and_hashed(tmp_path: Path) -> None:
    path = dump(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["hcsu"]["system"] = "EDITED persona."
    # a template sent as written takes no placeholder: a literal brace is doubled
    data["hcsu"]["discrimination_ask"] = "EDITED: the letter only {{as written, not filled}}"
    data["hcsu"]["discrimination_intro"] = "EDITED intro, {k} candidates {first}-{last}."
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    run = tmp_path / "run"
    assert main(["run", "hcsu-discrimination", "--data", str(DEMO / "hcsu"), "--model",
                 "baseline:random", "--k", "5", "--limit", "1", "--prompts", str(path),
                 "--out", str(run)]) == 0
    rows = samples(run)
    assert rows and all(r["system"] == "EDITED persona." for r in rows)
    prompt = rows[0]["turns"][0]["prompt"]
    assert prompt.startswith("EDITED intro, 5 candidates A-E.")
    assert prompt.endswith("\nEDITED: the letter only {as written, not filled}")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["provenance"]["prompt_hash"] != hcsu_prompts.PROMPT_HASH
    assert hcsu_prompts.template("system") == hcsu_prompts.SYSTEM  # restored after the run


def test_edited_muse_template_is_written_into_the_questions(tmp_path: Path) -> None:
    path = dump(tmp_path)
    data = json.loads(path.read_text(encoding="utf-8"))
    data["muse"]["box_note"] = "EDITED: boxes are [x, y, w, h] fractions."
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    assert main(["muse", "generate", "--annotations", str(DEMO / "muse" / "annotations.json"),
                 "--images", str(DEMO / "muse"), "--out", str(questions), "--tasks",
                 "activity_localization", "--prompts", str(path), "--no-progress"]) == 0
    run = tmp_path / "run"
    assert main(["run", "muse", "--questions", str(questions), "--model", "baseline:random",
                 "--out", str(run)]) == 0
    rows = samples(run)
    assert len(rows) == 10  # 2 activities in each of the 5 demo scenes
    assert all("\n\nEDITED: boxes are [x, y, w, h] fractions.\n\n" in r["turns"][0]["prompt"]
               and muse_prompts.BOX_NOTE not in r["turns"][0]["prompt"] for r in rows)
    assert muse_prompts.template("box_note") == muse_prompts.BOX_NOTE


def test_hcsu_prompts_through_the_python_api(tmp_path: Path) -> None:
    path = tmp_path / "hcsu.json"
    path.write_text(json.dumps({"system": "API persona."}), encoding="utf-8")  # flat object
    run = he.evaluate("hcsu-discrimination", data=str(DEMO / "hcsu"), model="baseline:random",
                      k=5, limit=1, prompts=str(path), out=str(tmp_path / "run"))
    assert {r["system"] for r in samples(run.path)} == {"API persona."}
    bad = tmp_path / "bad.json"
    bad.write_text('{"sistem": "typo"}', encoding="utf-8")
    with pytest.raises(UsageError, match="unknown hcsu template 'sistem'"):
        he.evaluate("hcsu-discrimination", data=str(DEMO / "hcsu"), model="baseline:random",
                    k=5, limit=1, prompts=str(bad), out=str(tmp_path / "run2"))


@pytest.mark.parametrize(("templates", "entry", "text", "allowed"), [
    (hcsu_prompts.TEMPLATES, "discrimination_ask", "Answer with {letter} only.", "none"),
    (muse_prompts.TEMPLATES, "box_note", "Boxes are {format}.", "none"),
    (hcsu_prompts.TEMPLATES, "description_ask", "At most {max_words} words, {language}.",
     "max_words"),
])
def test_unknown_placeholder_in_any_entry_is_refused(tmp_path: Path, templates: Any,
                                                     entry: str, text: str,
                                                     allowed: str) -> None:
    # before the fix: an entry without placeholders passed '{letter}' to the model
    path = tmp_path / "p.json"
    path.write_text(json.dumps({templates.section: {entry: text}}), encoding="utf-8")
    unknown = "language" if allowed != "none" else text.split("{")[1].split("}")[0]
    with pytest.raises(PromptFileError, match=(
            rf"prompt file {path}: entry '{entry}' uses unknown placeholder\(s\) {unknown}; "
            rf"it may use {allowed} \(write a literal brace as {{{{ or }}}}\)")):
        templates.load(path)


def test_doubled_braces_are_literal_and_bad_sections_named(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"muse": {"box_note": "Boxes: {{x, y, w, h}}."}}),
                    encoding="utf-8")
    # str.format's rule: '{{' is one literal brace (the model sees one)
    assert muse_prompts.TEMPLATES.load(path) == {"box_note": "Boxes: {x, y, w, h}."}
    path.write_text(json.dumps({"muse": {"box_note": "Boxes: {x"}}), encoding="utf-8")
    with pytest.raises(PromptFileError, match=r"entry 'box_note': .*write a literal brace"):
        muse_prompts.TEMPLATES.load(path)
    # before the fix: "unknown hcsu template 'hcsu'"
    path.write_text('{"hcsu": []}', encoding="utf-8")
    with pytest.raises(PromptFileError, match=rf"prompt file {path}: section 'hcsu' must be "
                                              "a JSON object of template name -> text, not "
                                              "list"):
        hcsu_prompts.TEMPLATES.load(path)
