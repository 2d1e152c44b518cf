"""The ELMo mixing weights a model learned (Peters et al. 2018, Figure 2), read from its parameters.

Each ELMo embedder has one scalar mix per output representation (``scalar_mix_k``): softmax-
normalised weights ``s_j`` over the biLM's layers (layer 0 is the character CNN's token layer)
and a scale ``gamma``. Models that use ELMo at the input and at the output (section 3.3) have two
mixes, 0 for the input and 1 for the output; the paper's Figure 2 compares the two. The weights
are read from the model's parameters by name, so any model with a ``fast_elmo`` embedder (or AllenNLP's
``elmo_token_embedder``, whose parameters have the same names) is covered.
"""

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Dict, Iterable, List, Tuple

import torch

_MIX_PARAMETER = re.compile(r"^(?P<owner>.*?)\.?scalar_mix_(?P<mix>\d+)\.(?:scalar_parameters\.(?P<layer>\d+)|gamma)$")


@dataclass
class LayerMix:
    """One scalar mix: which representation it makes, its softmax weights per layer and gamma."""

    owner: str
    representation: str
    weights: List[float]
    gamma: float

    def as_json(self) -> Dict[str, object]:
        return {
            "owner": self.owner,
            "representation": self.representation,
            "weights": self.weights,
            "gamma": self.gamma,
        }


def representation_name(mix: int, mixes: int) -> str:
    """What mix ``mix`` of ``mixes`` feeds: the task model's input, or (with two) its output."""
    if mixes == 2:
        return "input" if mix == 0 else "output"
    return "input" if mixes == 1 else f"representation {mix}"


def learned_mixes(parameters: Iterable[Tuple[str, torch.Tensor]]) -> List[LayerMix]:
    """Every scalar mix among a model's ``named_parameters()``, in name order; empty without ELMo.

    Parameters, not the state dict: a module registered under two names (as the ELMo embedder was, as
    ``_elmo``, in task models before ``ElmoAtOutput``) is listed twice in a state dict, once here."""
    raw: Dict[Tuple[str, int], Dict[int, float]] = defaultdict(dict)
    gammas: Dict[Tuple[str, int], float] = {}
    for key, value in parameters:
        found = _MIX_PARAMETER.match(key)
        if found is None:
            continue
        owner_and_mix = (found.group("owner"), int(found.group("mix")))
        number = float(value.detach().reshape(-1)[0])
        if found.group("layer") is None:
            gammas[owner_and_mix] = number
        else:
            raw[owner_and_mix][int(found.group("layer"))] = number
    mixes_per_owner: Dict[str, int] = defaultdict(int)
    for owner, _ in raw:
        mixes_per_owner[owner] += 1
    result = []
    for owner, mix in sorted(raw):
        layers = raw[(owner, mix)]
        weights = torch.softmax(torch.tensor([layers[j] for j in sorted(layers)]), dim=0).tolist()
        name = representation_name(mix, mixes_per_owner[owner])
        result.append(LayerMix(owner, name, weights, gammas.get((owner, mix), 1.0)))
    return result
