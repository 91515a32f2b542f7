"""Loading libnetra and the parts of its C ABI every operation shares (netra/c/netra.h)."""
import ctypes
import enum
import os
import pathlib
import threading


class Status(enum.IntEnum):
    """netra_status (netra/c/netra.h), mirroring netra::status."""

    OK = 0
    INVALID_ARGUMENT = 1
    NOT_SUPPORTED = 2
    WRONG_TARGET = 3
    BACKEND_ERROR = 4
    UNAVAILABLE = 5
    COMPILE_ERROR = 6
    WORKSPACE_TOO_SMALL = 7
    INTERNAL = 8


class NetraError(RuntimeError):
    """A netra call failed: `status` says how, the message says why (netra_last_error)."""

    def __init__(self, status, message):
        self.status = Status(status)
        super().__init__(f"{self.status.name}: {message}")


_ABI_VERSION = 2
_lock = threading.Lock()
_lib = None


def _candidates():
    explicit = os.environ.get("NETRA_LIBRARY")
    if explicit:
        return [explicit]
    root = pathlib.Path(__file__).resolve().parents[2]
    built = sorted(root.glob("build*/libnetra.so"), key=lambda p: p.stat().st_mtime, reverse=True)
    return [str(p) for p in built] + ["libnetra.so"]


def library():
    """The loaded libnetra with the core signatures declared; raises OSError naming every path tried."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        failures = []
        for path in _candidates():
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                failures.append(f"{path}: {e}")
        else:
            raise OSError("netra: libnetra not found (set NETRA_LIBRARY): " + "; ".join(failures))
        lib.netra_last_error.restype = ctypes.c_char_p
        lib.netra_last_error.argtypes = []
        lib.netra_abi_version.restype = ctypes.c_int
        lib.netra_abi_version.argtypes = []
        if lib.netra_abi_version() != _ABI_VERSION:
            raise OSError(f"netra: {path} has C ABI {lib.netra_abi_version()}, this package speaks {_ABI_VERSION}")
        _lib = lib
        return lib


def declared_library(signatures):
    """A function returning libnetra with `signatures` ({name: (argtypes, restype)}) declared on
    it, once: each module of the package lists the C functions it calls."""
    done = []

    def lib():
        loaded = library()
        if not done:
            for name, (argtypes, restype) in signatures.items():
                function = getattr(loaded, name)
                function.argtypes, function.restype = argtypes, restype
            done.append(True)
        return loaded

    return lib


def check(status):
    """Raises NetraError for a status other than OK, with this thread's last netra error."""
    if status != Status.OK:
        raise NetraError(status, library().netra_last_error().decode(errors="replace"))


def explained(function, *args):
    """The text of a netra_*_explain call: function(*args, text, capacity, length), twice."""
    length = ctypes.c_size_t()
    check(function(*args, None, 0, ctypes.byref(length)))
    text = ctypes.create_string_buffer(length.value + 1)
    check(function(*args, text, len(text), None))
    return text.value.decode()
