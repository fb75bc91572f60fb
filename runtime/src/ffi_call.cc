// The out-of-line part of kernelc/ffi.h: the answer to a call frame that a
// handler's signature does not accept, errors, the thread pool and the
// stream, over XLA's C API. Compiled once into libkernelc_runtime.a.
#include <stdlib.h>
#include <string.h>

#include "kernelc/ffi.h"
#include "kernelc/runtime.h"

namespace kc::ffi {

// ---------------------------------------------------------------------------
// Errors

struct Failure {
  XLA_FFI_Error_Code code;
  char* message;
};

namespace {

// The failure of a call whose failure could not be allocated: shared,
// never freed.
Failure out_of_memory = {XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, nullptr};

Failure* NewFailure(XLA_FFI_Error_Code code, const char* message) {
  auto* failure = static_cast<Failure*>(malloc(sizeof(Failure)));
  if (failure == nullptr) return &out_of_memory;
  failure->code = code;
  failure->message = strdup(message);
  return failure;
}

XLA_FFI_Error* MakeError(const XLA_FFI_Api* api, XLA_FFI_Error_Code code,
                         const char* message) {
  XLA_FFI_Error_Create_Args args;
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.message = message;
  args.errc = code;
  return api->XLA_FFI_Error_Create(&args);
}

XLA_FFI_Error* InvalidArgument(const XLA_FFI_Api* api,
                               const rt::Message& message) {
  return MakeError(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, message.c_str());
}

// The text of an error that XLA made, and the error destroyed.
void TakeMessage(const XLA_FFI_Api* api, XLA_FFI_Error* error,
                 rt::Message& into) {
  XLA_FFI_Error_GetMessage_Args get;
  get.struct_size = XLA_FFI_Error_GetMessage_Args_STRUCT_SIZE;
  get.extension_start = nullptr;
  get.error = error;
  get.message = nullptr;
  api->XLA_FFI_Error_GetMessage(&get);
  into << (get.message != nullptr ? get.message : "");
  XLA_FFI_Error_Destroy_Args destroy;
  destroy.struct_size = XLA_FFI_Error_Destroy_Args_STRUCT_SIZE;
  destroy.extension_start = nullptr;
  destroy.error = error;
  api->XLA_FFI_Error_Destroy(&destroy);
}

}  // namespace

Error Error::InvalidArgument(const char* message) {
  Error e;
  e.failure_ = NewFailure(XLA_FFI_Error_Code_INVALID_ARGUMENT, message);
  return e;
}

Error Error::Internal(const char* message) {
  Error e;
  e.failure_ = NewFailure(XLA_FFI_Error_Code_INTERNAL, message);
  return e;
}

Error Error::InvalidArgument(const rt::Message& message) {
  return InvalidArgument(message.c_str());
}

Error Error::Internal(const rt::Message& message) {
  return Internal(message.c_str());
}

void Error::Free(Failure* failure) {
  if (failure == &out_of_memory) return;
  free(failure->message);
  free(failure);
}

XLA_FFI_Error* Error::EncodeFailure(const XLA_FFI_Api* api) {
  const char* text = failure_->message != nullptr
                         ? failure_->message
                         : "out of memory while reporting an error";
  XLA_FFI_Error* error = MakeError(api, failure_->code, text);
  Free(failure_);
  failure_ = nullptr;
  return error;
}

// ---------------------------------------------------------------------------
// The thread pool

int64_t ThreadPool::num_threads() const {
  int64_t threads = 0;
  XLA_FFI_ThreadPool_NumThreads_Args args;
  args.struct_size = XLA_FFI_ThreadPool_NumThreads_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.ctx = ctx_;
  args.num_threads = &threads;
  // No pool, or no answer: the call runs on its own thread.
  if (XLA_FFI_Error* error = api_->XLA_FFI_ThreadPool_NumThreads(&args)) {
    rt::Message ignored;
    TakeMessage(api_, error, ignored);
    return 0;
  }
  return threads;
}

void ThreadPool::Schedule(void (*task)(void* arg), void* arg) const {
  XLA_FFI_ThreadPool_Schedule_Args args;
  args.struct_size = XLA_FFI_ThreadPool_Schedule_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.ctx = ctx_;
  args.task = task;
  args.data = arg;
  // As XLA's typed API does: a task the pool cannot take runs here.
  if (XLA_FFI_Error* error = api_->XLA_FFI_ThreadPool_Schedule(&args)) {
    rt::Message ignored;
    TakeMessage(api_, error, ignored);
    task(arg);
  }
}

kc_pool ThreadPool::Pool() const {
  return kc_pool{
      const_cast<ThreadPool*>(this),
      [](void* self) { return static_cast<ThreadPool*>(self)->num_threads(); },
      [](void* self, void (*task)(void*), void* arg) {
        static_cast<ThreadPool*>(self)->Schedule(task, arg);
      }};
}

// ---------------------------------------------------------------------------
// The stream

void* Stream(const XLA_FFI_CallFrame* frame, XLA_FFI_Error** error) {
  XLA_FFI_Stream_Get_Args args;
  args.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  args.extension_start = nullptr;
  args.ctx = frame->ctx;
  args.stream = nullptr;
  if (XLA_FFI_Error* failed = frame->api->XLA_FFI_Stream_Get(&args)) {
    rt::Message why;
    why << "Failed to get platform stream: ";
    TakeMessage(frame->api, failed, why);
    *error = InvalidArgument(frame->api, why);
    return nullptr;
  }
  return args.stream;
}

// ---------------------------------------------------------------------------
// The check of a call

namespace {

const char* DataTypeName(XLA_FFI_DataType type) {
  switch (type) {
    case XLA_FFI_DataType_PRED:
      return "bool";
    case XLA_FFI_DataType_S8:
      return "int8";
    case XLA_FFI_DataType_S16:
      return "int16";
    case XLA_FFI_DataType_S32:
      return "int32";
    case XLA_FFI_DataType_S64:
      return "int64";
    case XLA_FFI_DataType_U8:
      return "uint8";
    case XLA_FFI_DataType_U16:
      return "uint16";
    case XLA_FFI_DataType_U32:
      return "uint32";
    case XLA_FFI_DataType_U64:
      return "uint64";
    case XLA_FFI_DataType_F16:
      return "float16";
    case XLA_FFI_DataType_F32:
      return "float32";
    case XLA_FFI_DataType_F64:
      return "float64";
    case XLA_FFI_DataType_BF16:
      return "bfloat16";
    default:
      return "another type";
  }
}

// Answers the metadata query with which XLA registers a handler.
XLA_FFI_Error* Metadata(const XLA_FFI_Api* api,
                        XLA_FFI_Metadata_Extension* extension,
                        XLA_FFI_Handler_Traits traits) {
  if (extension->extension_base.struct_size <
          XLA_FFI_Metadata_Extension_STRUCT_SIZE ||
      extension->metadata->struct_size < XLA_FFI_Metadata_STRUCT_SIZE) {
    rt::Message why;
    why << "Unexpected XLA_FFI_Metadata size. Check installed software "
           "versions.";
    return InvalidArgument(api, why);
  }
  extension->metadata->api_version =
      XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr,
                          XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  extension->metadata->traits = traits;
  extension->metadata->state_type_id = XLA_FFI_UNKNOWN_TYPE_ID;
  return nullptr;
}

// Why `frame` does not match `s`, which Accepts found it does not.
XLA_FFI_Error* Refusal(const XLA_FFI_CallFrame* frame, const Signature& s) {
  rt::Message why;
  if (frame->stage != s.stage) {
    why << "Wrong execution stage: expected `" << static_cast<int>(s.stage)
        << "` but got `" << static_cast<int>(frame->stage) << "`";
  } else if (frame->args.size != s.args) {
    why << "Wrong number of arguments: expected " << s.args << " but got "
        << frame->args.size;
  } else if (frame->rets.size != s.rets) {
    why << "Wrong number of results: expected " << s.rets << " but got "
        << frame->rets.size;
  } else if (frame->attrs.size != s.attrs) {
    why << "Wrong number of attributes: expected " << s.attrs << " but got "
        << frame->attrs.size;
    for (int64_t i = 0; i < frame->attrs.size; ++i) {
      why << (i == 0 ? " with name(s): " : ", ");
      why.Append(frame->attrs.names[i]->ptr, frame->attrs.names[i]->len);
    }
  } else {
    for (int64_t i = 0; i < s.args; ++i)
      if (frame->args.types[i] != XLA_FFI_ArgType_BUFFER)
        return InvalidArgument(frame->api, why << "Wrong argument type: "
                                                  "argument "
                                               << i << " is not a buffer");
    for (int64_t i = 0; i < s.rets; ++i)
      if (frame->rets.types[i] != XLA_FFI_RetType_BUFFER)
        return InvalidArgument(frame->api, why << "Wrong result type: result "
                                               << i << " is not a buffer");
    for (int64_t i = 0; i < s.attrs; ++i) {
      const Attribute& a = s.attributes[i];
      if (frame->attrs.names[i]->len != a.size ||
          memcmp(frame->attrs.names[i]->ptr, a.name, a.size) != 0) {
        why << "Attribute name mismatch: ";
        why.Append(frame->attrs.names[i]->ptr, frame->attrs.names[i]->len);
        return InvalidArgument(frame->api, why << " vs " << a.name);
      }
      const auto* scalar =
          static_cast<const XLA_FFI_Scalar*>(frame->attrs.attrs[i]);
      if (frame->attrs.types[i] != XLA_FFI_AttrType_SCALAR)
        return InvalidArgument(frame->api, why << "Wrong attribute type: '"
                                               << a.name
                                               << "' is not a scalar");
      if (scalar->dtype != a.type)
        return InvalidArgument(
            frame->api, why << "Wrong attribute type: '" << a.name
                            << "' expects a " << DataTypeName(a.type)
                            << " scalar, got " << DataTypeName(scalar->dtype));
    }
    // Accepts and this read the same rules; should they ever part, the
    // call still fails with a message.
    why << "the call does not match the handler's signature";
  }
  return InvalidArgument(frame->api, why);
}

}  // namespace

XLA_FFI_Error* Refuse(XLA_FFI_CallFrame* frame, const Signature& s) {
  if (frame->struct_size != XLA_FFI_CallFrame_STRUCT_SIZE) {
    rt::Message why;
    why << "Unexpected XLA_FFI_CallFrame size: expected "
        << static_cast<uint64_t>(XLA_FFI_CallFrame_STRUCT_SIZE) << " got "
        << static_cast<uint64_t>(frame->struct_size)
        << ". Check installed software versions.";
    return InvalidArgument(frame->api, why);
  }
  if (frame->extension_start != nullptr &&
      frame->extension_start->type == XLA_FFI_Extension_Metadata)
    return Metadata(
        frame->api,
        reinterpret_cast<XLA_FFI_Metadata_Extension*>(frame->extension_start),
        s.traits);
  return Refusal(frame, s);
}

}  // namespace kc::ffi
