"""The old place of :mod:`elmo_tasks.bilm.scoring` (exact perplexity of an exported biLM), kept for imports.

The scoring moved beside the biLM so that ``elmo-tasks bilm-perplexity`` imports no AllenNLP;
importing anything under ``elmo_tasks.tasks`` imports every task, and with them AllenNLP.
"""

from elmo_tasks.bilm.scoring import (  # noqa: F401  (re-exported)
    PADDING_TOKEN,
    TARGET_NAMESPACE,
    UNKNOWN_TOKEN,
    BatchScores,
    ExportedLanguageModel,
    PerplexityResult,
    ProgressBar,
    ScoringError,
    read_vocabulary,
)
