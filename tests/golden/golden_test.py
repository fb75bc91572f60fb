"""The golden tests: the Bazel-built kernelc over every case in tests/golden/,
its normalised output against the case's expected/ directory.

Run by `bazel test //tests/golden:golden_test`, with the system Python and
its standard library only. A case that needs NVRTC (`--target` with cuda)
is skipped, with the reason, where kernelc finds none; tools/test.sh passes
the project's virtual environment (--test_env=VIRTUAL_ENV), where
tools/setup.sh puts NVIDIA's NVRTC wheels on a machine without a CUDA
toolkit.
"""

import os
import pathlib
import re
import subprocess
import sys
import unittest

import golden_runner


def _tree():
    # In a Bazel test, everything comes from the runfiles: the kernelc that
    # Bazel built, the cases and the Python runtime.
    runfiles = os.environ.get("TEST_SRCDIR")
    if runfiles:
        root = pathlib.Path(runfiles) / os.environ["TEST_WORKSPACE"]
        return golden_runner.Tree(root, root)
    return golden_runner.Tree()


TREE = _tree()
CUDA_CASE = "emit_cuda_saxpy"
BLOCK_CASE = "emit_block_kernels"


def _nvrtc_missing():
    """Why kernelc finds no NVRTC here (as `kernelc --version` says), or
    None when it finds one."""
    r = subprocess.run([str(TREE.kernelc), "--version"], capture_output=True,
                       text=True)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) < 2:
        return f"kernelc --version failed: {r.stdout}{r.stderr}".strip()
    return None if re.match(r"NVRTC \d", lines[1]) else " ".join(lines[1:])


def _needs_nvrtc(name):
    """Whether the case builds for the cuda target (NVRTC, and the CUDA
    headers beside it)."""
    args = TREE.command(name)
    targets = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "--target"]
    return any("cuda" in t.split(",") for t in targets)


class GoldenTest(unittest.TestCase):
    maxDiff = None

    def skip_without_nvrtc(self, name):
        reason = _nvrtc_missing()
        if reason:
            # A skip leaves no mark in Bazel's summary: tools/test.sh shows
            # these lines of the test's log.
            print(f"golden case '{name}' skipped: {reason}", file=sys.stderr)
            self.skipTest(reason)

    def check_case(self, name):
        if _needs_nvrtc(name):
            self.skip_without_nvrtc(name)
        problems = golden_runner.differences(TREE.expected(name),
                                             TREE.run_case(name))
        if problems:
            self.fail(f"golden case '{name}' drifted; if the change is "
                      f"intended, run `{golden_runner.UPDATE_COMMAND} {name}`"
                      f" and review the diff:\n" + "\n".join(problems))

    def test_there_are_golden_cases(self):
        self.assertGreaterEqual(len(TREE.cases()), 8)

    def test_the_support_files_are_shipped_verbatim(self):
        # The goldens hold them once: an emitted package's copy is the
        # source file byte for byte.
        files = TREE.run_case(BLOCK_CASE, normalised=False)
        for rel, source in TREE.support.items():
            self.assertEqual(files[rel], source.read_bytes(), rel)
        # The block executor is in the prebuilt runtime that every library
        # links, never in a package.
        self.assertNotIn("build/block_exec.cc", files)

    def test_a_different_nvrtc_output_leaves_the_golden_as_it_is(self):
        # --use-fast-math makes NVRTC emit other cubins and PTX, so other
        # image sizes and hashes, and another content hash: normalised,
        # only the manifest's record of the option differs.
        self.skip_without_nvrtc(CUDA_CASE)
        plain = TREE.run_case(CUDA_CASE, normalised=False)
        fast = TREE.run_case(CUDA_CASE, ["--use-fast-math"], normalised=False)
        self.assertEqual(sorted(plain), sorted(fast))
        self.assertIn("build/cuda_images.cc", plain)
        changed = sorted(p for p in plain if plain[p] != fast[p])
        self.assertIn("build/cuda/0_saxpy.sm_80.cubin", changed)
        self.assertIn("build/shim.cc", changed)  # the content hash
        plain, fast = TREE.normalise(plain), TREE.normalise(fast)
        self.assertEqual(
            [p for p in sorted(plain) if plain[p] != fast[p]],
            ["package/kernelc.json"])
        self.assertEqual(
            plain["package/kernelc.json"].replace(b'"fast_math": false',
                                                  b'"fast_math": true'),
            fast["package/kernelc.json"])


def _add_case_tests():
    # One test per case, so that each drifted case is reported by name.
    for name in TREE.cases():
        def test(self, name=name):
            self.check_case(name)
        setattr(GoldenTest, f"test_case_{name}", test)


_add_case_tests()

if __name__ == "__main__":
    unittest.main(verbosity=2)
