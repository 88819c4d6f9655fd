"""The ops contract: the typed namespace every graph function uses as ``self.ops``.

:class:`Ops` lists every op with its signature and meaning: NumPy-like names and semantics; axes are
ints, ``axis=None`` means all axes. Tensors also support Python arithmetic and comparison operators,
and basic indexing (ints, slices, ``None``, ``...``) as NumPy arrays do.

A backend gives the *primitives*. The ops marked :func:`optional` are composites the core writes once
from the primitives (:mod:`rlgraph.graph.composites`); a backend overrides one only where its own is
measurably faster, and the parity cases hold its override equal to the core's. :func:`missing_ops`
names the primitives a namespace lacks.

What a graph function must not do, so that it runs on every backend (define-by-run and compiled
static graphs alike): index with tensors (use ``gather``/``take_along_axis``), assign into a
tensor (``x[i] = v``; variables change only through ``assign``/``assign_add``/``scatter_update``),
branch in Python on a tensor's value (use ``where``), loop in Python over a tensor's length (use
``scan``), or keep state in Python attributes (use variables).

Scalars: a root API method's input of a scalar space (no shape, no batch or time rank: a time step)
may reach a define-by-run backend's graph functions as a Python number, and ``cast``, ``clip``,
``minimum``, ``maximum``, ``pow``, ``exp`` and ``stop_gradient`` given only Python numbers may return one. Use Python
arithmetic and these ops on such an input (as a decay does); the result mixes with tensors as a
number does.
"""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeAlias, TypeVar

import numpy as np

#: A backend's tensor (``torch.Tensor``, ``tf.Tensor``, ``jax.Array``, ``np.ndarray``): the core has no
#: type of its own for it, so the contract names it and leaves it open.
Tensor: TypeAlias = Any
#: A backend's variable (what ``create_variable`` made); ops take variables wherever they take tensors.
Variable: TypeAlias = Any
#: A tensor, a NumPy array or a Python number: what ops accept as an operand.
TensorLike: TypeAlias = Any
#: A NumPy dtype, its name (``"float32"``) or a Python type.
DType: TypeAlias = str | np.dtype | type
#: A shape: a tuple (or list) of sizes, or one size; sizes may be scalar tensors inside compiled functions.
Shape: TypeAlias = Sequence[Any] | int
#: One axis, several, or None for all.
Axes: TypeAlias = int | Sequence[int] | None
#: A nested structure (tuples, lists, dicts) of tensors, as :mod:`rlgraph.utils.nested` walks it.
Nest: TypeAlias = Any

_Function = TypeVar("_Function", bound=Callable[..., Any])


def optional(method: _Function) -> _Function:
    """Mark an op of :class:`Ops` as a composite the core provides: a backend may leave it out."""
    method.__rlgraph_optional__ = True  # type: ignore[attr-defined]
    return method


