"""Running forward/backward perplexity, labelled by how it was computed, plus throughput."""
import math
import time
from typing import Dict, Optional


class PerplexityTracker:
    """Sums token NLLs per direction. ``ppl`` is ``exp`` of the mean of the two directions'
    mean NLLs (bilm-tf's "average perplexity"); ``tokens_per_s`` counts predicted tokens
    (each counted once, not once per direction) since the last reset.
    """

    def __init__(self, label: str) -> None:
        self.label = label
        self.reset()

    def reset(self) -> None:
        self.nll = {"fwd": 0.0, "bwd": 0.0}
        self.count = 0
        self._start: Optional[float] = None

    def start(self) -> None:
        """Call when a batch starts: the clock runs from the first batch after a reset."""
        if self._start is None:
            self._start = time.perf_counter()

    def add(self, fwd_nll_sum: float, bwd_nll_sum: float, tokens: int) -> None:
        self.start()
        self.nll["fwd"] += fwd_nll_sum
        self.nll["bwd"] += bwd_nll_sum
        self.count += tokens

    def metrics(self) -> Dict[str, float]:
        if self.count == 0:
            return {}
        fwd, bwd = self.nll["fwd"] / self.count, self.nll["bwd"] / self.count
        elapsed = time.perf_counter() - (self._start or time.perf_counter())
        out = {
            f"ppl_fwd_{self.label}": _safe_exp(fwd),
            f"ppl_bwd_{self.label}": _safe_exp(bwd),
            f"ppl_{self.label}": _safe_exp(0.5 * (fwd + bwd)),
        }
        if elapsed > 0:
            out["tokens_per_s"] = self.count / elapsed
        return out


def _safe_exp(value: float) -> float:
    return math.exp(min(value, 700.0))
