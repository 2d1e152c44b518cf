"""A shipped model's archive: portable (its biLM named by package reference, not copied) and compact.

A task model's ``model.tar.gz`` from ``allennlp train`` holds its whole state dict, the biLM's 7M
parameters among them (28 MB in float32), and ``elmo_bilm/``, the biLM's options, from which loading
rebuilds the biLM before the state dict fills it (elmo_tasks/bilm/archived.py). For a model trained
with the shipped biLM those parameters are the package's own ``weights.hdf5``, so the portable archive
leaves both out: its config names the biLM by package reference
(``elmo_tasks:pretrained/bilm_small/options.json`` and ``weights.hdf5``), so loading builds the biLM
from those files of the installed package, weights included; the state dict has no biLM tensor, and the
ELMo modules' load hook keeps the biLM as read rather than let AllenNLP's ``Model.load`` report them
missing (elmo_tasks/modules/elmo_mixes.py). Only a biLM that is the package's file may be left out: a
fine-tuned one (``requires_grad``), or another file, is refused, and :func:`differing_tensor` compares
every tensor of the loaded portable archive with the original's.

``half_precision`` stores every float32 tensor that fits float16's range as float16 (loading copies them
into the model's float32 parameters); whether a model may ship so is measured by the shipping command
(elmo_tasks/reproduction/shipping.py). The archive's bytes depend on its content alone (fixed times, fixed
member order), so shipping the same model again changes no file.
"""

import copy
import gzip
import io
import json
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

import torch

from elmo_tasks.atomic_files import WholeFile
from elmo_tasks.bilm.references import BilmReferenceError, is_package_reference, resolve_bilm_file
from elmo_tasks.config_search import dicts_with
from elmo_tasks.modules.allennlp_state import ALLENNLP_BILM
from elmo_tasks.modules.elmo_mixes import ElmoMixes
from elmo_tasks.pretrained import SMALL_OPTIONS_REFERENCE, SMALL_WEIGHT_REFERENCE
from elmo_tasks.safe_archives import extract_archive_safely

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "weights.th"
META_FILE = "meta.json"
VOCABULARY_FOLDER = "vocabulary"
# the biLM's files that a model trained with the shipped biLM names, and their package references
SHIPPED_BILM = {"options_file": SMALL_OPTIONS_REFERENCE, "weight_file": SMALL_WEIGHT_REFERENCE}
_HALF_MAX = torch.finfo(torch.float16).max


class PortableArchiveError(ValueError):
    """A model that cannot be made portable (its biLM is not a file the package ships); one line."""


def write_portable_archive(original: Path, destination: Path, model: torch.nn.Module, half_precision: bool) -> None:
    """Writes ``destination``: ``original`` (a task model's ``model.tar.gz``; ``model`` is that archive's
    loaded model, whose ELMo modules say where the biLM's tensors are) without the biLM's tensors and
    options copy, the biLM named by reference, the rest of the weights in float16 if ``half_precision``."""
    with tempfile.TemporaryDirectory(prefix="portable-") as scratch:
        unpacked = Path(scratch)
        extract_archive_safely(original, unpacked, mode="r:gz")
        config = portable_config(json.loads((unpacked / CONFIG_FILE).read_text(encoding="utf-8")), str(original))
        state = torch.load(unpacked / WEIGHTS_FILE, map_location="cpu", weights_only=True)
        prefixes = tuple(bilm_state_prefixes(model))
        kept = {key: tensor for key, tensor in state.items() if not key.startswith(prefixes)}
        if half_precision:
            kept = {key: _in_half_precision(tensor) for key, tensor in kept.items()}
        weights = io.BytesIO()
        torch.save(kept, weights)
        members: Dict[str, Optional[bytes]] = {
            CONFIG_FILE: (json.dumps(config, indent=2) + "\n").encode("utf-8"),
            WEIGHTS_FILE: weights.getvalue(),
            VOCABULARY_FOLDER: None,  # a folder: archive_errors checks that the archive has one
        }
        for path in sorted((unpacked / VOCABULARY_FOLDER).iterdir()):
            if path.is_file() and not path.name.startswith("."):  # not filelock's .lock
                members[f"{VOCABULARY_FOLDER}/{path.name}"] = path.read_bytes()
        if (unpacked / META_FILE).is_file():
            members[META_FILE] = (unpacked / META_FILE).read_bytes()
    _write_tar_gz(destination, members)


