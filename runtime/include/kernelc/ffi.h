// An XLA FFI call as generated handlers see it, over XLA's C API
// (xla/ffi/api/c_api.h) alone: the buffers, errors, thread pool and stream
// of a call, and the check of a call frame against the handler's
// signature.
//
// XLA's typed C++ API (xla/ffi/api/ffi.h) binds a handler through
// templates instantiated per signature: every build of a package compiled
// and optimized XLA's decoding once per handler, most of a shim's compile
// time. Here a handler's signature is a table (Signature): Accepts, inline,
// checks a call frame against it in a few compares that the constant table
// unrolls into, and Refuse, in the prebuilt runtime (libkernelc_runtime.a),
// answers the calls it does not take. The handler then reads its operands
// from the call frame by index, each a load. What the typed API checks,
// these check, with XLA's messages: the call frame's size, the metadata
// query at registration (Refuse answers it: the FFI API version of these
// headers and the handler's traits), the execution stage, the numbers of
// arguments, results and attributes, each operand's kind (a buffer), each
// attribute's name and scalar type.
#ifndef KERNELC_FFI_H_
#define KERNELC_FFI_H_

#include <stddef.h>
#include <stdint.h>

#include "kernelc/batch.h"
#include "kernelc/launch.h"
#include "xla/ffi/api/c_api.h"

namespace kc::rt {
class Message;  // kernelc/runtime.h
}  // namespace kc::rt

namespace kc::ffi {

// XLA's element types that kernels take, with XLA's codes.
enum class DataType : uint8_t {
  INVALID = XLA_FFI_DataType_INVALID,
  PRED = XLA_FFI_DataType_PRED,
  S8 = XLA_FFI_DataType_S8,
  S16 = XLA_FFI_DataType_S16,
  S32 = XLA_FFI_DataType_S32,
  S64 = XLA_FFI_DataType_S64,
  U8 = XLA_FFI_DataType_U8,
  U16 = XLA_FFI_DataType_U16,
  U32 = XLA_FFI_DataType_U32,
  U64 = XLA_FFI_DataType_U64,
  F16 = XLA_FFI_DataType_F16,
  F32 = XLA_FFI_DataType_F32,
  F64 = XLA_FFI_DataType_F64,
  BF16 = XLA_FFI_DataType_BF16,
};

// A buffer argument or result of a call.
class AnyBuffer {
 public:
  explicit AnyBuffer(const XLA_FFI_Buffer* buffer) : buffer_(buffer) {}
  DataType element_type() const {
    return static_cast<DataType>(buffer_->dtype);
  }
  rt::Dims dimensions() const {
    return rt::Dims{buffer_->dims, static_cast<size_t>(buffer_->rank)};
  }
  void* untyped_data() const { return buffer_->data; }

 private:
  const XLA_FFI_Buffer* buffer_;
};

// A result of a call, as XLA's typed API spells one: *result is the buffer.
template <typename T>
class Result {
 public:
  explicit Result(T value) : value_(value) {}
  const T& operator*() const { return value_; }
  const T* operator->() const { return &value_; }

 private:
  T value_;
};

// The code and text of a failed call (ffi_call.cc).
struct Failure;

// What a handler returns: success, or a failure with XLA's error code and a
// message, which XLA shows as the Python exception's text. Move-only; a
// success holds nothing, so that returning one costs a null pointer.
class Error {
 public:
  Error() = default;
  Error(Error&& other) noexcept : failure_(other.failure_) {
    other.failure_ = nullptr;
  }
  Error& operator=(Error&& other) noexcept {
    Failure* failure = failure_;
    failure_ = other.failure_;
    other.failure_ = failure;
    return *this;
  }
  Error(const Error&) = delete;
  Error& operator=(const Error&) = delete;
  ~Error() {
    if (failure_ != nullptr) Free(failure_);
  }

  // The errors, out of line and cold: a handler's error paths stay out of
  // its way, the message built only on them.
  static Error Success() { return Error(); }
  __attribute__((cold)) static Error InvalidArgument(const char* message);
  __attribute__((cold)) static Error InvalidArgument(const rt::Message& message);
  __attribute__((cold)) static Error Internal(const char* message);
  __attribute__((cold)) static Error Internal(const rt::Message& message);

  bool success() const { return failure_ == nullptr; }
  bool failure() const { return failure_ != nullptr; }

  // The error as XLA takes it from a handler: nullptr on success.
  XLA_FFI_Error* Encode(const XLA_FFI_Api* api) && {
    return failure_ == nullptr ? nullptr : EncodeFailure(api);
  }

