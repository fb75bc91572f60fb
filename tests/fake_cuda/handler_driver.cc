// Calls the XLA FFI handlers a kernelc package exports, as XLA's GPU runtime
// does: dlopen the package's library, build an XLA_FFI_CallFrame (buffers,
// attributes, the stream) and call the handler symbol. Run with the fake
// libcuda (tests/fake_cuda/fake_libcuda.cc) as libcuda.so.1, the driver
// calls each handler makes are logged between the lines this prints.
//
//   handler_driver LIBRARY < CALLS
//
// One call per line of CALLS:
//   STAGE SYMBOL [stream=HEX] OPERAND...
// STAGE is instantiate, prepare, initialize or execute, or "metadata" (the
// handler reports its API version and traits). Operands, in order:
//   arg:DTYPE:ADDRESS:DIMS    an argument buffer (ADDRESS in hex, 0 for
//   ret:DTYPE:ADDRESS:DIMS    null; DIMS like 4x300, empty for rank 0)
//   attr:NAME:DTYPE:VALUE     a scalar attribute
// DTYPE: pred, s8, s16, s32, s64, u8, u16, u32, u64, f16, bf16, f32, f64.
// For each call it prints "call STAGE SYMBOL", then "-> ok" or
// "-> error CODE: MESSAGE".
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <deque>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "xla/ffi/api/c_api.h"

// The opaque types of the C API, as this driver makes them.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code;
  std::string message;
};
struct XLA_FFI_ExecutionContext {
  void* stream;
};

namespace {

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  return new XLA_FFI_Error{args->errc, args->message ? args->message : ""};
}
void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  args->message = args->error->message.c_str();
}
void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }
XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  args->stream = args->ctx->stream;
  return nullptr;
}
XLA_FFI_Error* Unsupported() {
  return new XLA_FFI_Error{XLA_FFI_Error_Code_UNIMPLEMENTED,
                           "not provided by the handler driver"};
}

