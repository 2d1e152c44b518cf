"""One check, one message, for the whole-number settings of configs and ``--predictor-args``.

A count of zero or a negative one in a config (``num_samples``, ``max_span_width``, a predictor's
``max_sentence_tokens``) would otherwise fail far from its cause, or silently do nothing.
"""

from typing import Optional

from allennlp.common.checks import ConfigurationError


def positive_setting(value: Optional[int], name: str, owner: str = "", optional: bool = False) -> Optional[int]:
    """``value`` if it is a positive integer (or None where ``optional``); otherwise a
    ConfigurationError naming the setting, its owner (e.g. "the snli_pair predictor") and the value."""
    if optional and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        where = f"{owner}: " if owner else ""
        allowed = " (or null)" if optional else ""
        raise ConfigurationError(f"{where}{name} must be a positive integer{allowed}, got {value!r}")
    return value


def positive_count(value: int, name: str, owner: str = "") -> int:
    """``positive_setting`` for a setting that must be given: typed ``int`` for its callers."""
    checked = positive_setting(value, name, owner)
    assert checked is not None
    return checked
