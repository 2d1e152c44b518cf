"""One subpackage per benchmark, each with the same file roles (docs/CONVENTIONS.md)."""
from elmo_tasks.tasks import snli  # noqa: F401
from elmo_tasks.tasks import sst  # noqa: F401
from elmo_tasks.tasks import ner  # noqa: F401
from elmo_tasks.tasks import lm  # noqa: F401
from elmo_tasks.tasks import srl  # noqa: F401
from elmo_tasks.tasks import coref  # noqa: F401
from elmo_tasks.tasks import squad  # noqa: F401
