"""The biLM's hyperparameters, read from and written to the original ``options.json`` format."""

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from elmo_tasks.bilm.characters import MAX_CHARACTERS_PER_TOKEN, NUM_CHARACTER_IDS
from elmo_tasks.bilm.errors import OptionsError
from elmo_tasks.bilm.references import resolve_bilm_file

# The published "original" ELMo char CNN.
DEFAULT_FILTERS: List[Tuple[int, int]] = [(1, 32), (2, 32), (3, 64), (4, 128), (5, 256), (6, 512), (7, 1024)]


@dataclass
class BilmOptions:
    """Sizes of the char CNN and the LSTMs. Field names follow ``options.json``."""

    dim: int = 4096
    projection_dim: int = 512
    n_layers: int = 2
    cell_clip: Optional[float] = 3.0
    proj_clip: Optional[float] = 3.0
    use_skip_connections: bool = True
    char_embedding_dim: int = 16
    filters: List[Tuple[int, int]] = field(default_factory=lambda: list(DEFAULT_FILTERS))
    n_highway: int = 2
    n_characters: int = NUM_CHARACTER_IDS
    max_characters_per_token: int = MAX_CHARACTERS_PER_TOKEN
    activation: str = "relu"

    def __post_init__(self) -> None:
        self.filters = [(int(w), int(n)) for w, n in self.filters]
        if self.activation not in ("relu", "tanh"):
            raise OptionsError(f"char_cnn.activation must be 'relu' or 'tanh', got {self.activation!r}")
        if self.n_layers < 1 or self.dim < 1 or self.projection_dim < 1:
            raise OptionsError("lstm.n_layers, lstm.dim and lstm.projection_dim must be positive")
        if not self.filters:
            raise OptionsError("char_cnn.filters must list at least one [width, count] pair")
        if max(w for w, _ in self.filters) > self.max_characters_per_token:
            raise OptionsError("a char_cnn filter is wider than max_characters_per_token")

    @property
    def n_filters(self) -> int:
        return sum(n for _, n in self.filters)

    @property
    def output_dim(self) -> int:
        """Width of every ELMo layer: forward and backward halves side by side."""
        return 2 * self.projection_dim

    def to_json_dict(self) -> Dict[str, Any]:
        return {
            "lstm": {
                "dim": self.dim,
                "projection_dim": self.projection_dim,
                "n_layers": self.n_layers,
                "cell_clip": self.cell_clip,
                "proj_clip": self.proj_clip,
                "use_skip_connections": self.use_skip_connections,
            },
            "char_cnn": {
                "activation": self.activation,
                "embedding": {"dim": self.char_embedding_dim},
                "filters": [list(f) for f in self.filters],
                "n_highway": self.n_highway,
                "n_characters": self.n_characters,
                "max_characters_per_token": self.max_characters_per_token,
            },
        }

    @classmethod
    def from_json_dict(cls, data: Dict[str, Any], source: str = "options") -> "BilmOptions":
        try:
            lstm, cnn = data["lstm"], data["char_cnn"]
            return cls(
                dim=int(lstm["dim"]),
                projection_dim=int(lstm["projection_dim"]),
                n_layers=int(lstm["n_layers"]),
                cell_clip=_optional_float(lstm.get("cell_clip")),
                proj_clip=_optional_float(lstm.get("proj_clip")),
                use_skip_connections=bool(lstm.get("use_skip_connections", False)),
                char_embedding_dim=int(cnn["embedding"]["dim"]),
                filters=[tuple(f) for f in cnn["filters"]],
                n_highway=int(cnn.get("n_highway", 0)),
                n_characters=int(cnn.get("n_characters", NUM_CHARACTER_IDS)),
                max_characters_per_token=int(cnn.get("max_characters_per_token", MAX_CHARACTERS_PER_TOKEN)),
                activation=str(cnn.get("activation", "relu")),
            )
        except KeyError as err:
            raise OptionsError(
                f"{source}: missing field {err} (expected the original ELMo options.json layout: "
                '{"lstm": {"dim", "projection_dim", "n_layers", ...}, '
                '"char_cnn": {"embedding": {"dim"}, "filters", ...}})'
            ) from None
        except (TypeError, ValueError) as err:
            raise OptionsError(f"{source}: a field has the wrong type ({err})") from None

    @classmethod
    def from_file(cls, path: str) -> "BilmOptions":
        path = resolve_bilm_file(path)  # an elmo_tasks: package reference, or a path
        if not os.path.isfile(path):
            raise OptionsError(f"options file not found: {path} (pass the options.json that came with the weights)")
        expected = "expected the ELMo options.json that came with the weights (copy it again if it was cut short)"
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except json.JSONDecodeError as err:
            raise OptionsError(
                f"{path}, line {err.lineno}: not valid JSON ({err.msg}, column {err.colno}); {expected}"
            ) from None
        except UnicodeDecodeError:
            raise OptionsError(f"{path} is not UTF-8 text, so not valid JSON; {expected}") from None
        if not isinstance(data, dict):
            kind = {list: "an array", str: "a string", bool: "a boolean"}.get(type(data), "a number or null")
            raise OptionsError(f"{path} holds {kind} instead of a JSON object; {expected}")
        return cls.from_json_dict(data, source=path)

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.to_json_dict(), handle, indent=2)


def _optional_float(value: Any) -> Optional[float]:
    return None if value is None else float(value)
