"""embed_files: compiles files into a C++ library as kernelc::EmbeddedFile."""

load("//tools:cc.bzl", "cc_library")

def _embed_files_impl(ctx):
    out_h = ctx.outputs.header
    out_cc = ctx.outputs.source
    guard = ("KERNELC_EMBEDDED_" + ctx.label.package + "_" + ctx.attr.out + "_H_")
    guard = guard.upper().replace("/", "_").replace("-", "_")
    args = ctx.actions.args()
    args.add(out_h)
    args.add(out_cc)
    args.add(ctx.attr.symbol)
    args.add(guard)
    for f in ctx.files.srcs:
        # Paths inside the file's own repository, so that embedding works the
        # same when kernelc is an external repository of another workspace.
        name = f.short_path
        if name.startswith("../"):
            name = name[3:].partition("/")[2]
        for prefix in ctx.attr.strip_prefixes:
            if name.startswith(prefix):
                name = name[len(prefix):]
                break
        args.add(name + "=" + f.path)
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [args],
        inputs = ctx.files.srcs,
        outputs = [out_h, out_cc],
        mnemonic = "EmbedFiles",
        progress_message = "Embedding files into %s" % out_cc.short_path,
    )
    return [DefaultInfo(files = depset([out_h, out_cc]))]

_embed_files = rule(
    implementation = _embed_files_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = True, mandatory = True),
        "out": attr.string(mandatory = True),
        "symbol": attr.string(mandatory = True),
        "strip_prefixes": attr.string_list(),
        "_tool": attr.label(
            default = "//tools:embed_files",
            executable = True,
            cfg = "exec",
        ),
    },
    outputs = {"header": "%{out}.h", "source": "%{out}.cc"},
)

def embed_files(name, srcs, symbol, strip_prefixes = [], visibility = None):
    """A cc_library `name` whose header `<package>/<name>.h` declares
    `const std::vector<kernelc::EmbeddedFile>& kernelc::embedded::<symbol>()`.
    """
    _embed_files(
        name = name + "_gen",
        srcs = srcs,
        out = name,
        symbol = symbol,
        strip_prefixes = strip_prefixes,
    )
    cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        deps = ["//tools:embedded_file"],
        visibility = visibility,
    )
