"""The kernelc_library rule's implementation, and the kernelc toolchain;
load them from //tools:defs.bzl."""

# The toolchain type whose toolchain names the kernelc that kernelc_package
# runs: kernelc built from this repository, or a prebuilt one (deps.bzl).
KERNELC_TOOLCHAIN_TYPE = str(Label("//tools:toolchain_type"))

KernelcToolchainInfo = provider(
    doc = "The kernelc compiler that kernelc_package actions run.",
    fields = {
        "compiler": "FilesToRunProvider: the kernelc executable",
        "inputs": "depset of files the actions also read: for a prebuilt " +
                  "kernelc, its version text, so that another kernelc " +
                  "re-runs them",
    },
)

def _kernelc_toolchain_impl(ctx):
    return [platform_common.ToolchainInfo(kernelc = KernelcToolchainInfo(
        compiler = ctx.attr.compiler[DefaultInfo].files_to_run,
        inputs = depset(ctx.files.identity),
    ))]

kernelc_toolchain = rule(
    implementation = _kernelc_toolchain_impl,
    doc = "A kernelc compiler for kernelc_library: register it with " +
          "toolchain(toolchain_type = \"@kernelc//tools:toolchain_type\").",
    attrs = {
        "compiler": attr.label(
            mandatory = True,
            executable = True,
            allow_files = True,
            cfg = "exec",
            doc = "the kernelc executable: //tools:kernelc, or a prebuilt one",
        ),
        "identity": attr.label_list(
            allow_files = True,
            doc = "files that identify the compiler (its --version text), " +
                  "read by every action so that a changed compiler re-runs them",
        ),
    },
)

KernelcPackageInfo = provider(
    doc = "A Python package that kernelc built.",
    fields = {
        "package_dir": "tree artifact: the package directory (__init__.py, " +
                       "the shared library _kernelc_<hash>.so, kernelc.json, ...)",
        "package_name": "the package's import name",
        "import_path": "runfiles-relative directory that holds package_dir",
    },
)

def _flags(ctx):
    """kernelc's -I/-D arguments from copts, defines and includes."""
    args = []
    for d in ctx.attr.defines:
        args += ["-D", d]
    root = ctx.label.workspace_root
    pkg = ctx.label.package
    base = "/".join([p for p in [root, pkg] if p])
    for inc in ctx.attr.includes:
        args += ["-I", base + "/" + inc if base else inc]
    for opt in ctx.attr.copts:
        if opt.startswith("-D") and len(opt) > 2:
            args += ["-D", opt[2:]]
        elif opt.startswith("-I") and len(opt) > 2:
            args += ["-I", opt[2:]]
        else:
            fail("kernelc_library copts take -DNAME[=VALUE] and -IDIR only, " +
                 "not '%s'" % opt, attr = "copts")
    return args

_TARGETS = ["cpu", "cuda"]

def _check_options(ctx):
    """Fails at analysis, naming the attribute, where kernelc would fail only
    when the action runs."""
    if not ctx.attr.targets:
        fail("give at least one target: \"cpu\" and/or \"cuda\"", attr = "targets")
    for t in ctx.attr.targets:
        if t not in _TARGETS:
            fail("unknown target \"%s\" (expected \"cpu\" or \"cuda\")" % t,
                 attr = "targets")
    cuda = "cuda" in ctx.attr.targets
    if ctx.attr.cuda_archs and not cuda:
        fail("needs \"cuda\" in targets", attr = "cuda_archs")
    if ctx.attr.use_fast_math and not cuda:
        fail("needs \"cuda\" in targets", attr = "use_fast_math")
    for arch in ctx.attr.cuda_archs:
        if not arch.startswith("sm_") or not arch[3:].isdigit():
            fail("\"%s\" is not an architecture like \"sm_80\"" % arch,
                 attr = "cuda_archs")

def _kernelc_package_impl(ctx):
    _check_options(ctx)
    pkg = ctx.attr.package_name or ctx.label.name
    # The package directory is one tree artifact: its library's name carries
    # a content hash that only the build knows, and kernelc decides which
    # files a package has (per target and architecture). The rule then does
    # not depend on kernelc's output layout.
    out = ctx.actions.declare_directory(ctx.label.name + "/" + pkg)
    args = ctx.actions.args()
    args.add("build")
    args.add_all(ctx.files.srcs)
    args.add("-o", out.dirname)
    args.add("--name", pkg)
    args.add("--target", ",".join(ctx.attr.targets))
    if ctx.attr.cuda_archs:
        args.add("--cuda-arch", ",".join(ctx.attr.cuda_archs))
    if ctx.attr.use_fast_math:
        args.add("--use-fast-math")
    args.add_all(_flags(ctx))
    # Bazel caches actions itself; kernelc's own cache would live outside
    # the sandbox.
    args.add("--no-cache")
    kernelc = ctx.toolchains[KERNELC_TOOLCHAIN_TYPE].kernelc
    ctx.actions.run(
        executable = kernelc.compiler,
        arguments = [args],
        inputs = depset(ctx.files.srcs + ctx.files.hdrs,
                        transitive = [kernelc.inputs]),
        outputs = [out],
        mnemonic = "KernelcBuild",
        # The default shell environment: PATH, for clang++ to find the
        # system linker (fixed under --incompatible_strict_action_env), and
        # whatever the user passes with --action_env. For the cuda target,
        # kernelc finds NVRTC through $CUDA_HOME (or $VIRTUAL_ENV,
        # $CONDA_PREFIX), else /usr/local/cuda: `--action_env=CUDA_HOME`
        # hands the toolkit to the action, and makes it part of the
        # action's key, as it should be, since the toolkit is not one of
        # its inputs.
        use_default_shell_env = True,
        progress_message = "Compiling kernels of %s with kernelc" % ctx.label,
    )
    import_path = "/".join([p for p in [
        ctx.workspace_name,
        ctx.label.package,
        ctx.label.name,
    ] if p])
    return [
        DefaultInfo(
            files = depset([out]),
            runfiles = ctx.runfiles(files = [out]),
        ),
        KernelcPackageInfo(
            package_dir = out,
            package_name = pkg,
            import_path = import_path,
        ),
    ]

kernelc_package = rule(
    implementation = _kernelc_package_impl,
    doc = "Compiles annotated kernels into a Python package directory.",
    attrs = {
        "srcs": attr.label_list(
            allow_files = [".cu", ".cc", ".cpp", ".cxx", ".json"],
            mandatory = True,
            doc = "annotated kernel sources, or JSON specs",
        ),
        "hdrs": attr.label_list(
            allow_files = True,
            doc = "headers the sources include (the action's other inputs)",
        ),
        "package_name": attr.string(doc = "import name; default: the target's"),
        "targets": attr.string_list(default = ["cpu"], doc = "cpu, cuda"),
        "cuda_archs": attr.string_list(doc = "sm_80, sm_90, ... (cuda target)"),
        "use_fast_math": attr.bool(doc = "NVRTC's --use_fast_math (cuda target)"),
        "copts": attr.string_list(doc = "-DNAME[=VALUE] and -IDIR"),
        "defines": attr.string_list(doc = "NAME or NAME=VALUE"),
        "includes": attr.string_list(doc = "include directories, relative to the package"),
    },
    toolchains = [KERNELC_TOOLCHAIN_TYPE],
)
