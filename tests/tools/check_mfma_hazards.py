"""Checks gfx950 code objects: every kernel holds at least one v_mfma, never touches scratch, and
reads each MFMA's result registers only after at least --min-wait-states wait states (independent
instructions count one each, s_nop N counts N + 1; another MFMA on the same accumulator is not a
read). Disassembly is clipped to each kernel's symbol range (llvm-objdump runs on into padding).
Exit status 1 with the offending kernel and instruction otherwise."""
import argparse
import re
import subprocess
import sys


def kernels(readelf, path):
    out = subprocess.run([readelf, "-s", "-W", path], capture_output=True, text=True, check=True).stdout
    seen = set()
    for line in out.splitlines():
        f = line.split()
        if len(f) > 7 and f[3] == "FUNC" and f[7] not in seen:
            seen.add(f[7])
            yield f[7], int(f[1], 16), int(f[2])


def registers(operand_text):
    regs = set()
    for lo, hi, single in re.findall(r"v\[(\d+):(\d+)\]|\b(v\d+)\b", operand_text):
        if single:
            regs.add(single)
        else:
            regs.update(f"v{r}" for r in range(int(lo), int(hi) + 1))
    return regs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--objdump", required=True)
    p.add_argument("--readelf", required=True)
    p.add_argument("--min-wait-states", type=int, required=True)
    p.add_argument("objects", nargs="+")
    a = p.parse_args()
    failures = 0
    for path in a.objects:
        for name, begin, size in kernels(a.readelf, path):
            dis = subprocess.run([a.objdump, "-d", "--mcpu=gfx950", "--no-show-raw-insn", f"--start-address={begin}",
                                  f"--stop-address={begin + size}", path], capture_output=True, text=True, check=True).stdout
            insts = [l.split("//")[0].strip() for l in dis.splitlines() if re.match(r"^\s+[a-z]", l)]
            mfmas = [i for i, l in enumerate(insts) if l.startswith("v_mfma")]
            scratch = [l for l in insts if l.startswith("scratch_") or "buffer_store" in l]
            worst = None
            for i in mfmas:
                dest = registers(insts[i].split(",")[0])
                waits = 0
                for l in insts[i + 1:]:
                    operands = l.split(" ", 1)[1] if " " in l else ""
                    if registers(operands) & dest and not l.startswith("v_mfma"):
                        break
                    waits += int(l.split()[1]) + 1 if l.startswith("s_nop") else 1
                worst = waits if worst is None else min(worst, waits)
            ok = bool(mfmas) and not scratch and worst is not None and worst >= a.min_wait_states
            print(f"{'ok  ' if ok else 'FAIL'} {path.rsplit('/', 1)[-1]} {name}: {len(insts)} instructions, {len(mfmas)} MFMA, "
                  f"min wait states before an MFMA result is read {worst}, scratch instructions {len(scratch)}")
            failures += not ok
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
