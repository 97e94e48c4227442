"""Declarations of the ``paper`` command group (light: imports nothing heavy).

Ancient-Bench and HCSU artefacts are declared in :mod:`.commands_ab_hcsu`, MUSE's in
:mod:`.commands_muse`.
"""

from __future__ import annotations

from heritage_eval.paper import commands_ab_hcsu, commands_muse  # noqa: F401  (registers)
