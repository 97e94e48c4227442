"""The backend interface, re-exported from :mod:`heritage_eval.core.backends` (where it
lives since the core holds the interfaces and the layers above implement them)."""

from heritage_eval.core.backends import (
    BackendEntry,
    BackendFactory,
    BackendOptions,
    ModelBackend,
    ModelSpecError,
    UnknownModelError,
    create_backend,
    did_you_mean,
    register_backend,
    registered_backends,
)

__all__ = ["BackendEntry", "BackendFactory", "BackendOptions", "ModelBackend",
           "ModelSpecError", "UnknownModelError", "create_backend", "did_you_mean",
           "register_backend", "registered_backends"]
