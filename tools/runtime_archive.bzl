"""runtime_archive: the static archive of a cc_library, built as generated
libraries link it.

    load("//tools:runtime_archive.bzl", "runtime_archive")

kernelc carries the archive (tools/embed.bzl) and links it into every
library it generates, so the archive is built in a configuration of its own:
position-independent, optimized, and without the command line's --copt,
which are for kernelc's own build (--config=asan would otherwise leave the
sanitizer's calls in every generated library).
"""

def _archive_transition_impl(_settings, _attr):
    return {
        "//command_line_option:compilation_mode": "opt",
        "//command_line_option:copt": [],
        "//command_line_option:force_pic": True,
    }

_archive_transition = transition(
    implementation = _archive_transition_impl,
    inputs = [],
    outputs = [
        "//command_line_option:compilation_mode",
        "//command_line_option:copt",
        "//command_line_option:force_pic",
    ],
)

def _runtime_archive_impl(ctx):
    library = ctx.attr.library[0]
    archives = []
    for linker_input in library[CcInfo].linking_context.linker_inputs.to_list():
        if linker_input.owner != library.label:
            continue
        for lib in linker_input.libraries:
            archive = lib.pic_static_library or lib.static_library
            if archive:
                archives.append(archive)
    if len(archives) != 1:
        fail("%s: expected one static archive of %s, found %d" %
             (ctx.label, library.label, len(archives)))
    out = ctx.actions.declare_file(ctx.attr.out)
    ctx.actions.symlink(output = out, target_file = archives[0])
    return [DefaultInfo(files = depset([out]))]

runtime_archive = rule(
    implementation = _runtime_archive_impl,
    doc = "The static archive (`out`) of cc_library `library`, PIC and -O2.",
    attrs = {
        "library": attr.label(
            mandatory = True,
            providers = [CcInfo],
            cfg = _archive_transition,
        ),
        "out": attr.string(mandatory = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
)
