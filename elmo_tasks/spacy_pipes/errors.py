"""The errors of the spaCy components, each one line that says what to fix."""


class ElmoPipeError(ValueError):
    """A component that cannot be built or run as configured: no model, a missing or broken archive,
    an archive of another task, a setting out of range, a GPU that is not there."""


class DocTooLong(ElmoPipeError):
    """A Doc (or one of its sentences) above a component's size limit, the task predictor's: the message
    gives the size, the limit, and the setting that raises it."""
