"""Validators of benchmark collections before they become ground truth.

``heritage-eval validate ancient-bench | hcsu | muse`` (:mod:`.cli`): one module per
benchmark (:mod:`.ancient_bench`, :mod:`.hcsu`, :mod:`.muse`), shared findings and
report (:mod:`.report`), image decoding and perceptual-hash duplicates
(:mod:`.imagecheck`), the Ancient-Bench annotation standard (:mod:`.transcription`) and
line numbers inside JSON files (:mod:`.jsonpos`).
"""
