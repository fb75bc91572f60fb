"""Public Bazel API of kernelc.

    load("@kernelc//tools:defs.bzl", "kernelc_library")

    kernelc_library(
        name = "my_ops",
        srcs = ["saxpy.cu"],
    )

    py_test(name = "my_ops_test", srcs = ["my_ops_test.py"], deps = [":my_ops"])

The workspace needs kernelc's repositories and a kernelc toolchain: see
deps.bzl.
"""

load(
    "//tools:kernelc_library.bzl",
    _KernelcPackageInfo = "KernelcPackageInfo",
    _KernelcToolchainInfo = "KernelcToolchainInfo",
    _kernelc_package = "kernelc_package",
    _kernelc_toolchain = "kernelc_toolchain",
)

KernelcPackageInfo = _KernelcPackageInfo
KernelcToolchainInfo = _KernelcToolchainInfo
kernelc_package = _kernelc_package
kernelc_toolchain = _kernelc_toolchain

def kernelc_library(
        name,
        srcs,
        hdrs = [],
        targets = ["cpu"],
        cuda_archs = [],
        use_fast_math = False,
        copts = [],
        defines = [],
        includes = [],
        package_name = None,
        deps = [],
        visibility = None,
        tags = [],
        testonly = False):
    """Compiles kernels with kernelc into an importable Python package.

    Defines `name`, a py_library whose package is `package_name` (default:
    `name`), and `name + "_package"`, the package directory itself (a
    kernelc_package target, with KernelcPackageInfo): __init__.py, the shared
    library _kernelc_<hash>.so and the manifest kernelc.json. The kernelc
    that compiles it is the registered kernelc toolchain's (deps.bzl).

    Args:
      name: the py_library; also the default import name.
      srcs: annotated .cu/.cc kernel sources, or JSON specs.
      hdrs: headers that srcs include.
      targets: "cpu" and/or "cuda" (kernelc --target).
      cuda_archs: GPU architectures for the cuda target (kernelc --cuda-arch).
      use_fast_math: NVRTC's --use_fast_math for the cuda target.
      copts: -DNAME[=VALUE] and -IDIR for the kernels.
      defines: macros for the kernels, NAME or NAME=VALUE.
      includes: include directories, relative to this package.
      package_name: the Python import name.
      deps: py_library targets the package needs at run time, beside jax
        (which the Python toolchain's interpreter provides).
      visibility, tags, testonly: as usual.
    """
    kernelc_package(
        name = name + "_package",
        srcs = srcs,
        hdrs = hdrs,
        package_name = package_name or name,
        targets = targets,
        cuda_archs = cuda_archs,
        use_fast_math = use_fast_math,
        copts = copts,
        defines = defines,
        includes = includes,
        visibility = visibility,
        tags = tags,
        testonly = testonly,
    )
    native.py_library(
        name = name,
        data = [":" + name + "_package"],
        imports = [name + "_package"],
        deps = deps,
        visibility = visibility,
        tags = tags,
        testonly = testonly,
    )
