"""emitted_cases: a header of expressions as EmitCpp emits them, written by
the emit_cpp_cases tool, for a test that compiles them."""

def _emitted_cases_impl(ctx):
    out = ctx.outputs.out
    ctx.actions.run(
        executable = ctx.executable._tool,
        arguments = [out.path],
        outputs = [out],
        mnemonic = "EmitCppCases",
        progress_message = "Emitting expression cases into %s" % out.short_path,
    )
    return [DefaultInfo(files = depset([out]))]

emitted_cases = rule(
    implementation = _emitted_cases_impl,
    attrs = {
        "out": attr.output(mandatory = True),
        "_tool": attr.label(
            default = "//compiler/expr:emit_cpp_cases",
            executable = True,
            cfg = "exec",
        ),
    },
)