def portable_config(config: Dict[str, Any], archive_name: str) -> Dict[str, Any]:
    """``config`` with every ELMo embedder's biLM named by package reference; PortableArchiveError for an
    embedder that fine-tunes its biLM or reads a biLM other than a file of the package."""
    config = copy.deepcopy(config)
    for embedder in dicts_with(config.get("model", {}), "options_file"):
        if embedder.get("requires_grad"):
            raise PortableArchiveError(
                f"{archive_name}: its ELMo fine-tunes the biLM (requires_grad: true), so its biLM is not the one "
                "the package ships and cannot be left out of the archive; ship a model trained with the frozen "
                "shipped biLM"
            )
        for key, reference in SHIPPED_BILM.items():
            embedder[key] = _package_reference(embedder.get(key), reference, key, archive_name)
    return config


def _package_reference(value: Any, reference: str, key: str, archive_name: str) -> str:
    """``value`` (a config's biLM file) as a package reference: itself if it is one, ``reference`` if it is a
    path to a file with the same bytes as the shipped one."""
    if isinstance(value, str) and is_package_reference(value):
        try:
            resolve_bilm_file(value)
        except BilmReferenceError as error:
            raise PortableArchiveError(f"{archive_name}: {key}: {error}") from None
        return value
    shipped = Path(resolve_bilm_file(reference))
    if isinstance(value, str) and Path(value).is_file() and Path(value).read_bytes() == shipped.read_bytes():
        return reference
    raise PortableArchiveError(
        f"{archive_name}: its ELMo's {key} is {value!r}, not the biLM elmo_tasks ships ({reference}, or a copy of "
        "it); only a model of the shipped biLM can name its biLM by reference: train it with the shipped biLM "
        "(the default of ELMO_OPTIONS and ELMO_WEIGHTS)"
    )


def bilm_state_prefixes(model: torch.nn.Module) -> List[str]:
    """Where the biLM of each ELMo module of ``model`` keeps its tensors in the state dict: ours
    (``...bilm.``) and, for a state dict saved in the names of AllenNLP's ELMo (the drop-in), AllenNLP's."""
    prefixes = []
    for name, module in model.named_modules(remove_duplicate=False):
        if isinstance(module, ElmoMixes):
            at = f"{name}." if name else ""
            prefixes += [at + "bilm.", at + ALLENNLP_BILM, at + "_elmo." + ALLENNLP_BILM]
    return prefixes


def differing_tensor(expected: Dict[str, torch.Tensor], found: Dict[str, torch.Tensor]) -> Optional[str]:
    """The first key whose tensor differs between two state dicts (or is in one only); None if all agree."""
    for key in sorted(set(expected) | set(found)):
        if key not in expected or key not in found:
            return f"{key} (only in the {'original' if key in expected else 'portable'} model)"
        if not torch.equal(expected[key], found[key]):
            return key
    return None


def _in_half_precision(tensor: torch.Tensor) -> torch.Tensor:
    """A float32 tensor as float16 when every finite value fits; anything else as it is."""
    if tensor.dtype != torch.float32:
        return tensor
    finite = tensor[torch.isfinite(tensor)]
    if finite.numel() and float(finite.abs().max()) > _HALF_MAX:
        return tensor
    return tensor.half()


def _write_tar_gz(destination: Path, members: Dict[str, Optional[bytes]]) -> None:
    """A gzipped tar of ``members`` (name -> bytes, None for a folder), in that order, with fixed times and
    modes, written whole (elmo_tasks/atomic_files.py)."""
    # filename="" and mtime=0: the gzip header holds no name or time of this machine
    with (
        WholeFile(destination) as partial,
        open(partial, "wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=9, mtime=0) as compressed,
        tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.mtime, info.uname, info.gname = 0, "", ""
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))