 private:
  static void Free(Failure* failure);
  XLA_FFI_Error* EncodeFailure(const XLA_FFI_Api* api);
  Failure* failure_ = nullptr;
};

// XLA's intra-op thread pool of a CPU call.
class ThreadPool {
 public:
  explicit ThreadPool(const XLA_FFI_CallFrame* frame)
      : api_(frame->api), ctx_(frame->ctx) {}
  // Its number of threads; 0 where XLA gives the call none.
  int64_t num_threads() const;
  // Runs task(arg) once on one of its threads, or on this one where that
  // cannot be.
  void Schedule(void (*task)(void* arg), void* arg) const;
  // The pool as the runtime's launch split and batch take it; *this must
  // outlive the result.
  kc_pool Pool() const;

 private:
  const XLA_FFI_Api* api_;
  XLA_FFI_ExecutionContext* ctx_;
};

// An attribute of a handler's signature: its name and scalar type.
struct Attribute {
  const char* name;
  size_t size;  // of name, without the NUL
  XLA_FFI_DataType type;
};

// What a handler takes, in the order a call frame carries it: `args` buffer
// arguments, `rets` buffer results, and `attrs` scalar attributes, which
// XLA passes sorted by name (`attributes` lists them so). `stage` is the
// execution stage the handler runs in, `traits` what it reports at
// registration (XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE).
struct Signature {
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Handler_Traits traits;
  int64_t args;
  int64_t rets;
  int64_t attrs;
  const Attribute* attributes;
};

// Whether `frame` is an ordinary call of a handler of `signature`: the call
// frame's size, not the metadata query of a registration, the stage, the
// numbers of arguments, results and attributes, each operand a buffer, each
// attribute a scalar of its name and type. Inline, so that a handler's
// constant signature unrolls it into a few compares; the names are
// compared byte by byte, as XLA's binding does (they are short).
__attribute__((always_inline)) inline bool Accepts(
    const XLA_FFI_CallFrame* frame, const Signature& signature) {
  const XLA_FFI_Extension_Base* extension = frame->extension_start;
  if (frame->struct_size != XLA_FFI_CallFrame_STRUCT_SIZE ||
      (extension != nullptr && extension->type == XLA_FFI_Extension_Metadata) ||
      frame->stage != signature.stage || frame->args.size != signature.args ||
      frame->rets.size != signature.rets ||
      frame->attrs.size != signature.attrs)
    return false;
  for (int64_t i = 0; i < signature.args; ++i)
    if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER) return false;
  for (int64_t i = 0; i < signature.rets; ++i)
    if (frame->rets.types[i] != XLA_FFI_RetType_BUFFER) return false;
  for (int64_t i = 0; i < signature.attrs; ++i) {
    const Attribute& expected = signature.attributes[i];
    const XLA_FFI_ByteSpan* name = frame->attrs.names[i];
    if (frame->attrs.types[i] != XLA_FFI_AttrType_SCALAR ||
        static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[i])->dtype !=
            expected.type ||
        name->len != expected.size)
      return false;
    for (size_t c = 0; c < expected.size; ++c)
      if (name->ptr[c] != expected.name[c]) return false;
  }
  return true;
}

// What a handler answers a call that Accepts did not take: nullptr after
// answering the metadata query of a registration (the FFI API version of
// these headers and the signature's traits), else the error that says
// what does not match, with XLA's messages.
XLA_FFI_Error* Refuse(XLA_FFI_CallFrame* frame, const Signature& signature);

// The operands of a call that Accepts took, by index.
inline AnyBuffer Arg(const XLA_FFI_CallFrame* frame, int64_t i) {
  return AnyBuffer(static_cast<const XLA_FFI_Buffer*>(frame->args.args[i]));
}
inline Result<AnyBuffer> Ret(const XLA_FFI_CallFrame* frame, int64_t i) {
  return Result<AnyBuffer>(
      AnyBuffer(static_cast<const XLA_FFI_Buffer*>(frame->rets.rets[i])));
}
// Attribute `i` in XLA's (sorted) order, a scalar of type T.
template <typename T>
T Attr(const XLA_FFI_CallFrame* frame, int64_t i) {
  return *static_cast<const T*>(
      static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[i])->value);
}

// The CUDA stream of a GPU call (a CUstream), or nullptr with *error set.
void* Stream(const XLA_FFI_CallFrame* frame, XLA_FFI_Error** error);

}  // namespace kc::ffi

#endif  // KERNELC_FFI_H_
