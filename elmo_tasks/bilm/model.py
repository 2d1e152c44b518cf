"""The bidirectional language model: token encoder + forward and backward LSTM stacks.

Plain PyTorch (no AllenNLP), so it can be used, trained and exported on its own.
"""

from dataclasses import dataclass
from typing import List, Optional

import torch
from torch import nn

from elmo_tasks.bilm.characters import add_sentence_boundaries
from elmo_tasks.bilm.errors import BilmError
from elmo_tasks.bilm.lstm import LstmState, ProjectedLstmLayer
from elmo_tasks.bilm.options import BilmOptions
from elmo_tasks.bilm.packing import PackedLayout, packed_layout
from elmo_tasks.bilm.token_encoder import CharacterTokenEncoder
from elmo_tasks.bilm.word_cache import WordVectorLookup


@dataclass
class BilmOutput:
    """All ``n_layers + 1`` layers ``(batch, tokens, 2 * projection_dim)`` and the token mask.

    Layer 0 is the token encoding duplicated ``[x; x]``; layer j is ``[forward_j; backward_j]``.
    Boundary tokens are removed and padded positions are zero.
    """

    layers: List[torch.Tensor]
    mask: torch.Tensor


class BiLM(nn.Module):
    """The ELMo biLM.

    Stateless by default: every sentence starts from a zero LSTM state, so its vectors do not
    depend on the rest of the batch. With ``stateful=True`` it behaves like the original:
    row ``r`` of a batch starts from the final state of row ``r`` of the previous batch (a row
    missing from a smaller batch keeps its state); ``reset_states()`` clears them all, or some rows.
    Code outside the biLM reads the states with ``carried_states()`` and installs a word cache
    with ``use_word_cache()``, never through the attributes behind them.
    """

    def __init__(self, options: BilmOptions, stateful: bool = False, dropout: float = 0.0) -> None:
        super().__init__()
        self.options = options
        self.stateful = stateful
        self.dropout = nn.Dropout(dropout) if dropout > 0 else None
        self.token_encoder = CharacterTokenEncoder(options)
        p = options.projection_dim
        self.layers = nn.ModuleList(
            ProjectedLstmLayer(p, options.dim, p, options.cell_clip, options.proj_clip) for _ in range(options.n_layers)
        )
        self._carried_states: Optional[List[LstmState]] = None
        # The hdf5 file its parameters were read from (set by ``load_weights``); None: random, or to be
        # loaded from a state dict. A model's portable archive leaves these parameters out, to be read
        # from this file again (elmo_tasks/modules/elmo_mixes.py).
        self.weight_file: Optional[str] = None

    @property
    def output_dim(self) -> int:
        return self.options.output_dim

    @property
    def num_layers(self) -> int:
        """Number of output layers, the token layer included."""
        return self.options.n_layers + 1

    @property
    def word_cache(self) -> Optional[WordVectorLookup]:
        """The word-vector cache the token encoder reads, or None (every word takes the character CNN)."""
        return self.token_encoder.word_cache

    def use_word_cache(self, cache: Optional[WordVectorLookup]) -> None:
        """Encode the words of ``cache`` from it (a frozen biLM's word vectors never change); None: no cache."""
        self.token_encoder.word_cache = cache

    def carried_states(self) -> Optional[List[LstmState]]:
        """Stateful mode: per layer ``(h, c)``, each ``(2, rows, width)`` with rows in batch order, that the
        next batch starts from; None before the first batch and after ``reset_states()``."""
        return self._carried_states

    def reset_states(self, mask: Optional[torch.Tensor] = None) -> None:
        """Forget the carried LSTM states: all of them, or the rows where ``mask`` (``(rows,)``) is true.

        The mask's length must be the number of rows carried (the largest batch seen so far).
        """
        if mask is None:
            self._carried_states = None
            return
        if self._carried_states is None:
            return
        rows = self._carried_states[0][0].shape[1]
        if mask.shape != (rows,):
            raise ValueError(
                f"reset_states: the mask must have shape ({rows},) (the rows kept), got {tuple(mask.shape)}"
            )
        keep = (~mask.to(torch.bool)).view(1, rows, 1)
        self._carried_states = [(h * keep.to(h.device), c * keep.to(c.device)) for h, c in self._carried_states]

    def forward(self, char_ids: torch.Tensor, keep_boundaries: bool = False) -> BilmOutput:
        """``char_ids`` ``(batch, tokens, chars)``: ids without boundary tokens, zero rows as padding.

        With ``keep_boundaries`` the layers keep ``<S>``/``</S>`` (``(batch, tokens + 2, ...)``,
        the mask covers them too; an all-padding row still gets ``<S> </S>``): ELMo needs them
        for AllenNLP's layer-norm statistics and for ``keep_sentence_boundaries``.
        """
        self._check_ids(char_ids)
        ids, full_mask = add_sentence_boundaries(char_ids)
        layers = self.layers_with_boundaries(ids, full_mask)
        if keep_boundaries:
            return BilmOutput(layers, full_mask)
        mask = (char_ids > 0).any(dim=-1)
        tokens = char_ids.shape[1]
        keep = mask.unsqueeze(-1).to(layers[0].dtype)
        return BilmOutput([layer[:, 1 : tokens + 1] * keep for layer in layers], mask)

    def _check_ids(self, char_ids: torch.Tensor) -> None:
        chars = self.options.max_characters_per_token
        if char_ids.dim() != 3 or char_ids.shape[-1] != chars:
            raise BilmError(
                f"the biLM takes character ids of shape (batch, tokens, {chars}), got {tuple(char_ids.shape)}; "
                "build them with elmo_tasks.bilm.batch_to_ids or AllenNLP's elmo_characters indexer"
            )
        if char_ids.dtype not in (torch.long, torch.int, torch.int16, torch.uint8):
            raise BilmError(f"character ids must be integers, got {char_ids.dtype}")
        if char_ids.numel() and (int(char_ids.min()) < 0 or int(char_ids.max()) >= self.options.n_characters):
            raise BilmError(
                f"character ids must lie in [0, {self.options.n_characters}); "
                f"found {int(char_ids.min())}..{int(char_ids.max())}"
            )

    def layers_with_boundaries(self, ids: torch.Tensor, mask: torch.Tensor) -> List[torch.Tensor]:
        """All layers ``(batch, time, 2 * proj)`` for ids that already carry ``<S>``/``</S>``.

        The language-model loss needs these (it predicts the boundary tokens too).
        """
        tokens = self.token_encoder(ids, mask)
        layout = packed_layout(mask)
        contextual = self._run_lstms(tokens, layout)
        batch, time, _ = tokens.shape
        return [torch.cat([tokens, tokens], dim=-1)] + [
            _unpack(packed, layout, batch * time).view(batch, time, -1) for packed in contextual
        ]

    def _run_lstms(self, tokens: torch.Tensor, layout: PackedLayout) -> List[torch.Tensor]:
        flat = tokens.reshape(-1, tokens.shape[-1])
        inputs = torch.stack([flat.index_select(0, layout.forward_index), flat.index_select(0, layout.backward_index)])
        initial = self._initial_states(layout.sorted_rows, tokens)
        outputs: List[torch.Tensor] = []
        finals: List[LstmState] = []
        for index, layer in enumerate(self.layers):
            layer_input = self.dropout(inputs) if self.dropout is not None else inputs
            packed, final = layer(layer_input, layout.batch_sizes, initial[index])
            if self.options.use_skip_connections and index > 0:
                packed = packed + layer_input  # bilm-tf: dropout wraps the residual
            outputs.append(packed)
            finals.append(final)
            inputs = packed
        if self.stateful:
            self._store_states(layout.sorted_rows, finals)
        return outputs

    def _initial_states(self, sorted_rows: torch.Tensor, like: torch.Tensor) -> List[LstmState]:
        batch = sorted_rows.shape[0]
        p, d = self.options.projection_dim, self.options.dim
        zeros = [(like.new_zeros(2, batch, p), like.new_zeros(2, batch, d)) for _ in self.layers]
        if not self.stateful or self._carried_states is None:
            return zeros
        stored_rows = self._carried_states[0][0].shape[1]
        known = sorted_rows < stored_rows
        initial = []
        for (h0, c0), (h, c) in zip(zeros, self._carried_states, strict=True):
            h, c = h.to(like.device), c.to(like.device)
            index = sorted_rows.clamp(max=stored_rows - 1)
            keep = known.view(1, -1, 1)
            initial.append((torch.where(keep, h[:, index], h0), torch.where(keep, c[:, index], c0)))
        return initial

    def _store_states(self, sorted_rows: torch.Tensor, finals: List[LstmState]) -> None:
        batch = sorted_rows.shape[0]
        if self._carried_states is None:
            self._carried_states = [(h.new_zeros(h.shape), c.new_zeros(c.shape)) for h, c in finals]
        stored_rows = self._carried_states[0][0].shape[1]
        updated: List[LstmState] = []
        for (h_old, c_old), (h_new, c_new) in zip(self._carried_states, finals, strict=True):
            if stored_rows < batch:  # grow: new rows start from zero
                h_old = torch.cat([h_old, h_old.new_zeros(2, batch - stored_rows, h_old.shape[2])], dim=1)
                c_old = torch.cat([c_old, c_old.new_zeros(2, batch - stored_rows, c_old.shape[2])], dim=1)
            h_old, c_old = h_old.to(h_new.device).clone(), c_old.to(c_new.device).clone()
            h_old[:, sorted_rows] = h_new.detach()
            c_old[:, sorted_rows] = c_new.detach()
            updated.append((h_old, c_old))
        self._carried_states = updated


def _unpack(packed: torch.Tensor, layout: PackedLayout, grid_size: int) -> torch.Tensor:
    """Scatter packed ``(2, total, proj)`` back to a ``(grid_size, 2 * proj)`` grid."""
    forward = packed.new_zeros(grid_size, packed.shape[-1]).index_copy(0, layout.forward_index, packed[0])
    backward = packed.new_zeros(grid_size, packed.shape[-1]).index_copy(0, layout.backward_index, packed[1])
    return torch.cat([forward, backward], dim=-1)