class Ops(Protocol):
    """The ops namespace of one graph (a backend's ``create_ops(seed)``, completed by the core)."""

    # -- creation and conversion ------------------------------------------------------------------
    def constant(self, value: Any, dtype: DType | None = None) -> Tensor:
        """A tensor holding ``value``."""

    def zeros(self, shape: Shape, dtype: DType = "float32") -> Tensor:
        """Zeros of ``shape``."""

    def ones(self, shape: Shape, dtype: DType = "float32") -> Tensor:
        """Ones of ``shape``."""

    def zeros_like(self, x: TensorLike) -> Tensor:
        """Zeros of x's shape and dtype."""

    def ones_like(self, x: TensorLike) -> Tensor:
        """Ones of x's shape and dtype."""

    def full(self, shape: Shape, value: Any, dtype: DType = "float32") -> Tensor:
        """``value`` everywhere in ``shape``."""

    def arange(self, start: Any, stop: Any = None, step: int = 1, dtype: DType = "int64") -> Tensor:
        """``start, start + step, ...`` below ``stop`` (``arange(n)``: 0 to n - 1)."""

    def cast(self, x: TensorLike, dtype: DType) -> Tensor:
        """x as ``dtype`` (a NumPy dtype name: ``"float32"``, ``"int64"``, ``"bool"``)."""

    def shape(self, x: TensorLike) -> tuple[Any, ...]:
        """The dynamic shape as a tuple of ints (or scalar tensors where unknown)."""

    def to_numpy(self, x: TensorLike) -> np.ndarray:
        """A NumPy array (outside compiled functions only)."""

    # -- shape manipulation -----------------------------------------------------------------------
    def reshape(self, x: TensorLike, shape: Shape) -> Tensor:
        """x with the new ``shape`` (one size may be -1)."""

    def expand_dims(self, x: TensorLike, axis: int) -> Tensor:
        """x with a new axis of size 1 at ``axis``."""

    def squeeze(self, x: TensorLike, axis: int | None = None) -> Tensor:
        """x without ``axis`` (of size 1), or without every axis of size 1."""

    def transpose(self, x: TensorLike, axes: Sequence[int] | None = None) -> Tensor:
        """x's axes in the order ``axes`` (None: reversed)."""

    def concat(self, xs: Sequence[TensorLike], axis: int = 0) -> Tensor:
        """The tensors joined along ``axis``."""

    def stack(self, xs: Sequence[TensorLike], axis: int = 0) -> Tensor:
        """The tensors stacked along a new ``axis``."""

    def unstack(self, x: TensorLike, axis: int = 0) -> list[Tensor]:
        """The slices of x along ``axis``, as a list."""

    def tile(self, x: TensorLike, reps: Sequence[int]) -> Tensor:
        """x repeated ``reps[i]`` times along axis i."""

    def flatten(self, x: TensorLike, start_axis: int = 1) -> Tensor:
        """x with every axis from ``start_axis`` on merged into one."""

    def split(self, x: TensorLike, num_or_sizes: int | Sequence[int], axis: int = 0) -> list[Tensor]:
        """x in pieces along ``axis``: a count of equal pieces, or their sizes."""

    # -- indexing ---------------------------------------------------------------------------------
    def gather(self, x: TensorLike, indices: TensorLike, axis: int = 0) -> Tensor:
        """``np.take(x, indices, axis)``: x's shape with ``axis`` replaced by the indices' shape."""

    def take_along_axis(self, x: TensorLike, indices: TensorLike, axis: int) -> Tensor:
        """``np.take_along_axis(x, indices, axis)``."""

    def one_hot(self, indices: TensorLike, depth: int, dtype: DType = "float32") -> Tensor:
        """One-hot vectors of length ``depth`` (a new last axis)."""

    def where(self, condition: TensorLike, x: TensorLike, y: TensorLike) -> Tensor:
        """x where ``condition`` is true, else y (broadcast)."""

    def argmax(self, x: TensorLike, axis: int = -1) -> Tensor:
        """The int64 index of the largest entry along ``axis``."""

    def argmin(self, x: TensorLike, axis: int = -1) -> Tensor:
        """The int64 index of the smallest entry along ``axis``."""

    def argsort(self, x: TensorLike, axis: int = -1, descending: bool = False) -> Tensor:
        """int64 indices that sort x along ``axis``; stable (equal keys keep their order, descending too)."""

    # -- reductions -------------------------------------------------------------------------------
    def sum(self, x: TensorLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """The sum over ``axis``."""

    def mean(self, x: TensorLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """The mean over ``axis``."""

    def max(self, x: TensorLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """The maximum over ``axis``."""

    def min(self, x: TensorLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """The minimum over ``axis``."""

    def prod(self, x: TensorLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """The product over ``axis``."""

    def var(self, x: TensorLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """The population variance over ``axis``."""

    def logsumexp(self, x: TensorLike, axis: Axes = None, keepdims: bool = False) -> Tensor:
        """``log(sum(exp(x)))`` over ``axis``, computed stably."""

    def any(self, x: TensorLike, axis: int | None = None) -> Tensor:
        """Whether any entry along ``axis`` is true."""

    def all(self, x: TensorLike, axis: int | None = None) -> Tensor:
        """Whether every entry along ``axis`` is true."""

    def cumsum(self, x: TensorLike, axis: int = 0, reverse: bool = False) -> Tensor:
        """Running sums along ``axis`` (``reverse``: from the end)."""

    @optional
    def discounted_cumsum(
        self, x: TensorLike, discounts: TensorLike | float, axis: int = 0, reverse: bool = False
    ) -> Tensor:
        """``y[t] = x[t] + discounts[t] * y[t - 1]`` along ``axis`` (``y[0] = x[0]``); ``reverse``:
        ``y[t] = x[t] + discounts[t] * y[t + 1]`` (``y[T - 1] = x[T - 1]``).

        ``discounts`` is a Python float or a tensor of x's shape (zeros cut the sum: episode ends).
        Differentiable in x and discounts; T may be unknown inside compiled functions.
        """

    # -- elementwise math -------------------------------------------------------------------------
    def abs(self, x: TensorLike) -> Tensor:
        """``|x|``."""

    def exp(self, x: TensorLike) -> Tensor:
        """``e ** x``."""

    def log(self, x: TensorLike) -> Tensor:
        """The natural logarithm."""

    def log1p(self, x: TensorLike) -> Tensor:
        """``log(1 + x)``, accurate for small x."""

    def sqrt(self, x: TensorLike) -> Tensor:
        """The square root."""

    def square(self, x: TensorLike) -> Tensor:
        """``x * x``."""

    def pow(self, x: TensorLike, y: TensorLike) -> Tensor:
        """``x ** y``."""

    def sign(self, x: TensorLike) -> Tensor:
        """-1, 0 or 1."""

    def floor(self, x: TensorLike) -> Tensor:
        """The largest integer not above x (as x's dtype)."""

    def clip(self, x: TensorLike, low: TensorLike, high: TensorLike) -> Tensor:
        """x limited to ``[low, high]``."""

    def maximum(self, x: TensorLike, y: TensorLike) -> Tensor:
        """The larger of x and y, elementwise."""

    def minimum(self, x: TensorLike, y: TensorLike) -> Tensor:
        """The smaller of x and y, elementwise."""

    def tanh(self, x: TensorLike) -> Tensor:
        """The hyperbolic tangent."""

    def sigmoid(self, x: TensorLike) -> Tensor:
        """``1 / (1 + exp(-x))``."""

    def relu(self, x: TensorLike) -> Tensor:
        """``max(x, 0)``."""

    def softplus(self, x: TensorLike) -> Tensor:
        """``log(1 + exp(x))``, computed stably."""

    def lgamma(self, x: TensorLike) -> Tensor:
        """``log |Gamma(x)|``."""

    def digamma(self, x: TensorLike) -> Tensor:
        """The derivative of ``lgamma``."""

    def softmax(self, x: TensorLike, axis: int = -1) -> Tensor:
        """``exp(x) / sum(exp(x))`` along ``axis``."""

    def log_softmax(self, x: TensorLike, axis: int = -1) -> Tensor:
        """``log(softmax(x))``, computed stably."""

    def equal(self, x: TensorLike, y: TensorLike) -> Tensor:
        """Whether x equals y, elementwise."""

    def logical_and(self, x: TensorLike, y: TensorLike) -> Tensor:
        """x and y, elementwise."""

    def logical_or(self, x: TensorLike, y: TensorLike) -> Tensor:
        """x or y, elementwise."""

    def logical_not(self, x: TensorLike) -> Tensor:
        """Not x, elementwise."""

    def isfinite(self, x: TensorLike) -> Tensor:
        """Whether x is neither infinite nor NaN."""

    # -- linear algebra and images (channels last: NHWC) ------------------------------------------
    def matmul(self, x: TensorLike, y: TensorLike) -> Tensor:
        """The matrix product (batched over leading axes)."""

    @optional
    def linear(self, x: TensorLike, kernel: TensorLike, bias: TensorLike | None = None) -> Tensor:
        """``matmul(x, kernel) + bias``, fused where the backend can."""

    def einsum(self, subscripts: str, *operands: TensorLike) -> Tensor:
        """``np.einsum(subscripts, *operands)``."""

    def conv2d(
        self, x: TensorLike, kernel: TensorLike, strides: int | Sequence[int] = (1, 1), padding: str = "valid"
    ) -> Tensor:
        """A 2-D convolution: x NHWC, kernel ``(kh, kw, in, out)``; padding ``"valid"`` or ``"same"``."""

    def max_pool2d(
        self,
        x: TensorLike,
        pool_size: int | Sequence[int],
        strides: int | Sequence[int] | None = None,
        padding: str = "valid",
    ) -> Tensor:
        """Max pooling of x NHWC (strides default to the pool size)."""

    def resize_images(self, x: TensorLike, size: int | Sequence[int], method: str = "bilinear") -> Tensor:
        """x NHWC resized to ``(height, width) = size``, ``"bilinear"`` or ``"nearest"``."""

    # -- recurrence -------------------------------------------------------------------------------
    def scan(
        self, step: Callable[[Nest, Nest], Nest], initial: Nest, xs: Nest, reverse: bool = False
    ) -> Nest:
        """The carries of a recurrence over axis 0 of ``xs``, stacked along a new axis 0.

        ``carry[t] = step(carry[t - 1], x[t])`` with ``carry[-1] = initial``; ``reverse`` runs from the
        last step down (``carry[t] = step(carry[t + 1], x[t])``, the result still in time order).
        ``initial`` and each carry are nested alike (tensors in tuples, lists or dicts) and keep their
        shapes and dtypes; ``xs`` is nested too, every leaf with the same length T along axis 0 (T may
        be unknown inside compiled functions; T = 0 gives empty stacks). ``step`` is a pure function of
        its arguments: it may not write variables. Differentiable in ``initial`` and ``xs``.
        """

    @optional
    def lstm(
        self,
        x: TensorLike,
        initial_state: tuple[TensorLike, TensorLike],
        kernel: TensorLike,
        recurrent_kernel: TensorLike,
        bias: TensorLike,
        resets: TensorLike | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """One LSTM layer over axis 1 of x ``(batch, time, in)``: ``(outputs (batch, time, units), (h, c)
        after the last step)``.

        ``initial_state`` is ``(h, c)``, each ``(batch, units)``; ``kernel`` ``(in, 4 units)``,
        ``recurrent_kernel`` ``(units, 4 units)``, ``bias`` ``(4 units,)``, gates in the order input,
        forget, cell, output. ``resets`` ``(batch, time)`` bool or None: where true, h and c are zeroed
        before that step (an episode starts there).
        """

    # -- gradients and control --------------------------------------------------------------------
    def stop_gradient(self, x: TensorLike) -> Tensor:
        """x, through which no gradient flows."""

    # -- random: each graph's own streams (create_ops(seed)), so graphs in one process draw apart ---
    def random_uniform(
        self, shape: Shape, low: TensorLike = 0.0, high: TensorLike = 1.0, dtype: DType = "float32"
    ) -> Tensor:
        """Uniform draws over ``[low, high)``."""

    def random_normal(
        self, shape: Shape, mean: TensorLike = 0.0, std: TensorLike = 1.0, dtype: DType = "float32"
    ) -> Tensor:
        """Normal draws."""

    def random_int(self, shape: Shape, low: TensorLike, high: TensorLike, dtype: DType = "int64") -> Tensor:
        """Integers drawn uniformly over ``[low, high)``."""

    @optional
    def random_bernoulli(self, shape: Shape, p: TensorLike) -> Tensor:
        """Bools, each true with probability ``p`` (a number, or a tensor broadcastable to ``shape``):
        ``random_uniform(shape) < p``, as one op where the backend has one (an epsilon-greedy decision
        per action)."""

    def random_gamma(self, alpha: TensorLike, dtype: DType = "float32") -> Tensor:
        """Gamma(alpha, 1) draws, shaped like ``alpha``."""

    def reseed(self, seed: int | None) -> None:
        """Restart the graph's random streams from ``seed`` (None: from entropy). Not for graph
        functions: the executor calls it after the build."""

    def random_state(self) -> dict[str, np.ndarray]:
        """The graph's random streams' state as NumPy arrays (for checkpoints). Not for graph functions."""

    def set_random_state(self, state: Mapping[str, np.ndarray]) -> None:
        """Continue the streams from what ``random_state()`` returned on the same backend. Not for graph
        functions."""

    # -- variables (in-graph state) ---------------------------------------------------------------
    def assign(self, variable: Variable, value: TensorLike) -> Tensor:
        """Write ``value`` into ``variable``; the variable's new value."""

    def assign_add(self, variable: Variable, value: TensorLike) -> Tensor:
        """Add ``value`` to ``variable``; the new value."""

    @optional
    def assign_lerp(self, variables: Sequence[Variable], values: Sequence[TensorLike], weight: float) -> None:
        """``variables[i] += weight * (values[i] - variables[i])`` for each i, fused where the backend can
        (weight 1 copies: target networks)."""

    @optional
    def assign_if(
        self, condition: TensorLike, variables: Sequence[Variable], values: Sequence[TensorLike]
    ) -> None:
        """Write ``values[i]`` into ``variables[i]``, every one where the scalar bool ``condition`` holds and none
        where it does not (an optimizer step that must change nothing after a non-finite loss)."""

    def scatter_update(self, variable: Variable, indices: TensorLike, updates: TensorLike) -> None:
        """``variable[indices] = updates`` along axis 0. Give unique indices: where one repeats, a backend
        may keep any of its updates (NumPy, PyTorch on the CPU and JAX keep the last)."""

    def read(self, variable: Variable) -> Tensor:
        """A snapshot of the variable's current value (later writes do not change it); ops take
        variables directly, so read only what must outlive a write."""


def _members() -> dict[str, Callable[..., Any]]:
    return {
        name: member for name, member in vars(Ops).items() if inspect.isfunction(member) and name[0] != "_"
    }


#: Every op of the contract: name -> its signature and meaning.
OPS: dict[str, str] = {
    name: f"{name}{inspect.signature(member)}".replace("(self, ", "(").replace("(self)", "()")
    + f": {inspect.getdoc(member)}"
    for name, member in _members().items()
}
#: The ops the core composes from the others (:mod:`rlgraph.graph.composites`): a backend may leave them out.
OPTIONAL_OPS: frozenset[str] = frozenset(
    name for name, member in _members().items() if getattr(member, "__rlgraph_optional__", False)
)
#: The ops a backend must give.
PRIMITIVE_OPS: tuple[str, ...] = tuple(name for name in OPS if name not in OPTIONAL_OPS)


def ops_from(module: Mapping[str, Any], **ops: Callable[..., Any]) -> types.SimpleNamespace:
    """A backend's ops namespace: each op of the contract that ``module`` (a module's ``globals()``) defines
    as a function of that name (``sum_``, with a trailing underscore, for one that would shadow a builtin),
    and ``ops``, which give the rest (aliases, lambdas) and win over the module's."""
    name = module["__name__"]
    found = {
        op: function
        for op in OPS
        for function in (module.get(op), module.get(f"{op}_"))
        if callable(function) and getattr(function, "__module__", None) == name
    }
    return types.SimpleNamespace(**{**found, **ops})


def missing_ops(namespace: object) -> list[str]:
    """The primitives of the contract that ``namespace`` lacks."""
    return [name for name in PRIMITIVE_OPS if not callable(getattr(namespace, name, None))]
