"""One subpackage per benchmark, each with its reader, model, metric and predictor together."""
from elmo_tasks.tasks import snli  # noqa: F401
from elmo_tasks.tasks import sst  # noqa: F401
from elmo_tasks.tasks import ner  # noqa: F401
from elmo_tasks.tasks import lm  # noqa: F401
from elmo_tasks.tasks import squad  # noqa: F401
