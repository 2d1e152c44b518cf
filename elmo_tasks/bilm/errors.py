"""Errors the biLM raises for bad files or input, each meant to be read by a user."""


class BilmError(ValueError):
    """Base class: a problem with biLM options, weights or input that the user can fix."""


class OptionsError(BilmError):
    """``options.json`` is missing, unreadable or lacks a required field."""


class WeightFileError(BilmError):
    """The hdf5 weight file is missing, corrupt, or disagrees with the options."""


class SoftmaxFileError(BilmError):
    """``softmax.npz`` is missing, truncated or corrupt, or its arrays do not fit together."""


class ScoringError(ValueError):
    """The biLM files do not belong together, or one is missing: the message says what to pass.

    Here, not beside the scoring, so that ``bilm-perplexity`` can name it before it imports torch."""
