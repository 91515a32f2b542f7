"""netra for PyTorch: exact GPU kernels called through libnetra's C ABI (ctypes, no build step).

    import torch, netra
    idx = netra.argmax(logits)   # == torch.argmax(logits, dim=-1); torch runs it when netra declines

libnetra is $NETRA_LIBRARY, else the newest build*/libnetra.so of the source tree this package
sits in, else libnetra.so on the loader's path.
"""
from netra._library import NetraError, Status
from netra.argmax import Argmax, argmax, explain_argmax
from netra.attention import AttentionGQA4Extend, AttentionGQA8, attention_gqa4_extend, attention_gqa8
from netra.gdn import Gdn
from netra.moe_experts import MoeBlock, MoeExperts
from netra.moe_routing import MoeRouting
from netra.norm import Norm, add_rms_norm, gated_rms_norm, rms_norm

__all__ = ["Argmax", "MoeBlock", "MoeExperts", "MoeRouting", "NetraError", "Norm", "Status", "add_rms_norm", "argmax", "explain_argmax",
           "gated_rms_norm", "rms_norm"]
__all__ += ["AttentionGQA8", "attention_gqa8", "AttentionGQA4Extend", "attention_gqa4_extend"]
__all__ += ["Gdn"]