XLA_FFI_Api MakeApi() {
  XLA_FFI_Api api{};
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.api_version = {XLA_FFI_Api_Version_STRUCT_SIZE, nullptr,
                     XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  api.XLA_FFI_Error_Create = ErrorCreate;
  api.XLA_FFI_Error_GetMessage = ErrorGetMessage;
  api.XLA_FFI_Error_Destroy = ErrorDestroy;
  api.XLA_FFI_Stream_Get = StreamGet;
  // Nothing else is needed by a CUDA handler; the rest fails loudly.
  api.XLA_FFI_Handler_Register = [](XLA_FFI_Handler_Register_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_Type_Register = [](XLA_FFI_Type_Register_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_ExecutionContext_Get = [](XLA_FFI_ExecutionContext_Get_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_State_Set = [](XLA_FFI_State_Set_Args*) { return Unsupported(); };
  api.XLA_FFI_State_Get = [](XLA_FFI_State_Get_Args*) { return Unsupported(); };
  api.XLA_FFI_DeviceMemory_Allocate = [](XLA_FFI_DeviceMemory_Allocate_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_DeviceMemory_Free = [](XLA_FFI_DeviceMemory_Free_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_ThreadPool_Schedule = [](XLA_FFI_ThreadPool_Schedule_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_ThreadPool_NumThreads = [](XLA_FFI_ThreadPool_NumThreads_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_Future_Create = [](XLA_FFI_Future_Create_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_Future_SetAvailable = [](XLA_FFI_Future_SetAvailable_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_Future_SetError = [](XLA_FFI_Future_SetError_Args*) {
    return Unsupported();
  };
  api.XLA_FFI_RunId_Get = [](XLA_FFI_RunId_Get_Args*) { return Unsupported(); };
  api.XLA_FFI_DeviceOrdinal_Get = [](XLA_FFI_DeviceOrdinal_Get_Args*) {
    return Unsupported();
  };
  return api;
}

struct DType {
  const char* name;
  XLA_FFI_DataType type;
  int bytes;
};
const DType kDTypes[] = {
    {"pred", XLA_FFI_DataType_PRED, 1}, {"s8", XLA_FFI_DataType_S8, 1},
    {"s16", XLA_FFI_DataType_S16, 2},   {"s32", XLA_FFI_DataType_S32, 4},
    {"s64", XLA_FFI_DataType_S64, 8},   {"u8", XLA_FFI_DataType_U8, 1},
    {"u16", XLA_FFI_DataType_U16, 2},   {"u32", XLA_FFI_DataType_U32, 4},
    {"u64", XLA_FFI_DataType_U64, 8},   {"f16", XLA_FFI_DataType_F16, 2},
    {"bf16", XLA_FFI_DataType_BF16, 2}, {"f32", XLA_FFI_DataType_F32, 4},
    {"f64", XLA_FFI_DataType_F64, 8},
};

const DType* FindDType(const std::string& name) {
  for (const DType& d : kDTypes)
    if (name == d.name) return &d;
  return nullptr;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) out.push_back(part);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

// Everything one call frame points at; deques keep addresses stable.
struct Frame {
  std::deque<std::vector<int64_t>> dims;
  std::deque<XLA_FFI_Buffer> args, rets;
  std::vector<XLA_FFI_ArgType> arg_types;
  std::vector<XLA_FFI_RetType> ret_types;
  std::vector<void*> arg_ptrs, ret_ptrs;
  struct Attr {
    std::string name;
    XLA_FFI_ByteSpan span;
    XLA_FFI_Scalar scalar;
    alignas(8) unsigned char value[8];
  };
  std::deque<Attr> attrs;
  std::vector<XLA_FFI_AttrType> attr_types;
  std::vector<XLA_FFI_ByteSpan*> attr_names;
  std::vector<void*> attr_ptrs;
  XLA_FFI_ExecutionContext ctx{nullptr};
};

// Parses "arg:f32:1000:4x300" into a buffer; returns false on bad input.
bool ParseBuffer(const std::vector<std::string>& f, Frame* frame,
                 XLA_FFI_Buffer* b) {
  if (f.size() != 4) return false;
  const DType* d = FindDType(f[1]);
  if (!d) return false;
  std::vector<int64_t>& dims = frame->dims.emplace_back();
  if (!f[3].empty())
    for (const std::string& e : Split(f[3], 'x'))
      dims.push_back(atoll(e.c_str()));
  *b = XLA_FFI_Buffer{};
  b->struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
  b->dtype = d->type;
  b->data = reinterpret_cast<void*>(strtoull(f[2].c_str(), nullptr, 16));
  b->rank = static_cast<int64_t>(dims.size());
  b->dims = dims.data();
  return true;
}

bool ParseAttr(const std::vector<std::string>& f, Frame::Attr* a) {
  if (f.size() != 4) return false;
  const DType* d = FindDType(f[2]);
  if (!d) return false;
  a->name = f[1];
  a->scalar.dtype = d->type;
  const char* v = f[3].c_str();
  memset(a->value, 0, sizeof a->value);
  if (d->type == XLA_FFI_DataType_F32) {
    float x = strtof(v, nullptr);
    memcpy(a->value, &x, 4);
  } else if (d->type == XLA_FFI_DataType_F64) {
    double x = strtod(v, nullptr);
    memcpy(a->value, &x, 8);
  } else if (d->type == XLA_FFI_DataType_F16 ||
             d->type == XLA_FFI_DataType_BF16) {
    return false;  // XLA has no 16-bit float attributes
  } else {
    long long x = strtoll(v, nullptr, 0);  // little-endian: low bytes first
    memcpy(a->value, &x, d->bytes);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: handler_driver LIBRARY < CALLS\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], dlerror());
    return 2;
  }
  XLA_FFI_Api api = MakeApi();
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream words(line);
    std::string stage_name, symbol, word;
    if (!(words >> stage_name >> symbol)) continue;
    auto* handler =
        reinterpret_cast<XLA_FFI_Handler*>(dlsym(lib, symbol.c_str()));
    if (!handler) {
      fprintf(stderr, "no symbol %s\n", symbol.c_str());
      return 2;
    }
    Frame frame;
    while (words >> word) {
      std::vector<std::string> f = Split(word, ':');
      bool ok = true;
      if (word.rfind("stream=", 0) == 0) {
        frame.ctx.stream =
            reinterpret_cast<void*>(strtoull(word.c_str() + 7, nullptr, 16));
      } else if (f[0] == "arg") {
        ok = ParseBuffer(f, &frame, &frame.args.emplace_back());
      } else if (f[0] == "ret") {
        ok = ParseBuffer(f, &frame, &frame.rets.emplace_back());
      } else if (f[0] == "attr") {
        ok = ParseAttr(f, &frame.attrs.emplace_back());
      } else {
        ok = false;
      }
      if (!ok) {
        fprintf(stderr, "bad operand '%s'\n", word.c_str());
        return 2;
      }
    }
    for (XLA_FFI_Buffer& b : frame.args) {
      frame.arg_types.push_back(XLA_FFI_ArgType_BUFFER);
      frame.arg_ptrs.push_back(&b);
    }
    for (XLA_FFI_Buffer& b : frame.rets) {
      frame.ret_types.push_back(XLA_FFI_RetType_BUFFER);
      frame.ret_ptrs.push_back(&b);
    }
    // XLA passes attributes sorted by name.
    std::vector<Frame::Attr*> sorted;
    for (Frame::Attr& a : frame.attrs) sorted.push_back(&a);
    std::sort(sorted.begin(), sorted.end(),
              [](const Frame::Attr* a, const Frame::Attr* b) {
                return a->name < b->name;
              });
    for (Frame::Attr* a : sorted) {
      a->span = {a->name.data(), a->name.size()};
      a->scalar.value = a->value;
      frame.attr_types.push_back(XLA_FFI_AttrType_SCALAR);
      frame.attr_names.push_back(&a->span);
      frame.attr_ptrs.push_back(&a->scalar);
    }

    XLA_FFI_CallFrame call{};
    call.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    call.api = &api;
    call.ctx = &frame.ctx;
    call.args = {XLA_FFI_Args_STRUCT_SIZE, nullptr,
                 static_cast<int64_t>(frame.arg_ptrs.size()),
                 frame.arg_types.data(), frame.arg_ptrs.data()};
    call.rets = {XLA_FFI_Rets_STRUCT_SIZE, nullptr,
                 static_cast<int64_t>(frame.ret_ptrs.size()),
                 frame.ret_types.data(), frame.ret_ptrs.data()};
    call.attrs = {XLA_FFI_Attrs_STRUCT_SIZE,
                  nullptr,
                  static_cast<int64_t>(frame.attr_ptrs.size()),
                  frame.attr_types.data(),
                  frame.attr_names.data(),
                  frame.attr_ptrs.data()};
    XLA_FFI_Metadata metadata{};
    XLA_FFI_Metadata_Extension extension{};
    if (stage_name == "metadata") {
      metadata.struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
      extension.extension_base = {XLA_FFI_Metadata_Extension_STRUCT_SIZE,
                                  XLA_FFI_Extension_Metadata, nullptr};
      extension.metadata = &metadata;
      call.extension_start = &extension.extension_base;
    } else if (stage_name == "instantiate") {
      call.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
    } else if (stage_name == "prepare") {
      call.stage = XLA_FFI_ExecutionStage_PREPARE;
    } else if (stage_name == "initialize") {
      call.stage = XLA_FFI_ExecutionStage_INITIALIZE;
    } else if (stage_name == "execute") {
      call.stage = XLA_FFI_ExecutionStage_EXECUTE;
    } else {
      fprintf(stderr, "bad stage '%s'\n", stage_name.c_str());
      return 2;
    }
    printf("call %s %s\n", stage_name.c_str(), symbol.c_str());
    XLA_FFI_Error* error = handler(&call);
    if (error) {
      printf("-> error %d: %s\n", static_cast<int>(error->code),
             error->message.c_str());
      delete error;
    } else if (stage_name == "metadata") {
      printf("-> ok: api %d.%d, traits %u\n",
             metadata.api_version.major_version,
             metadata.api_version.minor_version, metadata.traits);
    } else {
      printf("-> ok\n");
    }
    fflush(stdout);
  }
  return 0;
}
