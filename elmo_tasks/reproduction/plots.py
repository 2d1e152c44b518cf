"""The report's plots (docs/RESULTS.md), from run records and trained models.

* ``layer_weights``: the softmax-normalised ELMo mixing weights of trained models (from their state
  dicts, kept in the run records), at the input (mix 0) and, where a model has one, at the output (mix 1):
  the paper's Figure 2.
* ``validation_curves``: the validation metric per epoch, baseline vs ELMo, mean over seeds.
* ``sample_efficiency``: test metric against the fraction of training data (the paper's Figure 1).
"""

import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from elmo_tasks.reproduction.report_values import mean_per_share

MIX_KEY = re.compile(r"scalar_mix_(\d+)\.scalar_parameters\.(\d+)$")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _saved(plt: Any, figure: Any, path: Path) -> Path:
    """Writes ``figure`` to ``path`` as every plot of the report is written, then frees it."""
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def state_layer_weights(state: Dict[str, Any]) -> Dict[int, List[float]]:
    """``mix index -> softmax-normalised layer weights`` of the ELMo embedder in a model state dict."""
    import torch

    raw: Dict[int, Dict[int, float]] = defaultdict(dict)
    for key, value in state.items():
        found = MIX_KEY.search(key)
        if found:
            raw[int(found.group(1))][int(found.group(2))] = float(value.reshape(-1)[0])
    return {
        mix: torch.softmax(torch.tensor([by_layer[j] for j in sorted(by_layer)]), dim=0).tolist()
        for mix, by_layer in raw.items()
    }


def layer_weights_figure(per_task: Mapping[str, Sequence[Dict[int, List[float]]]], path: Path) -> Optional[Path]:
    """Mean softmax weights over each task's runs (``task -> [{mix: weights}]``, from run records),
    one group of bars per task and mix."""
    rows: List[Tuple[str, List[float]]] = []
    for task, runs in per_task.items():
        by_mix: Dict[int, List[List[float]]] = defaultdict(list)
        for run in runs:
            for mix, weights in run.items():
                by_mix[int(mix)].append(weights)
        for mix in sorted(by_mix):
            seeds = by_mix[mix]
            mean = [sum(w[j] for w in seeds) / len(seeds) for j in range(len(seeds[0]))]
            rows.append((f"{task} {'input' if mix == 0 else 'output'}", mean))
    if not rows:
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(max(4.0, 0.9 * len(rows) + 1.5), 3.6))
    num_layers = len(rows[0][1])
    width = 0.8 / num_layers
    for j in range(num_layers):
        xs = [i + (j - (num_layers - 1) / 2) * width for i in range(len(rows))]
        axes.bar(
            xs,
            [weights[j] if j < len(weights) else 0.0 for _, weights in rows],
            width,
            label="token layer" if j == 0 else f"biLSTM layer {j}",
        )
    axes.set_xticks(range(len(rows)), [name for name, _ in rows], rotation=30, ha="right", fontsize=8)
    axes.set_ylabel("softmax-normalised weight")
    axes.axhline(1.0 / num_layers, color="grey", linestyle=":", linewidth=1)
    axes.legend(fontsize=8)
    return _saved(plt, figure, path)


def validation_curves_figure(
    per_task: Mapping[str, Mapping[str, Sequence[List[float]]]], metrics: Dict[str, str], path: Path
) -> Optional[Path]:
    """``per_task``: task -> variant -> the validation metric per epoch of each seed; one panel per
    task, mean over seeds (as long as the shortest run)."""
    tasks = [t for t, variants in per_task.items() if any(variants.values())]
    if not tasks:
        return None
    plt = _pyplot()
    figure, axes_list = plt.subplots(1, len(tasks), figsize=(3.2 * len(tasks), 3.0), squeeze=False)
    for axes, task in zip(axes_list[0], tasks, strict=True):
        for variant, runs in sorted(per_task[task].items()):
            curves = [c for c in runs if c]
            if not curves:
                continue
            length = min(len(c) for c in curves)
            mean = [sum(c[e] for c in curves) / len(curves) for e in range(length)]
            axes.plot(range(1, length + 1), mean, marker="o", markersize=3, label=variant)
        axes.set_title(task, fontsize=9)
        axes.set_xlabel("epoch", fontsize=8)
        axes.set_ylabel(f"validation {metrics[task]}", fontsize=8)
        axes.legend(fontsize=7)
    return _saved(plt, figure, path)


def _percent_and_mean(values: List[Tuple[float, float]]) -> Tuple[List[float], List[float]]:
    """The shares in percent, ascending, and the mean metric over the runs of each."""
    means = mean_per_share(values)
    return [100 * share for share in means], list(means.values())


def sample_efficiency_figure(
    points: Dict[str, List[Tuple[float, float]]],
    task: str,
    metric: str,
    path: Path,
    outdated: Optional[Dict[str, List[Tuple[float, float]]]] = None,
) -> Optional[Path]:
    """``points``: variant -> [(fraction of training data, test metric)] (one point per seed), joined by a
    line; ``outdated``: the same for runs of an earlier config or biLM, drawn as hollow markers that no
    line joins, since a curve through two configs would describe neither."""
    outdated = outdated or {}
    if not any(points.values()) and not any(outdated.values()):
        return None
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(4.5, 3.2))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, variant in enumerate(sorted(set(points) | set(outdated))):
        colour = colours[index % len(colours)]
        if points.get(variant):
            axes.plot(*_percent_and_mean(points[variant]), marker="o", color=colour, label=variant)
        if outdated.get(variant):
            label = f"{variant} (earlier config or biLM)"
            xs, ys = _percent_and_mean(outdated[variant])
            axes.plot(xs, ys, linestyle="none", marker="o", markerfacecolor="none", color=colour, label=label)
    axes.set_xscale("log")
    shares = sorted({100 * x for found in (points, outdated) for values in found.values() for x, _ in values})
    axes.set_xticks(shares, [f"{share:g}%" for share in shares])  # the measured shares, not powers of ten
    axes.minorticks_off()
    axes.set_xlabel("share of the training set")
    axes.set_ylabel(f"test {metric}")
    axes.set_title(task, fontsize=9)
    axes.legend(fontsize=7)
    return _saved(plt, figure, path)
