"""The gated delta net of the speculative verify step through netra (netra/c/gdn.h), for torch
tensors: conv update, precompute, K0 verify, M16 and accepted-prefix replay.

Tensors go to libnetra as DLTensors built from their metadata (netra/_tensor.py, no copy); the
contracts check every tensor (dtype, shape, strides, alignment, device) before anything launches.
Calls run on torch's current stream and can be captured into a torch.cuda.CUDAGraph once the
handle exists. A call no tactic admits runs the torch implementation of the same math below
(`*_torch`; not bitwise equal to netra: its products and sums round differently) unless
fallback=False. A replay inside the promoted domain whose tensors the contract refuses raises
NetraError instead of falling back.

Shapes (B requests of T tokens, rows B T, D = 8192): see netra/c/gdn.h.
"""
import ctypes

import torch
import torch.nn.functional as F

from netra import _tensor
from netra._handle import NativeHandle
from netra._library import NetraError, Status, check, declared_library

D, H, HV, K, V = 8192, 16, 32, 128, 128
_p, _t, _status = ctypes.c_void_p, _tensor.POINTER, ctypes.c_int
_lib = declared_library({
    "netra_gdn_create": ([ctypes.POINTER(_p)], _status),
    "netra_gdn_destroy": ([_p], None),
    "netra_gdn_conv": ([_p] + [_t] * 6 + [_p], _status),
    "netra_gdn_precompute": ([_p] + [_t] * 9 + [_p], _status),
    "netra_gdn_verify": ([_p] + [_t] * 8 + [_p], _status),
    "netra_gdn_m16": ([_p] + [_t] * 8 + [_p], _status),
    "netra_gdn_replay": ([_p] + [_t] * 10 + [_p], _status),
})


# ---- the same math in torch (the fallback, and the benchmark's peers) -----------------------------
def conv_torch(x, w, state, windows: bool):
    """x [B T, D], w [D, 4], state [B, D, 3] (channel-major, one slot per request) -> y and the
    windows [B, T, D, 3] (windows=True) or the final state [B, D, 3]."""
    B = state.shape[0]
    T = x.shape[0] // B
    xs = torch.cat([state.transpose(1, 2), x.view(B, T, D)], dim=1).float()
    wf = w.float()
    acc = wf[:, 0] * xs[:, 0:T] + wf[:, 1] * xs[:, 1:T + 1] + wf[:, 2] * xs[:, 2:T + 2] + wf[:, 3] * xs[:, 3:T + 3]
    y = F.silu(acc).to(torch.bfloat16).view(B * T, D)
    if windows:
        win = torch.stack([xs[:, t + 1:t + 4] for t in range(T)], dim=1).to(torch.bfloat16)
        return y, win.transpose(2, 3).contiguous()
    return y, xs[:, T:T + 3].to(torch.bfloat16).transpose(1, 2).contiguous()


def precompute_torch(y, a, b, a_log, dt_bias):
    R = y.shape[0]
    qk = y[:, :2 * H * K].float().view(R, 2 * H, K)
    n = qk * torch.rsqrt((qk * qk).sum(-1, keepdim=True) + 1e-6)
    g = -torch.exp(a_log) * F.softplus(a.float() + dt_bias)
    return (n[:, :H] * K ** -0.5).contiguous(), n[:, H:].contiguous(), torch.exp(g), torch.sigmoid(b.float())


def recurrent_torch(q, k, y, decay, beta, state, T: int, accepted=None, outputs: bool = True):
    """One request per state row: state [B, 32, V, K]. Returns (out [B T, 32, V] or None, the state
    after the first `accepted` tokens (all T when None), in the state's dtype)."""
    B = state.shape[0]
    S = state.float()
    qh = q.view(B, T, H, K).repeat_interleave(2, dim=2)
    kh = k.view(B, T, H, K).repeat_interleave(2, dim=2)
    v = y[:, 4096:].float().view(B, T, HV, V)
    a, bt = decay.view(B, T, HV), beta.view(B, T, HV)
    outs = []
    for t in range(T):
        Sn = S * a[:, t, :, None, None]
        u = bt[:, t, :, None] * (v[:, t] - (Sn @ kh[:, t, :, :, None]).squeeze(-1))
        Sn = Sn + u[..., None] * kh[:, t, :, None, :]
        if outputs:
            outs.append((Sn @ qh[:, t, :, :, None]).squeeze(-1).to(torch.bfloat16))
        S = Sn if accepted is None else torch.where((accepted > t)[:, None, None, None], Sn, S)
    return (torch.stack(outs, dim=1).view(B * T, HV, V) if outputs else None), S.to(state.dtype)


