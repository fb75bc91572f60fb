"""hlo_capture, which the command-buffer test relies on, on HLO text in the
form XLA's GPU compiler dumps after command buffer scheduling. Runs without
a GPU."""

import textwrap

import hlo_capture

# One custom call outlined into a command buffer directly, one inside a
# while loop whose body a command buffer calls, and one left outside.
_HLO = textwrap.dedent("""\
    HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[8]{0})->f32[8]{0}}

    %body (p: (s32[], f32[8])) -> (s32[], f32[8]) {
      %p = (s32[], f32[8]{0}) parameter(0)
      %g = f32[8]{0} get-tuple-element(%p), index=1
      %cc.1 = f32[8]{0} custom-call(%g), custom_call_target="pkg.op.0123", api_version=API_VERSION_TYPED_FFI
      %i = s32[] get-tuple-element(%p), index=0
      ROOT %t = (s32[], f32[8]{0}) tuple(%i, %cc.1)
    }

    %cond (p.1: (s32[], f32[8])) -> pred[] {
      %p.1 = (s32[], f32[8]{0}) parameter(0)
      ROOT %c = pred[] constant(true)
    }

    %command_buffer (p.2: f32[8]) -> f32[8] {
      %p.2 = f32[8]{0} parameter(0)
      ROOT %cc.0 = f32[8]{0} custom-call(%p.2), custom_call_target="pkg.op.0123", api_version=API_VERSION_TYPED_FFI
    }

    %command_buffer.1 (p.3: (s32[], f32[8])) -> (s32[], f32[8]) {
      %p.3 = (s32[], f32[8]{0}) parameter(0)
      ROOT %w = (s32[], f32[8]{0}) while(%p.3), condition=%cond, body=%body
    }

    ENTRY %main (x: f32[8]) -> f32[8] {
      %x = f32[8]{0} parameter(0)
      %call = f32[8]{0} call(%x), to_apply=%command_buffer
      %z = s32[] constant(0)
      %t.1 = (s32[], f32[8]{0}) tuple(%z, %call)
      %call.1 = (s32[], f32[8]{0}) call(%t.1), to_apply=%command_buffer.1
      %y = f32[8]{0} get-tuple-element(%call.1), index=1
      ROOT %cc.2 = f32[8]{0} custom-call(%y), custom_call_target="pkg.op.0123", api_version=API_VERSION_TYPED_FFI
    }
    """)


def test_computations():
    assert list(hlo_capture.computations(_HLO)) == [
        "body", "cond", "command_buffer", "command_buffer.1", "main"]


def test_capture_counts_calls_in_command_buffers_and_what_they_call():
    assert hlo_capture.capture([_HLO], "pkg.op.") == (3, 2)
    assert hlo_capture.capture([_HLO], "other.") == (0, 0)


def test_without_command_buffers_nothing_is_captured():
    plain = _HLO.replace("command_buffer", "region")
    assert hlo_capture.capture([plain], "pkg.op.") == (3, 0)
