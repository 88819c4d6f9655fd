"""The ops namespace on PyTorch: RLgraph's NumPy-like op contract (``rlgraph.graph.ops``).

Each op is a thin function over one or two torch calls, resolved once per build into
``component.ops``. Ops that create tensors place them on the current device (see
:mod:`rlgraph_torch.devices`).
"""

from __future__ import annotations

import contextlib
import functools
import math
import types
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from rlgraph.graph import composites
from rlgraph.graph.composites import NUMBERS, eager_scan
from rlgraph.graph.ops import ops_from
from rlgraph_torch.devices import current_device

Tensor = torch.Tensor

_DTYPES: dict[str, torch.dtype] = {
    "float16": torch.float16,
    "float32": torch.float32,
    "float64": torch.float64,
    "int8": torch.int8,
    "int16": torch.int16,
    "int32": torch.int32,
    "int64": torch.int64,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
_NUMPY_DTYPES: dict[torch.dtype, np.dtype] = {value: np.dtype(key) for key, value in _DTYPES.items()}


def torch_dtype(dtype: Any) -> torch.dtype:
    """The torch dtype for a NumPy dtype, its name, a Python type or a torch dtype."""
    found = _DTYPES.get(dtype) if isinstance(dtype, str) else None
    if found is not None:
        return found
    if isinstance(dtype, torch.dtype):
        return dtype
    try:
        return _DTYPES[np.dtype(dtype).name]
    except (KeyError, TypeError):
        raise TypeError(f"The torch backend has no dtype for {dtype!r}.") from None


def numpy_dtype(dtype: torch.dtype) -> np.dtype:
    """The NumPy dtype of a torch dtype."""
    return _NUMPY_DTYPES[dtype]


def tensor(value: Any, dtype: Any = None) -> Tensor:
    """``value`` as a tensor on the current device (tensors pass unchanged unless ``dtype`` differs)."""
    if isinstance(value, Tensor):
        return value if dtype is None else value.to(torch_dtype(dtype))
    if isinstance(value, np.ndarray) and not value.flags.writeable:
        value = value.copy()  # torch would share the read-only memory (and warn)
    return torch.as_tensor(
        value, dtype=None if dtype is None else torch_dtype(dtype), device=current_device()
    )


def _t(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else tensor(value)


def _dims(x: Tensor, axis: Any) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(x.dim()))
    return (axis,) if isinstance(axis, int) else tuple(axis)


# -- creation and conversion ----------------------------------------------------------------------
def zeros(shape: Any, dtype: Any = "float32") -> Tensor:
    return torch.zeros(_shape(shape), dtype=torch_dtype(dtype), device=current_device())


def ones(shape: Any, dtype: Any = "float32") -> Tensor:
    return torch.ones(_shape(shape), dtype=torch_dtype(dtype), device=current_device())


def full(shape: Any, value: Any, dtype: Any = "float32") -> Tensor:
    return torch.full(_shape(shape), value, dtype=torch_dtype(dtype), device=current_device())


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = "int64") -> Tensor:
    if stop is None:
        start, stop = 0, start
    if isinstance(start, Tensor) or isinstance(stop, Tensor):
        start, stop = int(start), int(stop)
    if (stop - start) * step < 0:  # NumPy gives an empty range where torch raises
        stop = start
    return torch.arange(start, stop, step, dtype=torch_dtype(dtype), device=current_device())


def cast(x: Any, dtype: Any) -> Tensor:
    return _t(x).to(torch_dtype(dtype))


def to_numpy(x: Any) -> np.ndarray:
    return x.detach().cpu().numpy() if isinstance(x, Tensor) else np.asarray(x)


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int | Tensor):
        return (int(shape),)
    return tuple(map(int, shape))


# -- shapes ---------------------------------------------------------------------------------------
def _flatten(x: Tensor, start_axis: int = 1) -> Tensor:
    """The axes from ``start_axis`` on as one (of size 1 where none is left: ``torch.flatten`` refuses)."""
    if start_axis < x.dim():
        return torch.flatten(x, start_axis)
    return x.reshape(*x.shape, 1)


