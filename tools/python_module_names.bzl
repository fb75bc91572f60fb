"""python_module_names: a C++ header of the standard library's top-level
module names, from the workspace Python's sys.stdlib_module_names."""

def _python_module_names_impl(ctx):
    out = ctx.actions.declare_file(ctx.attr.out)
    args = ctx.actions.args()
    args.add(out)
    args.add(ctx.attr.symbol)
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [args],
        outputs = [out],
        mnemonic = "PythonModuleNames",
        progress_message = "Listing Python's standard modules in %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]))]

python_module_names = rule(
    implementation = _python_module_names_impl,
    attrs = {
        "out": attr.string(mandatory = True),
        "symbol": attr.string(mandatory = True),
        "_tool": attr.label(
            default = "//tools:python_module_names",
            executable = True,
            cfg = "exec",
        ),
    },
)
