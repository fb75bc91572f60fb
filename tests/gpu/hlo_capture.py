"""Which custom calls XLA put into command buffers, read from optimized HLO
text (the `*gpu_after_optimizations.txt` files of --xla_dump_to).

XLA's CommandBufferScheduling outlines each run of commands into a
computation named `command_buffer` (made unique: command_buffer.1, ...) that
a `call` instruction runs as one CUDA graph; computations such a buffer
calls (the body and condition of a captured while loop) are recorded into
it too. A custom call is captured when it sits in one of those."""

import re

_HEADER = re.compile(r"^(?:ENTRY\s+)?%?([\w.\-]+)\s*(?:\(.*\))?.*\{\s*$")
_CALLED = re.compile(
    r"\b(?:to_apply|body|condition|calls)=%?([\w.\-]+)"
    r"|\b(?:branch_computations|called_computations)=\{([^}]*)\}")
_TARGET = re.compile(r'custom_call_target="([^"]*)"')


def computations(text):
    """Computation name -> its instruction lines, from one HLO module."""
    out, name = {}, None
    for line in text.splitlines():
        if name is None:
            m = _HEADER.match(line)
            if m and not line.startswith((" ", "\t", "HloModule")):
                name = m.group(1)
                out[name] = []
        elif line.startswith("}"):
            name = None
        else:
            out[name].append(line)
    return out


def capture(texts, target_prefix):
    """(custom calls to targets starting with `target_prefix`, how many of
    them are inside command buffers) over the modules in `texts`."""
    calls = captured = 0
    for text in texts:
        comps = computations(text)
        called = {}
        for name, lines in comps.items():
            targets = set()
            for line in lines:
                for m in _CALLED.finditer(line):
                    if m.group(1):
                        targets.add(m.group(1))
                    else:
                        targets.update(t.strip().lstrip("%")
                                       for t in m.group(2).split(",")
                                       if t.strip())
            called[name] = targets
        inside = set()
        todo = [n for n in comps if n.split(".")[0] == "command_buffer"]
        while todo:
            n = todo.pop()
            if n in inside or n not in comps:
                continue
            inside.add(n)
            todo.extend(called[n])
        for name, lines in comps.items():
            for line in lines:
                m = _TARGET.search(line)
                if m and m.group(1).startswith(target_prefix):
                    calls += 1
                    captured += name in inside
    return calls, captured
