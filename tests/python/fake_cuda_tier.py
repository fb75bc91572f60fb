"""The fake-CUDA tier, for tests of generated CUDA handlers without a GPU:
a package built with `--target cuda`, loaded by a small C++ driver
(tests/fake_cuda/handler_driver.cc) that calls its exported XLA FFI
handlers with call frames made as XLA makes them, while the fake libcuda
(tests/fake_cuda/fake_libcuda.cc) logs every driver call, launch
parameters included. Both are built by Bazel (tests/fake_cuda/BUILD.bazel)."""

import json
import re
import struct
import subprocess

from conftest import fake_cuda, run_kernelc

S = 0x10  # a stream of context 0xc0


class Tier:
    """The built package, the fake libcuda and the handler driver."""

    def __init__(self, out, sources):
        self.driver = fake_cuda("handler_driver")
        self.libcuda_dir = fake_cuda("libcuda.so.1").parent
        options = ["--name", "fake_ops", "--target", "cuda", "--cuda-arch",
                   "sm_80,sm_90"]
        r = run_kernelc("build", *sources, "-o", out, *options)
        assert r.returncode == 0, r.stderr
        # The same kernels' PTX and cubins, for the parameter sizes and to
        # tell which image was loaded.
        r = run_kernelc("emit", *sources, "-o", out / "emit", *options)
        assert r.returncode == 0, r.stderr
        self.cuda = out / "emit" / "build" / "cuda"
        self.manifest = json.loads((out / "fake_ops" / "kernelc.json")
                                   .read_text())
        self.library = out / "fake_ops" / self.manifest["library"]
        self.symbols = {k["name"]: k["handlers"]["cuda"]
                        for k in self.manifest["kernels"]}
        self.lowered = {}
        for b in self.manifest["cuda"]["binaries"]:
            for name, low in zip(self.kernel_names(b["source"]), b["kernels"]):
                self.lowered[name] = low

    def kernel_names(self, source):
        # A kernel given as PTX is built from its PTX file.
        return [k["name"] for k in self.manifest["model"]["kernels"]
                if k.get("ptx", {}).get("file", k.get("source")) == source]

    def run(self, *calls, **env):
        """Runs the calls (lines for handler_driver) in one process; returns
        one Call per line, each with the driver calls it made."""
        e = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(self.libcuda_dir),
             "FAKE_CUDA_PTX": ":".join(
                 str(p) for p in sorted(self.cuda.glob("*.ptx")))}
        e.update(env)
        p = subprocess.run([str(self.driver),
                            str(self.library)], input="\n".join(calls) + "\n",
                           capture_output=True, text=True, env=e)
        assert p.returncode == 0, p.stdout + p.stderr
        out = []
        for line in p.stdout.splitlines():
            if line.startswith("call "):
                out.append(Call(line))
            elif line.startswith("-> "):
                out[-1].finish(line)
            else:
                out[-1].log.append(line)
        assert len(out) == len(calls), p.stdout
        return out

    def call(self, stage, kernel, *operands, stream=S):
        symbol = self.symbols[kernel] + ("_init" if stage in (
            "initialize", "metadata_init") else "")
        stage = "metadata" if stage == "metadata_init" else stage
        return " ".join([stage, symbol, f"stream={stream:x}", *operands])


class Call:
    def __init__(self, line):
        self.header = line
        self.log = []
        self.ok = None
        self.code = None
        self.message = None

    def finish(self, line):
        if line.startswith("-> ok"):
            self.ok = True
            self.message = line[len("-> ok"):].lstrip(": ")
        else:
            m = re.match(r"-> error (\d+): (.*)", line)
            assert m, line
            self.ok = False
            self.code = int(m.group(1))
            self.message = m.group(2)

    def count(self, prefix):
        return sum(line.startswith(prefix) for line in self.log)

    def launches(self):
        return [Launch(line) for line in self.log
                if line.startswith("cuLaunchKernel(")]


class Launch:
    _RE = re.compile(r"cuLaunchKernel\((\S+), grid (\d+) (\d+) (\d+), block "
                     r"(\d+) (\d+) (\d+), shared (\d+), (\S+), params "
                     r"\[([^\]]*)\], extra \(nil\)\)")

    def __init__(self, line):
        m = self._RE.fullmatch(line)
        assert m, f"no parameter sizes for: {line}"
        self.name = m.group(1)
        self.grid = tuple(int(g) for g in m.group(2, 3, 4))
        self.block = tuple(int(b) for b in m.group(5, 6, 7))
        self.shared = int(m.group(8))
        self.stream = int(m.group(9), 16)
        # A scalar or pointer is an int; a view is a tuple of its words.
        self.params = [
            tuple(int(w, 16) for w in p.split(":")) if ":" in p
            else int(p, 16) for p in m.group(10).split()]


def buf(kind, dtype, address, *dims):
    return f"{kind}:{dtype}:{address:x}:{'x'.join(map(str, dims))}"


def arg(dtype, address, *dims):
    return buf("arg", dtype, address, *dims)


def ret(dtype, address, *dims):
    return buf("ret", dtype, address, *dims)


def attr(name, dtype, value):
    return f"attr:{name}:{dtype}:{value}"


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]
