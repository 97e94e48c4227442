"""MUSE: multi-modal understanding of artistic images in situated education.

Annotation-first benchmark: each artwork is annotated once (:mod:`.annotation`), imported
from Label Studio (:mod:`.labelstudio`), and every task's questions are generated from the
annotation by rules (:mod:`.generate`, one module per task in :mod:`.generators`) into a
versioned question file (:mod:`.questions`).
"""
