"""The config constructor the task models share: ``from_partial_objects``, which builds the layers whose
input sizes follow from the embedder and from each other, so that a config gives no input sizes.

A model's ``__init__`` takes built modules (for Python callers); a config gives those layers without their
input sizes (ELMo's width comes from the biLM's options file, a layer's input is the one before it), so
AllenNLP must hand them over ``Lazy`` and the model build them in order. Written out per model, that
constructor repeated every argument of ``__init__`` with the same defaults, which could drift apart. Here
the arguments are written once, in ``__init__``: the constructor's signature, which AllenNLP's
``from_params`` reads, is ``__init__``'s with the model's ``sized_layers`` made ``Lazy`` (and AllenNLP's
``regularizer``, which ``**kwargs`` passes on), and the model says only how the sizes follow
(:meth:`ConfigSizedModel.size_layers`).
"""

import inspect
from typing import Any, Callable, ClassVar, Dict, Optional, Tuple, Type, TypeVar, Union, get_args, get_origin

from allennlp.common import Lazy
from allennlp.models import Model
from allennlp.nn import RegularizerApplicator

from elmo_tasks.modules.elmo_at_output import ElmoAtOutput, output_dim

ELMO_AT_OUTPUT = "elmo_at_output"  # true or false in a config; built once here, its width sizes layers

SizedModel = TypeVar("SizedModel", bound="ConfigSizedModel")


class ConfigArguments:
    """A model's arguments while its layers are built: the settings as the config (or ``__init__``'s
    defaults) gives them, each of ``sized_layers`` ``Lazy`` until :meth:`build` builds it."""

    def __init__(self, model_class: Type["ConfigSizedModel"], arguments: Dict[str, Any]) -> None:
        self._model_class = model_class
        self._arguments = arguments
        self._unbuilt = set(model_class.sized_layers)

    @property
    def embedding_dim(self) -> int:
        """The width of what ``text_field_embedder`` gives (ELMo's from the biLM's options file)."""
        return self._arguments["text_field_embedder"].get_output_dim()

    def setting(self, name: str) -> Any:
        """A plain argument of ``__init__``, as the config gives it or its default."""
        return self._arguments[name]

    def build(self, layer: str, **input_size: int) -> Any:
        """One of ``sized_layers`` built with ``input_size`` (an RNN's ``input_size``, a feedforward's
        ``input_dim``...), and kept for ``__init__``; None for an optional layer the config leaves out."""
        if layer not in self._unbuilt:
            raise TypeError(
                f"{self._model_class.__name__}.size_layers builds {layer!r}, which is not one of its sized_layers "
                f"{self._model_class.sized_layers} still to build; expected each of them built once"
            )
        self._unbuilt.discard(layer)
        lazy: Optional[Lazy[Any]] = self._arguments[layer]
        self._arguments[layer] = None if lazy is None else lazy.construct(**input_size)
        return self._arguments[layer]

    def elmo_at_output_dim(self, model_name: str) -> int:
        """The width ELMo adds at the output (0 without it): ``elmo_at_output`` true builds the
        ``ElmoAtOutput`` here, once (it checks the embedder), and ``__init__`` takes that one."""
        elmo = ElmoAtOutput.for_model(
            self._arguments[ELMO_AT_OUTPUT], self._arguments["text_field_embedder"], model_name
        )
        self._arguments[ELMO_AT_OUTPUT] = elmo
        return output_dim(elmo)

    def built(self) -> Dict[str, Any]:
        """Every argument of ``__init__``, each sized layer built."""
        if self._unbuilt:
            raise TypeError(
                f"{self._model_class.__name__}.size_layers left {sorted(self._unbuilt)} unbuilt; expected it to "
                "build each of its sized_layers"
            )
        return self._arguments


