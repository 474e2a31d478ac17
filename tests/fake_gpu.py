"""A stand-in GPU on the CPU, for testing the code paths that run on a GPU only.

Inside ``FakeGPU()`` a tensor made on (or moved to) ``DEVICE`` is an ``OnDevice``: it computes
with real numbers on the CPU, but its ``device`` is not the CPU, so every ``device.type == "cpu"``
branch takes its GPU side. It refuses what CUDA refuses, so a device bug fails loudly:

- an op mixing it with a host tensor (other than a 0-dim one, or the host lengths/indices that
  CUDA's packing and indexing ops accept): a tensor made without ``device=``, or on a hard-coded
  device;
- ``.numpy()`` (CUDA tensors need ``.cpu()`` first).

``meta`` stands in for ``cuda`` because a CPU build of torch has no CUDA device guard (autograd
aborts the process on a ``cuda`` tensor); meta has one and is neither the CPU nor a real device.
"""

from __future__ import annotations

import contextlib

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves, tree_map

from attnlearn.runtime.device import float32_precision

DEVICE = torch.device("meta")
aten = torch.ops.aten

# ops whose first argument is on the GPU while some others may stay on the host, as CUDA allows:
# lengths and batch sizes of packed sequences, index tensors
HOST_ARGS_OK = {aten._pack_padded_sequence.default, aten._pad_packed_sequence.default, aten.lstm.data,
                aten.index.Tensor, aten.index_put_.default, aten.index_put.default,
                aten._index_put_impl_.default}
# outputs that CUDA leaves on the host (by position): packed batch sizes, padded lengths
HOST_OUTPUTS = {aten._pack_padded_sequence.default: (1,), aten._pad_packed_sequence.default: (1,)}
COPIES = {aten.copy_.default, aten._to_copy.default}  # the ops that move data between devices


class OnDevice(torch.Tensor):
    """A CPU tensor ``elem`` that says it lives on ``DEVICE``."""

    @staticmethod
    def __new__(cls, elem: torch.Tensor):
        return torch.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(), dtype=elem.dtype,
                                                   storage_offset=elem.storage_offset(), device=DEVICE,
                                                   requires_grad=elem.requires_grad)

    def __init__(self, elem: torch.Tensor):
        self.elem = elem

    def __repr__(self):
        return f"OnDevice({self.elem!r})"

    def __reduce_ex__(self, protocol):
        """torch.save writes a GPU tensor's numbers (to be read back with map_location)."""
        return self.elem.__reduce_ex__(protocol)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.numpy:
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first.")
        if func is torch.Tensor.tolist:  # CUDA copies to the host itself
            return args[0].elem.tolist()
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **(kwargs or {}))

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError(f"{func} on a stand-in GPU tensor outside FakeGPU()")


def _check_devices(func, args, kwargs):
    """Raise where CUDA would: host tensors beside GPU ones."""
    tensors = [x for x in tree_leaves((args, kwargs)) if isinstance(x, torch.Tensor)]
    if not any(isinstance(x, OnDevice) for x in tensors) or func in COPIES:
        return
    if func in HOST_ARGS_OK:
        if not isinstance(args[0], OnDevice):
            raise RuntimeError(f"{func}: a host tensor indexed by (or packed with) GPU tensors")
        return
    host = [tuple(x.shape) for x in tensors if not isinstance(x, OnDevice) and x.dim() > 0]
    if host:
        raise RuntimeError(f"Expected all tensors to be on the same device: {func} got host tensor(s) of "
                           f"shape {host} beside GPU tensors")


class _Ops(TorchDispatchMode):
    """Runs every op on the CPU, tagging results on ``DEVICE`` as ``OnDevice`` (see the module)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        _check_devices(func, args, kwargs)
        unwrap = lambda x: x.elem if isinstance(x, OnDevice) else x  # noqa: E731
        kw = tree_map(unwrap, kwargs)
        target = kwargs.get("device")
        if target is not None:  # a factory or a move: made on the host, tagged if its target is DEVICE
            kw["device"] = torch.device("cpu")
            on_device = torch.device(target).type == DEVICE.type
        else:
            on_device = any(isinstance(x, OnDevice) for x in tree_leaves(args))
        out = func(*tree_map(unwrap, args), **kw)
        if func is aten.copy_.default:  # in place: the destination keeps its own device
            return args[0]
        if not on_device:
            return out
        if func in HOST_OUTPUTS:
            return tuple(x if i in HOST_OUTPUTS[func] else OnDevice(x) for i, x in enumerate(out))
        return tree_map(lambda x: OnDevice(x) if isinstance(x, torch.Tensor) else x, out)


class _FromData(TorchFunctionMode):
    """torch.tensor / as_tensor of Python data build their tensor below the dispatcher (no op
    that _Ops sees): built on the host here, then moved by an op."""

    FUNCS = {torch.tensor, torch.as_tensor, torch.asarray}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        target = kwargs.get("device")
        if func in self.FUNCS and target is not None and torch.device(target).type == DEVICE.type:
            return func(*args, **{**kwargs, "device": "cpu"}).to(DEVICE)
        return func(*args, **kwargs)


@contextlib.contextmanager
def FakeGPU():  # noqa: N802 (used like a class)
    """The stand-in GPU, while active."""
    with _FromData(), _Ops():
        yield


@contextlib.contextmanager
def on_device(kind: str):
    """(device, context) for a test run on ``kind``: "fake" (the stand-in) or "cuda" (a real GPU),
    in full float32 as every job runs (jobs.run): under torch's default, cuDNN's LSTMs run in
    TF32, the inferred cause of the analyses' and the classifier's probe's ~1e-3 from the CPU
    on an H200 (docs/gpu_branches.md)."""
    if kind == "cuda":
        with float32_precision(False):
            yield torch.device("cuda")
        return
    with FakeGPU():
        yield DEVICE
