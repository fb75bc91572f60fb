"""Runs kernelc over every bad input in cases/ and reports a verdict for each.

Each file directly in cases/ (a .cu source or a .json spec; the specs'
kernels live in cases/src/) is wrong in one way. kernelc must refuse every
one as a user error:
  - exit status 1 (never 0, never 2, never a signal, within the time limit);
  - at least one error located in an input: `FILE:LINE:COL: error: `, or
    `FILE: error: ` for one about a whole file;
  - every located line names a file in cases/ (or kernelc's own headers),
    so that no diagnostic quotes a file the input did not give;
  - no output directory.
A case that meets all of these is "refused"; any other verdict names what
went wrong. The exit status is 0 when every case is refused.

  python3 tests/bad_inputs/run_bad_inputs.py [--kernelc PATH] [-v] [CASE...]

Only the standard library: the Bazel test runs it with the system Python.
"""

import argparse
import concurrent.futures
import os
import pathlib
import re
import subprocess
import sys
import tempfile

HERE = pathlib.Path(os.path.abspath(__file__)).parent
CASES = HERE / "cases"
# Some inputs make the frontend parse a whole translation unit; none should
# take long, and one that hangs (a FIFO, /dev/zero) is a failure.
TIME_LIMIT_S = 120
# A diagnostic's first line: FILE:LINE:COL, or FILE alone for one about a
# whole file, then its severity.
DIAGNOSTIC = re.compile(
    r"^(.+?)(?::(\d+):(\d+))?: (fatal error|error|warning|note): ", re.M)
# kernelc's own headers, which Clang's notes may quote.
OWN_HEADERS = "/__kernelc__/"


def cases(names=()):
    found = sorted(p.name for p in CASES.iterdir()
                   if p.is_file() and p.suffix in (".cu", ".json"))
    return [n for n in found if not names or n in names]


def verdict(kernelc, name):
    """Returns (verdict, stderr) for one case."""
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "out"
        env = dict(os.environ)
        env["KERNELC_CACHE_DIR"] = os.path.join(tmp, "cache")
        try:
            r = subprocess.run([kernelc, "build", name, "-o", str(out)],
                               cwd=CASES, capture_output=True, env=env,
                               timeout=TIME_LIMIT_S)
        except subprocess.TimeoutExpired:
            return "hung", ""
        stderr = r.stderr.decode("utf-8", "replace")
        if r.returncode < 0:
            return f"killed by signal {-r.returncode}", stderr
        if r.returncode != 1:
            return f"exit status {r.returncode}", stderr
        errors = 0
        for file, _, _, kind in DIAGNOSTIC.findall(stderr):
            if file == "kernelc":  # kernelc's own, about no file
                continue
            if file.startswith(OWN_HEADERS):
                continue
            # Lexically: in a Bazel test, the inputs are links to elsewhere.
            path = pathlib.Path(os.path.normpath(CASES / file))
            if CASES not in path.parents or not path.is_file():
                return f"quotes {file}", stderr
            errors += kind.endswith("error")
        if not errors:
            return "no located error", stderr
        if out.exists():
            return "wrote output", stderr
        return "refused", stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernelc", default=str(
        HERE.parents[1] / "bazel-bin" / "tools" / "kernelc"))
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="print the diagnostics of every case")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    kernelc = os.path.abspath(args.kernelc)
    names = cases(args.cases)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda n: verdict(kernelc, n), names))
    failed = 0
    for name, (v, stderr) in zip(names, results):
        if v != "refused":
            failed += 1
        if v != "refused" or args.verbose:
            print(f"{name}: {v}")
            if stderr:
                print("    " + stderr.rstrip().replace("\n", "\n    "))
    print(f"{len(names)} bad inputs: {len(names) - failed} refused with a "
          f"located error, {failed} not")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
