"""POS probe: a linear classifier on ONE frozen biLM layer (Peters et al. 2018, section 5.3).

The classifier sees standardised layer vectors (mean and scale from the training tokens) and
is trained with Adam for a fixed number of epochs: no choice is made on the test set. The
trained tagger is small (tags x dim) and is shipped with the biLM, so a predictor can find the
verbs of a sentence with nothing downloaded.
"""

from dataclasses import dataclass
from typing import List, Sequence

import numpy as np
import torch


@dataclass
class LinearPosTagger:
    layer: int
    tags: List[str]
    weight: np.ndarray  # (num_tags, dim)
    bias: np.ndarray  # (num_tags,)
    mean: np.ndarray  # (dim,)
    scale: np.ndarray  # (dim,)

    def predict(self, features: np.ndarray) -> List[str]:
        """Tags of ``features`` ``(tokens, dim)``: the tagger's layer of each token."""
        logits = ((features - self.mean) / self.scale) @ self.weight.T + self.bias
        return [self.tags[i] for i in logits.argmax(axis=1)]

    def save(self, path: str) -> None:
        np.savez(
            path,
            layer=self.layer,
            tags=np.array(self.tags),
            weight=self.weight.astype(np.float32),
            bias=self.bias.astype(np.float32),
            mean=self.mean.astype(np.float32),
            scale=self.scale.astype(np.float32),
        )

    @classmethod
    def load(cls, path: str) -> "LinearPosTagger":
        with np.load(path) as data:
            return cls(
                int(data["layer"]),
                [str(t) for t in data["tags"]],
                data["weight"],
                data["bias"],
                data["mean"],
                data["scale"],
            )


def train_pos_tagger(
    features: np.ndarray,
    tags: Sequence[str],
    layer: int,
    epochs: int = 6,
    batch_size: int = 512,
    lr: float = 3e-3,
    min_steps: int = 500,
    seed: int = 0,
) -> LinearPosTagger:
    """Multinomial logistic regression of ``tags`` on ``features`` ``(tokens, dim)``: ``epochs``
    passes, and at least ``min_steps`` updates so that small training sets converge too."""
    names = sorted(set(tags))
    index = {name: i for i, name in enumerate(names)}
    targets = torch.tensor([index[t] for t in tags])
    mean = features.mean(axis=0)
    scale = features.std(axis=0) + 1e-6
    inputs = torch.from_numpy((features - mean) / scale)
    generator = torch.Generator().manual_seed(seed)
    linear = torch.nn.Linear(inputs.shape[1], len(names))
    optimizer = torch.optim.Adam(linear.parameters(), lr=lr)
    steps_per_epoch = -(-len(targets) // batch_size)
    for _ in range(max(epochs, -(-min_steps // steps_per_epoch))):
        for rows in torch.randperm(len(targets), generator=generator).split(batch_size):
            optimizer.zero_grad()
            loss = torch.nn.functional.cross_entropy(linear(inputs[rows]), targets[rows])
            loss.backward()
            optimizer.step()
    return LinearPosTagger(layer, names, linear.weight.detach().numpy(), linear.bias.detach().numpy(), mean, scale)


def accuracy(predicted: Sequence[str], gold: Sequence[str]) -> float:
    return float(np.mean([p == g for p, g in zip(predicted, gold, strict=True)])) if gold else 0.0
