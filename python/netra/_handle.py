"""The lifetime every netra handle shares: one C ABI handle on one CUDA device."""
import ctypes

import torch

from netra._library import NetraError, Status, check


class NativeHandle:
    """Creates the C handle on `device` (default: torch's current device) with `create`, releases
    it with `destroy` on close() or garbage collection. Creating loads code and allocates, so it is
    refused during graph capture; calls through the handle are capturable."""

    def __init__(self, what, create, destroy, device=None):
        device = torch.device("cuda", torch.cuda.current_device()) if device is None else torch.device(device)
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
        if torch.cuda.is_current_stream_capturing():
            raise NetraError(Status.INVALID_ARGUMENT, f"create the netra {what} handle before graph capture "
                             "(creating it loads code and allocates)")
        self.device = device
        self._handle = ctypes.c_void_p()
        self._destroy = destroy
        with torch.cuda.device(device):
            torch.cuda.synchronize()  # makes torch's context of `device` current on this thread
            check(create(ctypes.byref(self._handle)))

    def close(self):
        """Releases the handle (its code and workspaces); later calls through it raise."""
        if getattr(self, "_handle", None):
            self._destroy(self._handle)
            self._handle = ctypes.c_void_p()

    def __del__(self):
        self.close()

    def _stream(self):
        """torch's current stream on the handle's device."""
        return torch.cuda.current_stream(self.device).cuda_stream
