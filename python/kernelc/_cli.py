"""The `kernelc` command of the kernelc distribution: the compiler itself,
which this replaces the Python process with."""

import os
import sys

from kernelc import _compiler


def main():
    try:
        binary = _compiler.compiler_path()
    except _compiler.BuildError as e:
        print(e, file=sys.stderr)
        return 2
    os.execv(binary, [binary, *sys.argv[1:]])
    return 2  # not reached: execv replaces this process or raises


if __name__ == "__main__":
    sys.exit(main())
