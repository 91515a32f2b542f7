"""Compiles a HIP source for gfx950 and checks how many times each given opcode appears in its
disassembly: --expect OPCODE=COUNT (exact mnemonic match). Exit status 1 on a mismatch."""
import argparse
import re
import subprocess
import sys
import tempfile


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--clang", required=True)
    p.add_argument("--objdump", required=True)
    p.add_argument("--include", required=True)
    p.add_argument("--expect", action="append", default=[])
    p.add_argument("source")
    a = p.parse_args()
    with tempfile.NamedTemporaryFile(suffix=".hsaco") as obj:
        subprocess.run([a.clang, "-x", "hip", "--offload-arch=gfx950", "--cuda-device-only", "-nogpulib", "-nogpuinc", "-O3", "-std=c++20",
                        "--no-gpu-bundle-output", "-I", a.include, a.source, "-o", obj.name], check=True)
        dis = subprocess.run([a.objdump, "-d", "--mcpu=gfx950", "--no-show-raw-insn", obj.name], capture_output=True, text=True, check=True).stdout
    mnemonics = [m.group(1) for m in (re.match(r"^\s+([a-z][a-z0-9_]*)", l) for l in dis.splitlines()) if m]
    failed = False
    for e in a.expect:
        op, count = e.rsplit("=", 1)
        got = mnemonics.count(op)
        print(f"{'ok  ' if got == int(count) else 'FAIL'} {op}: {got} (expected {count})")
        failed |= got != int(count)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