def transpose(x: Tensor, axes: Sequence[int] | None = None) -> Tensor:
    return x.permute(*(axes if axes is not None else reversed(range(x.dim()))))


def squeeze(x: Tensor, axis: int | None = None) -> Tensor:
    return torch.squeeze(x) if axis is None else torch.squeeze(x, axis)


def unstack(x: Tensor, axis: int = 0) -> list[Tensor]:
    return list(torch.unbind(x, axis))


def split(x: Tensor, num_or_sizes: Any, axis: int = 0) -> list[Tensor]:
    if isinstance(num_or_sizes, int):
        size = x.shape[axis]
        if size % num_or_sizes:
            raise ValueError(f"split: axis {axis} of size {size} does not divide into {num_or_sizes} pieces.")
        return list(torch.split(x, size // num_or_sizes, dim=axis))
    return list(torch.split(x, list(num_or_sizes), dim=axis))


# -- indexing -------------------------------------------------------------------------------------
def gather(x: Tensor, indices: Any, axis: int = 0) -> Tensor:
    """``np.take(x, indices, axis)``: the output shape is x's with ``axis`` replaced by indices' shape."""
    indices = _t(indices)
    axis = axis % x.dim()
    if indices.dim() == 1:
        return torch.index_select(x, axis, indices)
    taken = torch.index_select(x, axis, indices.reshape(-1))
    return taken.reshape(x.shape[:axis] + indices.shape + x.shape[axis + 1 :])


def one_hot(indices: Any, depth: int, dtype: Any = "float32") -> Tensor:
    return F.one_hot(_t(indices).long(), depth).to(torch_dtype(dtype))


def where(condition: Any, x: Any, y: Any) -> Tensor:
    if not isinstance(x, Tensor) and not isinstance(y, Tensor):
        x = tensor(x)
    return torch.where(_t(condition), x, y)


# -- reductions -------------------------------------------------------------------------------------
def _reduce(name: str) -> Any:
    reduce = getattr(torch, name)

    def op(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
        x = _t(x)
        if axis is None and not keepdims:
            return reduce(x)
        return reduce(x, dim=_dims(x, axis), keepdim=keepdims)

    op.__name__ = name
    return op


def prod(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = _t(x)
    if axis is None and not keepdims:
        return torch.prod(x)
    for dim in sorted((d % x.dim() for d in _dims(x, axis)), reverse=True):
        x = torch.prod(x, dim=dim, keepdim=keepdims)
    return x


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = _t(x)
    return torch.logsumexp(x, dim=_dims(x, axis), keepdim=keepdims)


def var(x: Any, axis: Any = None, keepdims: bool = False) -> Tensor:
    x = _t(x)
    return torch.var(x, dim=_dims(x, axis), correction=0, keepdim=keepdims)


def cumsum(x: Any, axis: int = 0, reverse: bool = False) -> Tensor:
    x = _t(x)
    if reverse:
        return torch.flip(torch.cumsum(torch.flip(x, (axis,)), axis), (axis,))
    return torch.cumsum(x, axis)


def discounted_cumsum(x: Any, discounts: Any, axis: int = 0, reverse: bool = False) -> Tensor:
    """``y[t] = x[t] + discounts[t] * y[t - 1]`` along ``axis`` (``reverse``: ``y[t + 1]``).

    Computed as a scan of ceil(log2 T) vectorized steps (Hillis and Steele) rather than T small
    ones: about 35 times faster at T = 2048 (6 times at T = 128), to float32 precision (the sums
    are grouped differently from a step-by-step loop's: a few ulps of the sum of the terms' magnitudes).
    """
    x = _t(x)
    if isinstance(discounts, int | float):
        factors = torch.full_like(x, discounts)
    else:
        factors = _t(discounts).to(x.dtype)
    sums = _linear_scan(x.movedim(axis, 0), factors.expand_as(x).movedim(axis, 0), reverse)
    return sums.movedim(0, axis)


def _linear_scan(values: Tensor, factors: Tensor, reverse: bool) -> Tensor:
    """The inclusive scan of ``y[t] = values[t] + factors[t] * y[t -/+ 1]`` over axis 0.

    After the step with offset k, position t holds the recurrence over its last 2k steps: its sum,
    and the product of their factors (what the sum before them would be multiplied by).
    """
    steps, offset = values.shape[0], 1
    padding = [0, 0] * (values.dim() - 1)

    def shift(tensor: Tensor) -> Tensor:  # tensor[t -/+ offset], zeros where that is outside
        if reverse:
            return F.pad(tensor[offset:], [*padding, 0, offset])
        return F.pad(tensor[:-offset], [*padding, offset, 0])

    while offset < steps:
        values = torch.addcmul(values, factors, shift(values))
        if 2 * offset < steps:  # the last step needs no products
            factors = factors * shift(factors)
        offset *= 2
    return values


def argsort(x: Any, axis: int = -1, descending: bool = False) -> Tensor:
    return torch.argsort(_t(x), dim=axis, descending=descending, stable=True)


def _any_all(name: str) -> Any:
    reduce = getattr(torch, name)

    def op(x: Any, axis: Any = None) -> Tensor:
        x = _t(x)
        return reduce(x) if axis is None else reduce(x, dim=axis)

    op.__name__ = name
    return op


# -- elementwise --------------------------------------------------------------------------------------
def _unary(function: Any) -> Any:
    def op(x: Any) -> Tensor:
        return function(x if isinstance(x, Tensor) else tensor(x, "float32"))

    op.__name__ = getattr(function, "__name__", "op")
    return op


def clip(x: Any, low: Any, high: Any) -> Tensor:
    if isinstance(low, Tensor) != isinstance(high, Tensor):
        low, high = _t(low), _t(high)
    return torch.clamp(_t(x), low, high)


def maximum(x: Any, y: Any) -> Tensor:
    if not isinstance(y, Tensor):
        return torch.clamp(_t(x), min=y)
    if not isinstance(x, Tensor):
        return torch.clamp(y, min=x)
    return torch.maximum(x, y)


def minimum(x: Any, y: Any) -> Tensor:
    if not isinstance(y, Tensor):
        return torch.clamp(_t(x), max=y)
    if not isinstance(x, Tensor):
        return torch.clamp(y, max=x)
    return torch.minimum(x, y)


def pow(x: Any, y: Any) -> Tensor:
    return torch.pow(_t(x), y)


def exp(x: Any) -> Tensor:
    return torch.exp(x if isinstance(x, Tensor) else tensor(x, "float32"))


def sqrt(x: Any) -> Tensor:
    return torch.sqrt(x) if isinstance(x, Tensor) else tensor(math.sqrt(x))


# -- linear algebra and images ----------------------------------------------------------------------------
def _pair(value: Any) -> tuple[int, int]:
    return (value, value) if isinstance(value, int) else (int(value[0]), int(value[1]))


def _same_padding(size: tuple[int, ...], window: tuple[int, ...], strides: tuple[int, int]) -> list[int]:
    """F.pad's (left, right, top, bottom) for TensorFlow's "same": the extra pixel goes right/bottom."""
    pads = []
    for extent, k, s in zip(size, window, strides):
        total = max((-(-extent // s) - 1) * s + k - extent, 0)
        pads.append((total // 2, total - total // 2))
    (top, bottom), (left, right) = pads
    return [left, right, top, bottom]


def _nchw(x: Tensor, window: tuple[int, ...], strides: tuple[int, int], padding: str, fill: float) -> Tensor:
    x = x.permute(0, 3, 1, 2)
    if padding == "same":
        x = F.pad(x, _same_padding(tuple(x.shape[2:]), window, strides), value=fill)
    elif padding != "valid":
        raise ValueError(f"padding must be 'valid' or 'same', got {padding!r}")
    return x


def conv2d(x: Tensor, kernel: Tensor, strides: Any = (1, 1), padding: str = "valid") -> Tensor:
    strides = _pair(strides)
    inputs = _nchw(x, tuple(kernel.shape[:2]), strides, padding, 0.0)
    return F.conv2d(inputs, kernel.permute(3, 2, 0, 1), stride=strides).permute(0, 2, 3, 1)


def max_pool2d(x: Tensor, pool_size: Any, strides: Any = None, padding: str = "valid") -> Tensor:
    window = _pair(pool_size)
    strides = _pair(strides) if strides is not None else window
    inputs = _nchw(x, window, strides, padding, -math.inf)
    return F.max_pool2d(inputs, window, strides).permute(0, 2, 3, 1)


def resize_images(x: Tensor, size: Any, method: str = "bilinear") -> Tensor:
    if not x.is_floating_point():
        x = x.float()
    mode = {"bilinear": "bilinear", "nearest": "nearest-exact"}.get(method)
    if mode is None:
        raise ValueError(f"resize method must be 'bilinear' or 'nearest', got {method!r}")
    options = {"align_corners": False} if mode == "bilinear" else {}
    resized = F.interpolate(x.permute(0, 3, 1, 2), size=_pair(size), mode=mode, **options)
    return resized.permute(0, 2, 3, 1)


def linear(x: Tensor, kernel: Tensor, bias: Tensor | None = None) -> Tensor:
    """``x @ kernel + bias`` as one fused ``addmm`` for a batch of rows, one op where the core's version runs
    two: 1.3x at acting sizes (one state, where per-op overhead dominates: about 6 us of a DQN's 60 us
    get_action), 0.9x at 256 x 64 (3 us of an update's milliseconds; benchmarks/bench_overrides.py)."""
    if x.dim() == 2 and bias is not None:
        return torch.addmm(bias, x, kernel)
    out = torch.matmul(x, kernel)
    return out if bias is None else out + bias


def lstm(
    x: Tensor,
    initial_state: Any,
    kernel: Tensor,
    recurrent_kernel: Tensor,
    bias: Tensor,
    resets: Any = None,
) -> tuple[Tensor, tuple[Tensor, Tensor]]:
    """One LSTM layer over axis 1 of x: fused (``torch.lstm``), 3 to 5 times the core's version
    (benchmarks/bench_overrides.py), unless a state is reset after the first step: then the core's."""
    h, c = initial_state
    if resets is not None:
        keep = torch.logical_not(_t(resets)).to(x.dtype).unsqueeze(-1)  # (batch, time, 1)
        if x.shape[1] > 1 and not bool(keep[:, 1:].all()):  # the core's zeroes the state at every reset
            return composites.lstm(_COMPLETE, x, initial_state, kernel, recurrent_kernel, bias, resets)
        h, c = h * keep[:, 0], c * keep[:, 0]
    weights = [kernel.t().contiguous(), recurrent_kernel.t().contiguous(), bias, torch.zeros_like(bias)]
    outputs, h_n, c_n = torch.lstm(
        x, (h.unsqueeze(0), c.unsqueeze(0)), weights, True, 1, 0.0, False, False, True
    )
    return outputs, (h_n.squeeze(0), c_n.squeeze(0))


# -- random: each graph draws from streams of its own ------------------------------------------------------
class RandomStreams:
    """One graph's random number generators: a ``torch.Generator`` per device, seeded from the graph's
    seed (None: from the operating system's entropy). ``reseed`` restarts them; ``state`` and
    ``set_state`` save and continue them."""

    def __init__(self, seed: int | None) -> None:
        self.seed = seed
        self._generators: dict[Any, torch.Generator] = {}

    def reseed(self, seed: int | None) -> None:
        self.seed = seed
        self._generators.clear()

    def state(self) -> dict[str, np.ndarray]:
        """Each device's generator state, by device name (devices not drawn from yet are left out)."""
        return {str(device or "cpu"): g.get_state().numpy() for device, g in self._generators.items()}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        for name, value in state.items():
            device = torch.device(name)
            self.generator(None if device.type == "cpu" else device).set_state(torch.from_numpy(value))

    def generator(self, device: torch.device | None) -> torch.Generator:
        found = self._generators.get(device)
        if found is None:
            found = self._generators[device] = torch.Generator(device=device or "cpu")
            if self.seed is None:
                found.seed()
            else:  # each device its own stream, all from the graph's seed
                index = 0 if device is None or device.type == "cpu" else 1 + (device.index or 0)
                found.manual_seed((int(self.seed) * 1_000_003 + index) % 2**63)
        return found


def random_ops(streams: RandomStreams) -> dict[str, Any]:
    """The random ops of the contract, drawing from ``streams``.

    They run on every action (exploration draws): each is one torch call and a few lookups."""
    generators = streams._generators  # found directly; streams.generator() makes the missing ones

    def random_uniform(shape: Any, low: Any = 0.0, high: Any = 1.0, dtype: Any = "float32") -> Tensor:
        device = current_device()
        values = torch.rand(
            _shape(shape),
            dtype=torch_dtype(dtype),
            device=device,
            generator=generators.get(device) or streams.generator(device),
        )
        if type(low) in NUMBERS and type(high) in NUMBERS and low == 0 and high == 1:
            return values
        return values * (high - low) + low

    def random_normal(shape: Any, mean: Any = 0.0, std: Any = 1.0, dtype: Any = "float32") -> Tensor:
        device = current_device()
        values = torch.randn(
            _shape(shape),
            dtype=torch_dtype(dtype),
            device=device,
            generator=generators.get(device) or streams.generator(device),
        )
        if isinstance(mean, Tensor) or isinstance(std, Tensor) or (mean, std) != (0.0, 1.0):
            return values * std + mean
        return values

    def random_int(shape: Any, low: Any, high: Any, dtype: Any = "int64") -> Tensor:
        device = current_device()
        generator = generators.get(device) or streams.generator(device)
        if isinstance(low, Tensor) or isinstance(high, Tensor):
            # Tensor bounds: scale uniform draws (no device-to-host sync to read the bounds).
            uniform = torch.rand(_shape(shape), dtype=torch.float64, device=device, generator=generator)
            return (uniform * (high - low)).floor().to(torch_dtype(dtype)) + low
        return torch.randint(
            low, high, _shape(shape), dtype=torch_dtype(dtype), device=device, generator=generator
        )

    def random_bernoulli(shape: Any, p: Any) -> Tensor:
        # A uniform draw below p, from the graph's generator, as every backend draws it: torch's bernoulli_
        # (2 us faster at batch 1) draws through MKL on Intel CPUs, so a seeded run would differ between
        # Intel and other processors.
        device = current_device()
        generator = generators.get(device) or streams.generator(device)
        return torch.rand(_shape(shape), device=device, generator=generator) < p

    def random_gamma(alpha: Any, dtype: Any = "float32") -> Tensor:
        alpha = _t(alpha).to(torch_dtype(dtype))
        # torch draws Gamma variates from the default generator only: run it on the graph's stream.
        generator = streams.generator(current_device())
        with _default_generator_as(generator, alpha.device):
            return torch._standard_gamma(alpha)

    return {
        "random_uniform": random_uniform,
        "random_normal": random_normal,
        "random_int": random_int,
        "random_bernoulli": random_bernoulli,
        "random_gamma": random_gamma,
        "reseed": streams.reseed,
        "random_state": streams.state,
        "set_random_state": streams.set_state,
    }


@contextlib.contextmanager
def _default_generator_as(generator: torch.Generator, device: torch.device) -> Iterator[None]:
    """Torch's default generator for ``device`` in ``generator``'s state meanwhile; ``generator``
    advances as it would have."""
    cuda = device.type == "cuda"
    get_state = functools.partial(torch.cuda.get_rng_state, device) if cuda else torch.random.get_rng_state
    set_state = (
        functools.partial(torch.cuda.set_rng_state, device=device) if cuda else torch.random.set_rng_state
    )
    saved = get_state()
    set_state(generator.get_state())
    try:
        yield
    finally:
        generator.set_state(get_state())
        set_state(saved)


# -- variables ---------------------------------------------------------------------------------------------------
def assign(variable: Tensor, value: Any) -> Tensor:
    value = value if isinstance(value, Tensor) else tensor(value, variable.dtype)
    if variable.requires_grad:
        with torch.no_grad():
            variable.copy_(value)
    else:
        variable.copy_(value)
    if value.shape == variable.shape and value.dtype == variable.dtype:
        return value  # the new value, without copying the variable back
    return variable.detach().clone()


def assign_add(variable: Tensor, value: Any) -> Tensor:
    if variable.requires_grad:
        with torch.no_grad():
            variable.add_(value)
    else:
        variable.add_(value)
    return variable.detach().clone()


def assign_lerp(variables: list[Tensor], values: list[Any], weight: float) -> None:
    with torch.no_grad():
        if weight == 1.0:
            torch._foreach_copy_(variables, values)
        else:
            torch._foreach_lerp_(variables, values, weight)


def scatter_update(variable: Tensor, indices: Any, updates: Any) -> None:
    indices, updates = _t(indices), _t(updates)
    if indices.dim() != 1:
        indices, updates = indices.reshape(-1), updates.reshape(-1, *variable.shape[1:])
    if updates.dtype != variable.dtype:
        updates = updates.to(variable.dtype)
    if variable.requires_grad:
        with torch.no_grad():
            variable.index_copy_(0, indices, updates)
    else:
        variable.index_copy_(0, indices, updates)


def read(variable: Tensor) -> Tensor:
    return variable.clone()


OPS = ops_from(
    globals(),
    constant=tensor,
    zeros_like=torch.zeros_like,
    ones_like=torch.ones_like,
    shape=lambda x: tuple(x.shape),
    reshape=lambda x, shape: torch.reshape(x, tuple(shape)),
    expand_dims=torch.unsqueeze,
    concat=lambda xs, axis=0: torch.cat(list(xs), axis),
    stack=lambda xs, axis=0: torch.stack(list(xs), axis),
    tile=lambda x, reps: torch.tile(x, tuple(reps)),
    flatten=_flatten,
    take_along_axis=lambda x, indices, axis: torch.take_along_dim(x, indices, dim=axis),
    argmax=lambda x, axis=-1: torch.argmax(x, dim=axis),
    argmin=lambda x, axis=-1: torch.argmin(x, dim=axis),
    sum=_reduce("sum"),
    mean=_reduce("mean"),
    max=_reduce("amax"),
    min=_reduce("amin"),
    any=_any_all("any"),
    all=_any_all("all"),
    abs=_unary(torch.abs),
    log=_unary(torch.log),
    log1p=_unary(torch.log1p),
    square=_unary(torch.square),
    sign=_unary(torch.sign),
    floor=_unary(torch.floor),
    tanh=_unary(torch.tanh),
    sigmoid=_unary(torch.sigmoid),
    relu=_unary(torch.relu),
    softplus=_unary(F.softplus),
    lgamma=_unary(torch.lgamma),
    digamma=_unary(torch.digamma),
    softmax=lambda x, axis=-1: torch.softmax(x, axis),
    log_softmax=lambda x, axis=-1: torch.log_softmax(x, axis),
    equal=lambda x, y: torch.eq(_t(x), y),
    logical_and=lambda x, y: torch.logical_and(_t(x), _t(y)),
    logical_or=lambda x, y: torch.logical_or(_t(x), _t(y)),
    logical_not=lambda x: torch.logical_not(_t(x)),
    isfinite=lambda x: torch.isfinite(_t(x)),
    matmul=torch.matmul,
    einsum=torch.einsum,
    stop_gradient=lambda x: x.detach(),
    **random_ops(RandomStreams(None)),
)
OPS.scan = functools.partial(eager_scan, OPS)
#: The ops with the core's composites, for the overrides that fall back on them.
_COMPLETE = composites.complete_ops(types.SimpleNamespace(**vars(OPS)))


def create_ops(seed: int | None) -> types.SimpleNamespace:
    """The ops of one graph: :data:`OPS` with random ops drawing from the graph's own streams."""
    return types.SimpleNamespace(**{**vars(OPS), **random_ops(RandomStreams(seed))})
