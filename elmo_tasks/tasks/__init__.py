"""One subpackage per benchmark, each with the same file roles (docs/CONVENTIONS.md)."""

from elmo_tasks.tasks import (
    coref,  # noqa: F401
    lm,  # noqa: F401
    ner,  # noqa: F401
    snli,  # noqa: F401
    squad,  # noqa: F401
    srl,  # noqa: F401
    sst,  # noqa: F401
)
