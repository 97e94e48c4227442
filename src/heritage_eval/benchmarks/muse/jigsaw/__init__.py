"""Jigsaw puzzle geometry (:mod:`.shapes`) and piece cutting / distractors (:mod:`.pieces`)."""