class Gdn(NativeHandle):
    """A netra gdn handle on one CUDA device (every gdn tactic loaded). Create it before capture."""

    def __init__(self, device=None):
        super().__init__("gdn", _lib().netra_gdn_create, _lib().netra_gdn_destroy, device)
        self._tensors = {n: _tensor.Tensors(c) for n, c in (("conv", 6), ("precompute", 9), ("verify", 8), ("m16", 8), ("replay", 10))}

    def _call(self, op, tensors, fallback):
        status = getattr(_lib(), "netra_gdn_" + op)(self._handle, *self._tensors[op].fill(*tensors), self._stream())
        if status == Status.OK:
            return True
        if status != Status.NOT_SUPPORTED:
            check(status)
        if not fallback:
            raise NetraError(Status.NOT_SUPPORTED, _lib().netra_last_error().decode(errors="replace"))
        return False

    def conv(self, x, weight, y, slots, state, windows=None, *, fallback=True):
        """y = SiLU(causal conv) of each request's rows from its slot's history; windows given: the
        history after every token into windows (the pool untouched), else the final one into the slot."""
        if self._call("conv", (x, weight, y, slots, state, windows), fallback):
            return y
        hist = state[slots.long()]
        hist = hist if hist.shape[1] == D else hist.transpose(1, 2)
        out, extra = conv_torch(x, weight, hist.contiguous(), windows is not None)
        y.copy_(out)
        if windows is not None:
            windows.copy_(extra if windows.shape[2] == D else extra.transpose(2, 3))
        else:
            real = (slots >= 0) & (slots < state.shape[0] - 1)
            state[slots.long()[real]] = (extra if state.shape[1] == D else extra.transpose(1, 2))[real].to(state.dtype)
        return y

    def precompute(self, y, a, b, a_log, dt_bias, q, k, decay, beta, *, fallback=True):
        if not self._call("precompute", (y, a, b, a_log, dt_bias, q, k, decay, beta), fallback):
            for dst, src in zip((q, k, decay, beta), precompute_torch(y, a, b, a_log, dt_bias)):
                dst.copy_(src.view_as(dst))
        return q, k, decay, beta

    def verify(self, q, k, v, decay, beta, state, slots, out, *, fallback=True):
        """K0: the outputs of all T tokens from each request's slot; the pool is only read."""
        if not self._call("verify", (q, k, v, decay, beta, state, slots, out), fallback):
            out.copy_(recurrent_torch(q, k, v, decay, beta, state[slots.long().clamp(0, state.shape[0] - 1)], q.shape[0] // slots.shape[0])[0])
        return out

    def m16(self, q, k, v, decay, beta, state, slots, out, *, fallback=True):
        """The outputs of all T tokens, and the state after them committed to each request's slot."""
        if not self._call("m16", (q, k, v, decay, beta, state, slots, out), fallback):
            T = q.shape[0] // slots.shape[0]
            o, S = recurrent_torch(q, k, v, decay, beta, state[slots.long().clamp(0, state.shape[0] - 1)], T)
            out.copy_(o)
            real = (slots >= 0) & (slots < state.shape[0] - 1)
            state[slots.long()[real]] = S[real]
        return out

    def replay(self, q, k, v, decay, beta, state, slots, accepted, conv_windows, conv_state, *, fallback=True):
        """Commits exactly the first accepted[b] tokens of each request (state and conv history)."""
        if self._call("replay", (q, k, v, decay, beta, state, slots, accepted, conv_windows, conv_state), fallback):
            return state
        T = q.shape[0] // slots.shape[0]
        real = (slots >= 0) & (slots < state.shape[0] - 1) & (accepted >= 1) & (accepted <= T)
        _, S = recurrent_torch(q, k, v, decay, beta, state[slots.long().clamp(0, state.shape[0] - 1)], T, accepted=accepted, outputs=False)
        idx = slots.long()[real]
        state[idx] = S[real]
        rows = torch.arange(slots.shape[0], device=slots.device)[real]
        conv_state[idx] = conv_windows[rows, accepted.long()[real] - 1]
        return state
