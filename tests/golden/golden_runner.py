"""Runs the golden cases in tests/golden/ and collects what kernelc produced.

A case is a directory holding its inputs and a file `cmd` with one kernelc
command line, run in the case directory:
  emit SRC... [options]     -> the generated files (package/, build/)
  build SRC... [options]    -> stderr and exit status (diagnostic cases)
  inspect SRC...            -> stdout, stderr and exit status
or the word `catalogue`: the table of kernelc's diagnostics, as
//compiler/diag:print_catalogue prints it (stdout).
The expected results live in the case's `expected/` directory.
tools/update_goldens.py rewrites them; golden_test.py (`bazel test
//tests/golden:golden_test`) checks them.

The goldens hold what kernelc decides, not what the toolchain emits, so
what kernelc writes is normalised first (see `normalise`): NVRTC's images
and version, and the content hash, which is derived from the images, the
Clang version and kernelc's own files, are masked. The packages' Python
runtime and the CPU's block executor, the same in every package that has
them, are held once, as their source files.

Only the standard library: the Bazel test runs with the system Python.
"""

import difflib
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import tempfile

ROOT = pathlib.Path(os.path.abspath(__file__)).parents[2]
UPDATE_COMMAND = ".venv/bin/python tools/update_goldens.py"


class Tree:
    """Where a run finds the golden cases, kernelc, the catalogue printer
    and the Python runtime: the checkout (`Tree()`) or a Bazel test's
    runfiles (`Tree(root, root)`), each with the Bazel-built binaries
    under `bin`."""

    def __init__(self, root=ROOT, bin=None):
        root = pathlib.Path(root)
        bin = pathlib.Path(bin or root / "bazel-bin")
        self.golden = root / "tests" / "golden"
        self.kernelc = bin / "tools" / "kernelc"
        self.catalogue = bin / "compiler" / "diag" / "print_catalogue"
        # The support file that kernelc copies verbatim into every package:
        # the Python runtime.
        self.support = {
            "package/_kernelc.py": root / "runtime" / "python" / "_kernelc.py",
        }

    def cases(self):
        return sorted(p.name for p in self.golden.iterdir()
                      if (p / "cmd").exists())

    def command(self, name):
        return shlex.split((self.golden / name / "cmd").read_text())

    def run_case(self, name, extra_args=(), normalised=True):
        """Returns {relative path: bytes} of what the case produces now;
        `extra_args` go after the case's own."""
        args = self.command(name) + list(extra_args)
        if args == ["catalogue"]:
            r = subprocess.run([str(self.catalogue)], capture_output=True,
                               check=True)
            return {"stdout.txt": r.stdout}
        produced = {}
        with tempfile.TemporaryDirectory() as tmp:
            out = pathlib.Path(tmp) / "out"
            if args[0] in ("emit", "build"):
                args += ["-o", str(out)]
            run_env = dict(os.environ)
            # Never the user's build cache.
            run_env["KERNELC_CACHE_DIR"] = os.path.join(tmp, "cache")
            r = subprocess.run([str(self.kernelc), *args],
                               cwd=self.golden / name, capture_output=True,
                               env=run_env)
            status = f"exit status: {r.returncode}\n".encode()
            if args[0] == "emit" and r.returncode == 0:
                for f in sorted(out.rglob("*")):
                    if f.is_file():
                        produced[f.relative_to(out).as_posix()] = f.read_bytes()
            else:
                produced["stderr.txt"] = status + r.stderr
            if args[0] == "inspect":
                produced["stdout.txt"] = r.stdout
        return self.normalise(produced) if normalised else produced

    def normalise(self, files):
        """`files` with what the toolchain decides masked (module doc)."""
        files = dict(files)
        # Left in place when it differs, so that the diff shows it.
        for rel, source in self.support.items():
            if rel in files and files[rel] == source.read_bytes():
                del files[rel]
        masks = []  # (compiled pattern, replacement), applied to every file
        manifest = files.get("package/kernelc.json", b"").decode()
        m = re.search(r'"content_hash": "([0-9a-f]{64})"', manifest)
        if m:
            # The full hash first: names carry its first 12 digits.
            masks += [(re.compile(m.group(1)), "<content-hash>"),
                      (re.compile(m.group(1)[:12]), "<hash>")]
        m = re.search(r'"nvrtc": "(\d+)\.(\d+)"', manifest)
        if m:
            # As CUDA_VERSION writes it (13000), in the image tables.
            cuda_version = int(m.group(1)) * 1000 + int(m.group(2)) * 10
            masks += [(re.compile(r'"nvrtc": "[\d.]+"'), '"nvrtc": "<nvrtc>"'),
                      (re.compile(rf"\b{cuda_version}\}};"), "<nvrtc>};")]
        masks += [
            # An image's size and SHA-256: in the manifest and in comments.
            (re.compile(r'"bytes": \d+'), '"bytes": "<size>"'),
            (re.compile(r'"sha256": "[0-9a-f]{64}"'), '"sha256": "<sha256>"'),
            (re.compile(r"\(\d+ bytes, sha256 [0-9a-f]{64}\)"),
             "(<size> bytes, sha256 <sha256>)"),
            # The bytes of an embedded image.
            (re.compile(r'(\[\] =\n)(?:    "[^\n]*\n)+'),
             r"\1    <NVRTC output>\n"),
        ]
        out = {}
        for rel, data in files.items():
            if rel.startswith("build/cuda/") and rel.endswith((".cubin",
                                                                ".ptx")):
                out[rel] = b"<NVRTC output>\n"  # listed by name only
                continue
            try:
                text = data.decode()
            except UnicodeDecodeError:
                out[rel] = data
                continue
            for pattern, replacement in masks:
                text = pattern.sub(replacement, text)
            out[rel] = text.encode()
        return out

    def expected(self, name):
        exp = self.golden / name / "expected"
        if not exp.exists():
            return {}
        return {f.relative_to(exp).as_posix(): f.read_bytes()
                for f in sorted(exp.rglob("*")) if f.is_file()}

    def write_expected(self, name, files):
        out = self.golden / name / "expected"
        shutil.rmtree(out, ignore_errors=True)
        for rel, data in files.items():
            path = out / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


def differences(want, got, context=2, limit=60):
    """What differs between two {path: bytes}, as readable lines; empty when
    they are the same."""
    problems = []
    for rel in sorted(set(want) | set(got)):
        if rel not in got:
            problems.append(f"{rel}: no longer produced")
        elif rel not in want:
            problems.append(f"{rel}: produced but not in the golden")
        elif got[rel] != want[rel]:
            diff = difflib.unified_diff(
                want[rel].decode(errors="replace").splitlines(),
                got[rel].decode(errors="replace").splitlines(),
                f"expected/{rel}", f"now/{rel}", lineterm="", n=context)
            problems.append("\n".join(list(diff)[:limit]))
    return problems
