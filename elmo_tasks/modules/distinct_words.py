"""A character encoder run once per distinct word of a batch instead of once per token position.

AllenNLP's ``TokenCharactersEncoder`` (``character_encoding``) runs its CNN on every position of a
(batch, tokens, characters) tensor: every padding position, and every repeat of "the" or ",". In a NER
batch of 64 sentences about half the positions repeat another, and the CNN with its backward pass was a
quarter of a training step. With :func:`encode_each_distinct_word_once`, the encoder sees one row per
distinct character sequence and its outputs are copied back to every position; the gradients of the
copies add up in the backward pass. The result is the same to float rounding (the convolution runs on
fewer rows), the parameters and their names are unchanged (an archive trained either way loads either
way), and nothing in a config changes. The ELMo biLM's own character CNN does the same
(``elmo_tasks/bilm/token_encoder.py``).

It uses torch's public module hooks: the input is reduced before the encoder runs, the output
expanded after. An encoder with dropout on its output is left as it is: the dropout runs inside the
encoder, and one mask per distinct word would not be the mask per position it draws today.
"""

from typing import Any, Dict, Tuple

import torch
from allennlp.modules.token_embedders import TokenCharactersEncoder


def encode_each_distinct_word_once(encoder: TokenCharactersEncoder) -> bool:
    """Makes ``encoder`` compute once per distinct word; False (and nothing done) where it has dropout."""
    if any(isinstance(module, torch.nn.Dropout) and module.p > 0 for module in encoder.children()):
        return False
    positions: Dict[str, Any] = {}

    def distinct_words(
        module: torch.nn.Module, args: Tuple[Any, ...], kwargs: Dict[str, Any]
    ) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
        positions.clear()
        characters = args[0] if args else kwargs.get("token_characters")
        if not isinstance(characters, torch.Tensor) or characters.dim() != 3:  # not (batch, tokens, characters)
            return args, kwargs
        rows = characters.reshape(-1, characters.size(-1))
        distinct, where = torch.unique(rows, dim=0, return_inverse=True)
        positions["where"], positions["shape"] = where, characters.shape[:2]
        if args:
            return (distinct.unsqueeze(0), *args[1:]), kwargs
        return args, {**kwargs, "token_characters": distinct.unsqueeze(0)}

    def every_position(module: torch.nn.Module, inputs: Any, output: torch.Tensor) -> torch.Tensor:
        if not positions:
            return output
        where, shape = positions.pop("where"), positions.pop("shape")
        return output[0].index_select(0, where).view(*shape, output.size(-1))

    encoder.register_forward_pre_hook(distinct_words, with_kwargs=True)
    encoder.register_forward_hook(every_position)
    return True
