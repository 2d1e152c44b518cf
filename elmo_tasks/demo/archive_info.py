"""What the demo's index page says about an archive besides its task: the biLM it uses and its scores.

``allennlp train -s RUN`` writes ``RUN/model.tar.gz`` beside ``RUN/metrics.json`` (the best
epoch's validation metrics), and ``scripts/reproduce.py`` adds ``RUN/test_metrics.json`` (and
``test_brown_metrics.json`` for CoNLL-2005 SRL) from ``allennlp evaluate``. The demo shows the
metric the config selects models by (``trainer.validation_metric``) from each file that is there;
a bare archive elsewhere simply has no scores to show. A shipped model's folder
(elmo_tasks/pretrained/TASK) has ``shipped.json`` instead, with its best validation and test score.
"""

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

from elmo_tasks.config_search import dicts_with


@dataclass
class BilmFiles:
    """The biLM an ELMo embedder of the model reads (as the config names them)."""

    options_file: str
    weight_file: str
    fine_tuned: bool = False


@dataclass
class ArchiveScores:
    """The selection metric's value in each metrics file beside the archive, and the training length."""

    metric: Optional[str]
    scores: Dict[str, float] = field(default_factory=dict)
    best_epoch: Optional[int] = None


def bilm_files(config: Dict[str, Any]) -> List[BilmFiles]:
    """Every biLM named in the model's config (one per ELMo embedder; none for a baseline)."""
    return [
        BilmFiles(str(found["options_file"]), str(found["weight_file"]), bool(found.get("requires_grad", False)))
        for found in dicts_with(config.get("model", {}), "options_file")
        if "weight_file" in found
    ]


def selection_metric(config: Dict[str, Any]) -> Optional[str]:
    """The metric the trainer selects the best epoch by (``+f1`` -> ``f1``), if the config says."""
    metric = config.get("trainer", {}).get("validation_metric")
    if isinstance(metric, list):
        metric = metric[0] if metric else None
    return metric.lstrip("+-") if isinstance(metric, str) else None


def archive_scores(archive_file: str, config: Dict[str, Any]) -> ArchiveScores:
    """The selection metric from ``metrics.json`` (best validation) and ``test*_metrics.json`` beside the archive."""
    metric = selection_metric(config)
    run_dir = Path(archive_file) if os.path.isdir(archive_file) else Path(archive_file).parent
    result = ArchiveScores(metric)
    shipped = _read_json(run_dir / "shipped.json")
    if shipped is not None and isinstance(shipped.get("scores"), dict):
        epoch = shipped.get("best_epoch")
        result.best_epoch = epoch if isinstance(epoch, int) else None
        result.scores = {where: float(value) for where, value in shipped["scores"].items()}
        return result
    training = _read_json(run_dir / "metrics.json")
    if training is not None:
        epoch = training.get("best_epoch")
        result.best_epoch = epoch if isinstance(epoch, int) else None
        if metric is not None and isinstance(training.get(f"best_validation_{metric}"), (int, float)):
            result.scores["best validation"] = float(training[f"best_validation_{metric}"])
    for test_file in sorted(run_dir.glob("test*_metrics.json")):
        tested = _read_json(test_file)
        if tested is not None and metric is not None and isinstance(tested.get(metric), (int, float)):
            result.scores[test_file.name.removesuffix("_metrics.json").replace("_", " ")] = float(tested[metric])
    return result


def _read_json(path: Path) -> Optional[Dict[str, Any]]:
    """A JSON object from ``path``, or None when it is missing or unreadable (scores are optional)."""
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return loaded if isinstance(loaded, dict) else None
