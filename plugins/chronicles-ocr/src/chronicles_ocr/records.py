"""The ``samples.jsonl`` record of one image × task.

``groups``: ``script`` (id), ``task`` (id), ``group`` (``ancient`` / ``modern``).
``scores``: the task's metric (``spotting`` records also ``detection``).
``details`` (read by the viewer, the official summary and the export):
``image_path`` (as in the release), ``task_zh`` / ``script_zh`` (the official names),
``protocol``, ``official_score`` (the judge's unrounded score as ``judge.py`` writes
it; ``None`` for a record the judge never sees), ``judge`` (the judge's dict),
``extract`` (the extract used) and ``extract_source`` (``read`` / ``recorded``); per task:
``official_detection_f1`` (spotting: the judge's Detection F1, ``None`` without one),
``official_absent`` (``score``: the image has no recorded answer), ``other_protocol``
(the record judged under the other protocol: ``name``, ``state``, ``score``,
``detection``; absent when neither counts it),
``pred_boxes`` / ``ref_boxes`` (spotting, 0–1000 frame), ``target`` (recognition:
``char``, ``bbox_xyxy`` in pixels, ``index``, ``seed``), ``pred_text`` / ``ref_text``
(parsing, as compared).
"""

from __future__ import annotations

from typing import Any

from chronicles_ocr.judges import parsing_text, reference_boxes
from chronicles_ocr.loader import Sample
from chronicles_ocr.names import TASK_BY_ID
from chronicles_ocr.prompts import PROMPTS
from chronicles_ocr.protocol import PROTOCOLS, Protocol
from chronicles_ocr.redbox import Target
from chronicles_ocr.scoring_rules import (
    Judged,
    judge_answer,
    metric_names,
    official_score,
    script_zh,
)
from heritage_eval.plugin import (
    SAMPLE_SCHEMA,
    ImageRef,
    Outcome,
    Response,
    ResponseRecord,
    SampleRecord,
    TurnRecord,
    image_ref,
)


def _base(sample: Sample, model: str, bench: str, root: str, protocol: Protocol,
          turns: list[TurnRecord]) -> SampleRecord:
    task = TASK_BY_ID.get(sample.task)
    details: dict[str, Any] = {"image_path": sample.image_path,
                               "task_zh": task.zh if task else sample.task,
                               "script_zh": script_zh(sample.script),
                               "protocol": protocol.name, "official_score": None}
    if task is None:
        details["unreadable_line"] = True
    return SampleRecord(schema=SAMPLE_SCHEMA, id=sample.id, benchmark=bench, model=model,
                        groups={"script": sample.script, "task": sample.task,
                                "group": sample.group},
                        state=Outcome.ERROR, scores=dict.fromkeys(metric_names(sample.task))
                        if task else {}, turns=turns, image_root=root,
                        reference=reference_of(sample), source=sample.source,
                        details=details)


def reference_of(sample: Sample) -> Any:
    """The record's reference: the reference characters in box order (spotting; ``None``
    for a sample with a data error), the target character (recognition), the annotation
    (parsing), the script name (classification)."""
    row = sample.row
    if sample.task == "spotting":
        if sample.load_error:
            return None  # its geometry may be what is wrong
        return "".join(b["char"] or "?" for b in reference_boxes(row))
    if sample.task == "recognition":
        return sample.target.char if sample.target else None
    if sample.task == "parsing":
        return row.get("annotation")
    if sample.task == "classification":
        return row.get("font_type")
    return None


def _turn(sample: Sample, resp: Response | None, image: ImageRef | None) -> TurnRecord:
    sent = (resp.meta.get("sent_image_sizes") or [None])[0] if resp else None
    if image is not None and sent:
        image = image.model_copy(update={"sent_width": sent[0], "sent_height": sent[1]})
    return TurnRecord(prompt=PROMPTS.get(sample.task, ""),
                      response=ResponseRecord.from_response(resp),
                      images=[image] if image is not None else [])


def image_of(sample: Sample, root: str, redbox: tuple[str, str] | None
             ) -> ImageRef | None:
    """The image shown for ``sample``: the red-box copy for recognition (``redbox``:
    ``(run folder, path)``; recorded relative to the run folder), else the release
    image (relative to ``root``)."""
    if sample.task == "recognition" and redbox:
        return image_ref(redbox[1], redbox[0], role="red box")
    if not sample.image_path:
        return None
    return image_ref(f"{root}/{sample.image_path}", root, role="image")


def target_details(target: Target | None, seed: int) -> dict[str, Any] | None:
    """The recognition target as recorded (``None`` without one)."""
    if target is None:
        return None
    return {"char": target.char, "bbox_xyxy": [float(v) for v in target.box],
            "index": target.index, "seed": seed}


def _task_details(sample: Sample, judged: Judged, protocol: Protocol) -> dict[str, Any]:
    """Spotting boxes / parsing texts as compared (values of another shape skipped)."""
    out: dict[str, Any] = {}
    extract = judged.extract or {}
    if sample.task == "spotting":
        items = extract.get("items")
        out["pred_boxes"] = [{"bbox": i.get("bbox"), "char": i.get("char", "")}
                             for i in (items if isinstance(items, list) else [])
                             if isinstance(i, dict)]
        out["ref_boxes"] = reference_boxes(sample.row)
    elif sample.task == "parsing":
        text = extract.get("extracted_text")
        out["pred_text"] = parsing_text(text if isinstance(text, str) else "", protocol)
        out["ref_text"] = parsing_text(sample.row.get("annotation") or "", protocol)
    return out


