"""DLPack tensors for netra's C ABI (netra/c/netra.h), built from a torch tensor's metadata.

`Tensors(n)` owns n DLTensor structs with their shape and strides arrays, allocated once (per
handle, per operation); `fill(*tensors)` writes each torch tensor's data_ptr, dtype, device, shape
and strides into them — no copy of the data, no new ctypes object — and the preallocated
pointers (`pointers`) are what the C call takes. None fills a NULL tensor (the contract refuses
it by name). A calls's tensors are filled and passed on the calling thread; one `Tensors` is not
shared between threads (the handles hold one per operation and a lock-free call path, so keep a
handle on one thread at a time, as its workspace already requires one stream at a time).

Element types follow DLPack: float32 (2, 32), bfloat16 (4, 16), int64 (0, 64), ...; FP8 E4M3 is
DLPack 1.x's kDLFloat8_e4m3fn (10, 8) and E5M2 kDLFloat8_e5m2 (12, 8). Devices: kDLCUDA (2) on
CUDA torch, kDLROCM (10) on ROCm torch, kDLCPU (1).
"""
import ctypes

import torch

MAX_RANK = 8  # dimensions a Tensors slot holds; netra's contracts take at most 4


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


POINTER = ctypes.POINTER(DLTensor)  # the argtype of a tensor argument

_CODES = {"float32": (2, 32), "float64": (2, 64), "float16": (2, 16), "bfloat16": (4, 16), "int8": (0, 8), "int16": (0, 16),
          "int32": (0, 32), "int64": (0, 64), "uint8": (1, 8), "uint16": (1, 16), "uint32": (1, 32), "uint64": (1, 64),
          "bool": (6, 8), "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8)}
DTYPES = {getattr(torch, name): code for name, code in _CODES.items() if isinstance(getattr(torch, name, None), torch.dtype)}
_OTHER = (3, 0)  # kDLOpaqueHandle: a torch dtype netra has no DLPack code for (every contract refuses it)
_GPU = 10 if getattr(torch.version, "hip", None) else 2


def device_type(device):
    """The DLPack device type of a torch device."""
    return _GPU if device.type == "cuda" else 1 if device.type == "cpu" else 12  # kDLExtDev: anything else


class Tensors:
    """n preallocated DLTensors; fill() points them at torch tensors."""

    def __init__(self, n):
        self._structs = [DLTensor() for _ in range(n)]
        self._shapes = [(ctypes.c_int64 * MAX_RANK)() for _ in range(n)]
        self._strides = [(ctypes.c_int64 * MAX_RANK)() for _ in range(n)]
        for dl, shape, strides in zip(self._structs, self._shapes, self._strides):
            dl.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
            dl.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
            dl.dtype.lanes = 1
        self._pointers = [ctypes.pointer(dl) for dl in self._structs]
        self._null = POINTER()
        self._args = list(self._pointers)

    def fill(self, *tensors):
        """The C arguments for these torch tensors (None: a NULL DLTensor), in order: one list,
        reused by every call."""
        args = self._args
        for i, t in enumerate(tensors):
            if t is None:
                args[i] = self._null
                continue
            dl, shape, strides = self._structs[i], self._shapes[i], self._strides[i]
            rank = t.dim()
            if rank > MAX_RANK:
                raise ValueError(f"netra: a tensor of {rank} dimensions (netra's contracts take at most 4)")
            dl.data = t.data_ptr()
            dl.byte_offset = 0  # data_ptr() already includes the storage offset
            dl.ndim = rank
            dl.dtype.code, dl.dtype.bits = DTYPES.get(t.dtype, _OTHER)
            dl.device.device_type = device_type(t.device)
            dl.device.device_id = t.device.index or 0
            for d in range(rank):
                shape[d] = t.size(d)
                strides[d] = t.stride(d)
            args[i] = self._pointers[i]
        return args
