"""One question generator module per MUSE task (tasks 1–4 also compose the affective
dialogue in :mod:`.affective`). ``SINGLE_TASK`` maps task id → generator of tasks 5–12."""
