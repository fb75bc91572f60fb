"""cc_library, cc_binary and cc_test for kernelc's own C++: the native rules
with the language standard that kernelc's sources need.

    load("//tools:cc.bzl", "cc_library")

The standard is set on each target, not in a .bazelrc, so that a workspace
that builds kernelc as an external repository (kernelc_dependencies()) needs
no flags of its own: Bazel's default C++ toolchain compiles with
-std=c++0x, and these options come after the toolchain's.
"""

KERNELC_COPTS = ["-std=c++17"]

def cc_library(name, copts = [], **kwargs):
    native.cc_library(name = name, copts = KERNELC_COPTS + copts, **kwargs)

def cc_binary(name, copts = [], **kwargs):
    native.cc_binary(name = name, copts = KERNELC_COPTS + copts, **kwargs)

def cc_test(name, copts = [], **kwargs):
    native.cc_test(name = name, copts = KERNELC_COPTS + copts, **kwargs)
