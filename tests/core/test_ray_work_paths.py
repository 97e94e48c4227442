"""What the driver sends to Ray nodes, without Ray: absolute file references
(core/executors/work_paths.py), a model configuration any node can read
(core/run_parts.portable_model), the cluster address rule and the connect-error sentences
(core/executors/ray_connect.py). The real-cluster checks are in test_ray_cluster.py."""

from __future__ import annotations

import importlib.util
import itertools
import os
import pickle
from collections.abc import Sequence
from pathlib import Path

import pytest

from heritage_eval.core.config import ModelConfig
from heritage_eval.core.executors import ExecutorError, ray_connect
from heritage_eval.core.executors.work_paths import portable_item
from heritage_eval.core.run_parts import endpoint_urls, portable_model
from heritage_eval.core.runner import RunItem
from heritage_eval.core.types import Conversation, ImagePart, Message

FLAGS = (None, "", "  ", " head:6379 ")
ENVS = (None, "", " env:6379")


@pytest.mark.parametrize(("flag", "env"), list(itertools.product(FLAGS, ENVS)))
def test_flag_wins_over_ray_address_env(flag: str | None, env: str | None,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if env is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", env)
    # the rule (docs/how-to/ray-cluster.md, "Connecting"): a non-blank flag, stripped;
    # else a non-blank $RAY_ADDRESS, stripped; else None (a local cluster)
    want = "head:6379" if flag and flag.strip() else "env:6379" if env and env.strip() else None
    assert ray_connect.cluster_address(flag) == want


def _second_turn(index: int, msg: Message, answers: Sequence[str]) -> Message:
    """A fill_turn that adds a relative image (module level: picklable, as Ray needs)."""
    return Message.user(msg.text() + answers[0], ImagePart(path="b.png"))


def _item() -> RunItem:
    turns = (Message.user("look", ImagePart(path="a.png"), ImagePart(path="/abs/z.png")),
             Message.user("then"))
    payload = {"target_image": "a.png", "options": ["A", "B"], "n": 3, "folder": "sub",
               "candidates": {"A": {"image": "sub/b.png", "description": "a.png, twice\n"}},
               "shots": [("a.png", "missing.png")]}
    return RunItem("s1", Conversation(system="sys", turns=turns, payload=payload,
                                      fill_turn=_second_turn))


def test_portable_item_makes_driver_files_absolute(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    for name in ("a.png", "b.png", "sub/b.png", "A"):
        (tmp_path / name).write_bytes(b"x")
    monkeypatch.chdir(tmp_path)
    item = _item()
    sent = portable_item(item)
    cwd = os.getcwd()
    turn = sent.conversation.turns[0]
    # image parts: relative joined to the driver's folder, absolute kept
    assert [p.path for p in turn.images()] == [f"{cwd}/a.png", "/abs/z.png"]
    assert sent.conversation.turns[1] == item.conversation.turns[1]  # nothing to change
    pay = sent.conversation.payload
    assert pay["target_image"] == f"{cwd}/a.png"
    assert pay["candidates"]["A"]["image"] == f"{cwd}/sub/b.png"
    # a file named "A" exists here, but a string without a suffix is never a file name
    assert pay["options"] == ["A", "B"]
    assert pay["candidates"]["A"]["description"] == "a.png, twice\n"  # text, no file
    assert pay["folder"] == "sub" and pay["n"] == 3  # a folder, a number: unchanged
    assert pay["shots"] == [(f"{cwd}/a.png", "missing.png")]  # tuples stay tuples
    filled = sent.conversation.turn(1, ["ok"])
    assert filled.text() == "thenok" and [p.path for p in filled.images()] == [f"{cwd}/b.png"]
    # the driver's own item is untouched (its cache keys and records)
    assert [p.path for p in item.conversation.turns[0].images()] == ["a.png", "/abs/z.png"]
    assert item.conversation.payload["target_image"] == "a.png"
    again = pickle.loads(pickle.dumps(sent))  # Ray pickles it
    assert again.conversation.turn(1, ["ok"]) == filled
    assert sent.conversation.system == "sys" and sent.id == "s1"


def test_portable_model_reads_urls_file_and_anchors_hf_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "urls.txt").write_text("http://h1:8000/v1\n# c\nhttp://h2:8000/v1\n")
    (tmp_path / "weights").mkdir()
    (tmp_path / "gpt").mkdir()
    model = ModelConfig(model="openai:gpt", base_url=("http://h0:8000/v1",),
                        base_urls_file=Path("urls.txt"))
    moved = portable_model(model)
    assert moved.base_urls_file is None
    assert endpoint_urls(moved) == endpoint_urls(model)  # same endpoints, same order
    assert len(moved.base_url) == 3
    assert moved.model == "openai:gpt"  # only hf: names a folder
    cwd = os.getcwd()
    assert portable_model(ModelConfig(model="hf:weights")).model == f"hf:{cwd}/weights"
    assert portable_model(ModelConfig(model="hf:nothere")).model == "hf:nothere"
    assert portable_model(ModelConfig(model="hf:/x/y")).model == "hf:/x/y"
    plain = ModelConfig(model="baseline:random")
    assert portable_model(plain) is plain


class AuthenticationError(Exception):
    """Named as Ray's (ray.exceptions.AuthenticationError): matched by name."""


@pytest.mark.parametrize(("exc", "log", "want"), [
    (ConnectionError("Failed to connect to Ray cluster at 10.0.0.1:6379"),
     "gcs_client.cc:210: Failed to get cluster ID from GCS server: Unauthenticated: RPC "
     "error: InvalidAuthToken: Authentication token is missing or incorrect",
     "authentication refused"),
    (AuthenticationError("Token authentication is enabled but no authentication token "
                         "was found"), "", "authentication refused"),
    (RuntimeError("Version mismatch: The cluster was started with:\n    Ray: 2.59.0\n"),
     "", "Version mismatch: The cluster was started with: Ray: 2.59.0 (every node"),
    (ValueError("bad\nlast line"), "", "bad last line"),
])
def test_connect_errors_say_why(exc: BaseException, log: str, want: str) -> None:
    assert ray_connect.why_refused(exc, log).startswith(want)


def test_ray_client_without_grpcio_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "grpc" else real(name, *a))
    with pytest.raises(ExecutorError, match=r"ray\[client\]==2\.60\.0"):
        ray_connect.check_client("ray://head:10001")
    ray_connect.check_client("head:6379")  # a GCS address needs no client
