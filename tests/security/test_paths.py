"""Issue 10, item 2: image references that resolve outside the data folder are refused.

``../..``, absolute paths, ``@images/../..`` (MUSE) and symbolic links leading out must
never be read or uploaded: each becomes one error sample naming ``file:line`` and the
reference, the rest of the run goes on, and ``--allow-outside-paths`` (the process policy
of :mod:`heritage_eval.core.paths`) lets them through, recorded in provenance.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from heritage_eval.benchmarks.ancient_bench.loader import load_release
from heritage_eval.benchmarks.muse.questions import (
    OptionRecord,
    Question,
    QuestionFileHeader,
    QuestionTurn,
    resolve_image_path,
    write_questions,
)
from heritage_eval.benchmarks.muse.run import load_question_set, missing_image
from heritage_eval.cli.main import main
from heritage_eval.core.paths import (
    ALLOW_ENV,
    PathOutsideRoot,
    outside_allowed,
    resolve_inside,
    set_outside_allowed,
)
from heritage_eval.core.provenance import provenance
from tests.fake_server import chat_reply, fake_openai_server


@pytest.fixture(autouse=True)
def _default_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_ENV, raising=False)
    set_outside_allowed(None)


def _png(path: Path, color: tuple[int, int, int] = (0, 0, 0)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), color).save(path)
    return path


def test_resolve_inside_refuses_every_way_out(tmp_path: Path) -> None:
    # guards against: a reference escaping its root by .., an absolute path or a symlink
    root = tmp_path / "release"
    _png(root / "stele" / "a.png")
    secret = _png(tmp_path / "secret.png")
    (root / "stele" / "link.png").symlink_to(secret)
    (root / "stele" / "inner.png").symlink_to(root / "stele" / "a.png")
    # inside: returned as joined (not resolved), so records keep the layout's names
    assert resolve_inside(root, "a.png", base=root / "stele") == root / "stele" / "a.png"
    assert resolve_inside(root, "../stele/a.png", base=root / "stele") == \
        root / "stele" / ".." / "stele" / "a.png"
    assert resolve_inside(root, "inner.png", base=root / "stele") == root / "stele" / "inner.png"
    for ref in ("../../secret.png", str(secret), "link.png", "../../missing.png"):
        with pytest.raises(PathOutsideRoot) as exc:
            resolve_inside(root, ref, base=root / "stele")
        assert exc.value.reference == ref and exc.value.roots == (root.resolve(),)
        assert f"image reference {ref!r} resolves outside the data folder {root.resolve()}" \
            in str(exc.value) and "--allow-outside-paths" in str(exc.value)
    assert exc.value.resolved == (tmp_path / "missing.png").resolve()
    # several roots: inside any of them is enough
    assert resolve_inside([root, tmp_path], str(secret)) == secret
    # explicitly allowed: as given, unchecked
    assert resolve_inside(root, "../../secret.png", True, base=root / "stele") == \
        root / "stele" / ".." / ".." / "secret.png"


def test_policy_from_option_and_environment(monkeypatch: pytest.MonkeyPatch,
                                            tmp_path: Path) -> None:
    # guards against: the allowance being implicit or unrecorded
    assert outside_allowed() is False and provenance()["allow_outside_paths"] is False
    monkeypatch.setenv(ALLOW_ENV, "1")
    assert outside_allowed() is True and provenance()["allow_outside_paths"] is True
    assert resolve_inside(tmp_path / "r", "/etc/hostname") == Path("/etc/hostname")
    set_outside_allowed(False)  # the option wins over the environment
    assert outside_allowed() is False


def _release(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "release"
    _png(root / "stele" / "good.png")
    secret = _png(tmp_path / "outside" / "secret.png", (255, 0, 0))
    (root / "stele" / "link.png").symlink_to(secret)
    lines = [{"image": "good.png", "human_gt": "天地"},
             {"image": "../../outside/secret.png", "human_gt": "玄黃"},
             {"image": str(secret), "human_gt": "宇宙"},
             {"image": "link.png", "human_gt": "洪荒"}]
    (root / "stele" / "conv.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return root, secret


def test_ancient_bench_refuses_outside_references_per_line(tmp_path: Path) -> None:
    # guards against: Ancient-Bench reading ../.., absolute and symlinked images
    root, secret = _release(tmp_path)
    conv = root / "stele" / "conv.jsonl"
    samples = load_release(root).samples
    assert [s.load_error is None for s in samples] == [True, False, False, False]
    for lineno, sample in enumerate(samples[1:], start=2):
        ref = sample.metadata["image_name"]
        assert sample.load_error == (
            f"{conv}:{lineno}: image reference {ref!r} resolves outside the data folder "
            f"{root.resolve()} (to {secret.resolve()}); refused — pass "
            "--allow-outside-paths to allow references outside the data folder")
    # allowed explicitly: all four load (the three references find the outside file)
    set_outside_allowed(True)
    assert [s.load_error for s in load_release(root).samples] == [None] * 4


def test_ancient_bench_run_never_uploads_the_outside_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: the outside file being sent to the model; the run goes on
    root, _ = _release(tmp_path)
    with fake_openai_server() as srv:
        srv.responder = lambda body: chat_reply("天地")
        rc = main(["run", "ancient-bench", "--data", str(root), "--model", "openai:vlm",
                   "--base-url", srv.base_url, "--retries", "0",
                   "--out", str(tmp_path / "run")])
        assert len(srv.requests) == 1  # only good.png was sent
    assert rc == 0
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").open()]
    assert [r["state"] for r in rows] == ["scored", "error", "error", "error"]
    assert all("resolves outside the data folder" in r["error"] for r in rows[1:])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text("utf-8"))
    assert summary["provenance"]["allow_outside_paths"] is False


def _muse_file(tmp_path: Path) -> tuple[Path, Path]:
    bench = tmp_path / "bench"
    images = tmp_path / "art"
    _png(images / "a.png")
    _png(tmp_path / "secret.png", (255, 0, 0))
    (images / "link.png").symlink_to(tmp_path / "secret.png")
    header = QuestionFileHeader(generator_version="t", seed=0, tasks=["scene_classification"],
                                source={"images_dir_relative": "../art",
                                        "images_dir_absolute": str(images)})
    opts = [OptionRecord(label="A", text="x", distractor_type="correct"),
            OptionRecord(label="B", text="y", distractor_type="distractor")]

    def q(n: int, ref: str, option_image: str | None = None) -> Question:
        options = [o.model_copy(update={"image": option_image}) for o in opts]
        return Question(id=f"a:scene_classification:{n}", image_id="a", turns=[QuestionTurn(
            task="scene_classification", images=[ref], tag="option", prompt="SCENE?",
            answer_format="choice", options=options, answer="A")])
    qfile = bench / "q.jsonl"
    bench.mkdir()
    write_questions(qfile, header, [
        q(0, "@images/a.png"), q(1, "@images/../secret.png"), q(2, str(tmp_path / "secret.png")),
        q(3, "@images/link.png"), q(4, "@images/a.png", option_image="../secret.png")])
    return qfile, images


def test_muse_refuses_outside_references(tmp_path: Path) -> None:
    # guards against: MUSE reading @images/../.., absolute, symlinked and asset paths out
    qfile, images = _muse_file(tmp_path)
    qs = load_question_set(qfile)
    reasons = [missing_image(q, qs) for q in qs.questions]
    assert reasons[0] is None
    outside = (tmp_path / "secret.png").resolve()
    refs = ["../secret.png", str(tmp_path / "secret.png"), "link.png", "../secret.png"]
    roots = [images.resolve(), qfile.parent.resolve(), images.resolve(), qfile.parent.resolve()]
    for reason, ref, root in zip(reasons[1:], refs, roots, strict=True):
        assert reason == (f"turn 0: image reference {ref!r} resolves outside the data folder "
                          f"{root} (to {outside}); refused — pass --allow-outside-paths to "
                          "allow references outside the data folder")
    # the same with --images DIR: that folder is the root of @images/ references
    qs_pinned = load_question_set(qfile, images_dir=images)
    assert [missing_image(q, qs_pinned) is None for q in qs_pinned.questions] == [
        True, False, False, False, False]
    # allowed explicitly: every image is found
    assert [missing_image(q, qs, allow_outside=True) for q in qs.questions] == [None] * 5
    # without check=True the lookup is unchanged (records name where the file is)
    assert resolve_image_path(qfile, qs.header, "@images/../secret.png") == \
        qfile.parent / ".." / "art" / ".." / "secret.png"


def test_muse_run_reports_the_line_and_goes_on(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    # guards against: one bad reference stopping the run or passing silently
    qfile, _ = _muse_file(tmp_path)
    rc = main(["run", "muse", "--questions", str(qfile), "--model", "baseline:random",
               "--out", str(tmp_path / "run")])
    assert rc == 0
    rows = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").open()]
    errors = {r["id"].split(":")[2].split("#")[0]: r["error"] for r in rows
              if r["state"] == "error"}
    assert sorted(errors) == ["1", "2", "3", "4"]
    for n, error in errors.items():  # the question file's line: header is line 1
        assert error.startswith(f"{qfile}:{int(n) + 2}: turn 0: image reference ")
        assert "resolves outside the data folder" in error