class _ConfigConstructor:
    """``from_partial_objects`` of each :class:`ConfigSizedModel` subclass: a function with that class's
    own signature (a shared classmethod would have one signature for every model)."""

    def __init__(self) -> None:
        self._by_class: Dict[type, Callable[..., Any]] = {}

    def __get__(self, instance: Optional[object], owner: Type[SizedModel]) -> Callable[..., SizedModel]:
        if owner not in self._by_class:
            self._by_class[owner] = _config_constructor(owner)
        return self._by_class[owner]


class ConfigSizedModel(Model):
    """A task model whose config leaves out the input sizes of ``sized_layers`` (``__init__`` arguments):
    ``from_partial_objects`` (registered as its constructor by ``register_task_model``) builds them by
    :meth:`size_layers` and passes every argument on to ``__init__``."""

    #: The ``__init__`` arguments a config gives without their input sizes (``Lazy`` in the config constructor).
    sized_layers: ClassVar[Tuple[str, ...]] = ()

    from_partial_objects = _ConfigConstructor()

    @staticmethod
    def size_layers(config: ConfigArguments) -> None:
        """Builds each of ``sized_layers`` with ``config.build``, in the order their input sizes follow (the
        order also decides which of the seed's random numbers each layer's initial weights take)."""
        raise NotImplementedError


def config_signature(model_class: Type[ConfigSizedModel]) -> inspect.Signature:
    """``__init__``'s arguments less ``self`` and ``**kwargs``, ``sized_layers`` ``Lazy``, ``elmo_at_output``
    a bool, and, where ``**kwargs`` passes it on to AllenNLP's Model, its ``regularizer`` (Model's other
    arguments come from the trainer, not the config)."""
    parameters = []
    passes_model_arguments = False
    for parameter in list(inspect.signature(model_class.__init__).parameters.values())[1:]:
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            passes_model_arguments = True
            continue
        if parameter.name in model_class.sized_layers:
            parameter = parameter.replace(annotation=_lazy(model_class, parameter))
        elif parameter.name == ELMO_AT_OUTPUT:
            parameter = parameter.replace(annotation=bool)
        parameters.append(parameter)
    if passes_model_arguments:
        parameters.append(
            inspect.Parameter(
                "regularizer", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Optional[RegularizerApplicator]
            )
        )
    return inspect.Signature(parameters, return_annotation=model_class)


def _lazy(model_class: Type[ConfigSizedModel], parameter: inspect.Parameter) -> Any:
    """``Lazy[T]`` for a layer annotated ``T``, ``Optional[Lazy[T]]`` for ``Optional[T]``."""
    annotation = parameter.annotation
    if inspect.isclass(annotation):
        return Lazy[annotation]  # type: ignore[valid-type]  # why: the layer's class, read at run time
    members = get_args(annotation)
    if get_origin(annotation) is Union and len(members) == 2 and type(None) in members:
        layer_class = next(member for member in members if member is not type(None))
        return Optional[Lazy[layer_class]]  # type: ignore[valid-type]  # why: as above
    raise TypeError(
        f"{model_class.__name__}.__init__: the sized layer {parameter.name!r} is annotated {annotation!r}; "
        "expected a module class or Optional[...] of one"
    )


def _config_constructor(model_class: Type[SizedModel]) -> Callable[..., SizedModel]:
    signature = config_signature(model_class)

    def from_partial_objects(*args: Any, **kwargs: Any) -> SizedModel:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        config = ConfigArguments(model_class, dict(bound.arguments))
        model_class.size_layers(config)
        return model_class(**config.built())

    from_partial_objects.__signature__ = signature  # type: ignore[attr-defined]  # why: what from_params reads
    from_partial_objects.__qualname__ = f"{model_class.__qualname__}.from_partial_objects"
    from_partial_objects.__doc__ = (
        f"{model_class.__name__} from a config: ``__init__``'s arguments with {', '.join(model_class.sized_layers)} "
        f"``Lazy``, built by ``size_layers``. {inspect.getdoc(model_class.size_layers) or ''}"
    )
    return from_partial_objects
