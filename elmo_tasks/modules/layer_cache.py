"""An exact, memory-bounded cache of a frozen, stateless biLM's layer outputs per sentence.

With frozen weights and zero initial states a sentence's biLM layers never change, so a task
model trained for many epochs need not rerun the biLM: after the first epoch the layers come
from here. Sentences are keyed by their character ids. When the budget is full new sentences
are simply not stored (rather than evicting old ones), so a dataset larger than the budget
still gets a steady hit rate instead of LRU thrashing.
"""

from typing import Dict, List, Optional, Tuple

import torch


class LayerCache:
    def __init__(self, max_megabytes: float) -> None:
        self.max_bytes = int(max_megabytes * 2**20)
        self.used_bytes = 0
        self.hits = 0
        self.misses = 0
        self._store: Dict[bytes, torch.Tensor] = {}

    def __len__(self) -> int:
        return len(self._store)

    @staticmethod
    def keys(char_ids: torch.Tensor, lengths: List[int]) -> List[bytes]:
        rows = char_ids.detach().cpu()
        return [rows[i, :n].numpy().tobytes() for i, n in enumerate(lengths)]

    def get(self, key: bytes) -> Optional[torch.Tensor]:
        value = self._store.get(key)
        if value is None:
            self.misses += 1
        else:
            self.hits += 1
        return value

    def put(self, key: bytes, layers: torch.Tensor) -> None:
        """Store ``layers`` ``(num_layers, tokens, dim)`` (kept on its device, detached)."""
        size = layers.numel() * layers.element_size()
        if key in self._store or self.used_bytes + size > self.max_bytes:
            return
        self._store[key] = layers.detach()
        self.used_bytes += size

    def stats(self) -> Tuple[int, int, int]:
        return self.hits, self.misses, self.used_bytes