def answer_of(task: str, extract: dict[str, Any] | None) -> Any:
    """The parsed answer a record shows (``None`` without an extract)."""
    if extract is None:
        return None
    if task == "spotting":
        items = extract.get("items")
        return "".join(str(i.get("char", "")) for i in
                       (items if isinstance(items, list) else []) if isinstance(i, dict))
    key = {"classification": "category", "parsing": "extracted_text",
           "recognition": "char"}[task]
    return extract.get(key)


def build_record(sample: Sample, resp: Response | None, *, model: str, bench: str,
                 root: str, protocol: Protocol, seed: int,
                 redbox: tuple[str, str] | None = None,
                 problem: str | None = None) -> SampleRecord:
    """The record of ``sample`` given the response (``None``: not sent). ``redbox``:
    ``(run folder, path)`` of the red-box image sent (its record then has no
    ``image_root``: the path is relative to the run folder). ``problem``: why nothing
    was sent although the sample loaded (the red box could not be drawn)."""
    recorded = resp.meta.get("official") if resp is not None else None
    if sample.task == "recognition" and skipped_entry(recorded):
        resp = None  # infer.py asked nothing: a record of a question never sent, as in run
    turn = _turn(sample, resp, image_of(sample, root, redbox))
    record = _base(sample, model, bench, root, protocol, [turn])
    if sample.task == "recognition" and redbox:
        record.image_root = None
    target = target_details(sample.target, seed)
    if isinstance(recorded, dict) and not recorded.get("missing"):
        target = recorded.get("target")  # replayed: the target the answer was given for
    if sample.task == "recognition":
        record.details["target"] = target
        record.reference = target["char"] if target else None
    if sample.load_error or problem:
        record.error = sample.load_error or problem
        record.details["error_kind"] = "data"
        return record
    if resp is not None and resp.text is None:
        record.error = resp.error
        record.details["error_kind"] = "model" if resp.meta.get("failure") else "api"
        if isinstance(recorded, dict) and recorded.get("absent"):
            record.details["official_absent"] = True  # not in the recorded answers
        return record
    if sample.task == "recognition" and target is None:
        why = ("no readable, non-[UNK] reference box to draw a red box around"
               if sample.target is None else "no recognition target recorded with the answer")
        return _targetless(record, protocol, other_of(protocol), why)
    if resp is None or resp.text is None:
        record.error = "not sent"
        record.details["error_kind"] = "api"
        return record
    judged = judge_answer(sample.task, resp.text, sample.row, protocol,
                          recorded=recorded if isinstance(recorded, dict) else None,
                          reference_char=record.reference)
    record.state = Outcome(judged.state)
    record.scores = judged.scores
    record.error = judged.error
    record.answer = answer_of(sample.task, judged.extract)
    record.details.update(judge=judged.judge, extract=judged.extract,
                          extract_source=judged.extract_source,
                          official_score=official_score(judged),
                          **_task_details(sample, judged, protocol))
    if sample.task == "spotting":
        inner = judged.judge.get("score")
        record.details["official_detection_f1"] = (
            inner.get("detection_f1") if isinstance(inner, dict) else None)
    other = other_of(protocol)
    alt = judge_answer(sample.task, resp.text, sample.row, other,
                       recorded=recorded if isinstance(recorded, dict) else None,
                       reference_char=record.reference)
    counted = alt.state in ("scored", "unparsed")
    record.details["other_protocol"] = {
        "name": other.name, "state": alt.state,
        "score": official_score(alt) if counted else None,
        "detection": alt.scores.get("detection") if counted else None}
    return record


def skipped_entry(recorded: Any) -> bool:
    """Whether a recorded results entry (``meta["official"]`` of a replayed answer) is
    the official skipped one — ``"skipped": true`` or ``"error": "no_referring_target"``,
    written by ``infer.py`` for an image without a recognition target, which it never
    asks. Such an entry is no answer at all (not an empty answer, so never a model
    failure): it is recorded exactly as ``run`` records an image it does not ask."""
    return isinstance(recorded, dict) and (
        recorded.get("skipped") is True or recorded.get("error") == "no_referring_target")


def other_of(protocol: Protocol) -> Protocol:
    """The protocol a record is also judged under (its result in
    ``details.other_protocol``, so every summary can show where the two differ)."""
    return PROTOCOLS["corrected" if protocol.name == "official" else "official"]


def _targetless(record: SampleRecord, protocol: Protocol, other: Protocol, why: str
                ) -> SampleRecord:
    """An ancient image without a recognition target (``why``): official, a 0 (the
    summary counts the skipped entry); corrected, not a recognition sample (an ``error``
    record)."""
    record.details["no_target"] = True
    dropped = other.drop_targetless_recognition
    record.details["other_protocol"] = {
        "name": other.name, "state": "error" if dropped else "unparsed",
        "score": None if dropped else 0.0, "detection": None}
    if protocol.drop_targetless_recognition:
        record.error = why
        record.details["error_kind"] = "data"
        return record
    record.state = Outcome.UNPARSED
    record.scores = {"recognition": 0.0}
    record.details.update(judge={"score": {"score": 0.0}, "error": "no_extract"},
                          official_score=0.0, skipped="no_referring_target")
    return record
