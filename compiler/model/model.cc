#include "compiler/model/model.h"

#include <array>

namespace kernelc::model {

namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::string_view cpp;
  int bytes;
};

constexpr std::array<DTypeInfo, 13> kDTypes = {{
    {DType::kBool, "bool", "bool", 1},
    {DType::kI8, "int8", "int8_t", 1},
    {DType::kI16, "int16", "int16_t", 2},
    {DType::kI32, "int32", "int32_t", 4},
    {DType::kI64, "int64", "int64_t", 8},
    {DType::kU8, "uint8", "uint8_t", 1},
    {DType::kU16, "uint16", "uint16_t", 2},
    {DType::kU32, "uint32", "uint32_t", 4},
    {DType::kU64, "uint64", "uint64_t", 8},
    {DType::kF16, "float16", "::kc::half", 2},
    {DType::kBF16, "bfloat16", "::kc::bfloat16", 2},
    {DType::kF32, "float32", "float", 4},
    {DType::kF64, "float64", "double", 8},
}};

const DTypeInfo& Info(DType t) { return kDTypes[static_cast<int>(t)]; }

constexpr std::array<std::string_view, 5> kRoleNames = {"in", "inmut", "out",
                                                        "scalar", "derived"};

}  // namespace

std::string_view DTypeName(DType t) { return Info(t).name; }
std::string_view DTypeCppName(DType t) { return Info(t).cpp; }
int DTypeBytes(DType t) { return Info(t).bytes; }

std::optional<DType> DTypeFromName(std::string_view name) {
  for (const DTypeInfo& i : kDTypes)
    if (i.name == name) return i.type;
  return std::nullopt;
}

bool IsFloat(DType t) {
  return t == DType::kF16 || t == DType::kBF16 || t == DType::kF32 ||
         t == DType::kF64;
}

bool IsInteger(DType t) { return !IsFloat(t) && t != DType::kBool; }

std::string_view RoleName(Role r) { return kRoleNames[static_cast<int>(r)]; }

std::optional<Role> RoleFromName(std::string_view name) {
  for (size_t i = 0; i < kRoleNames.size(); ++i)
    if (kRoleNames[i] == name) return static_cast<Role>(i);
  return std::nullopt;
}

std::string_view PtxAbiName(PtxAbi abi) {
  return abi == PtxAbi::kNumba ? "numba" : "kernelc";
}

std::optional<PtxAbi> PtxAbiFromName(std::string_view name) {
  if (name == "kernelc") return PtxAbi::kKernelc;
  if (name == "numba") return PtxAbi::kNumba;
  return std::nullopt;
}

std::string_view KernelKindName(KernelKind k) {
  return k == KernelKind::kGlobal ? "global" : "host";
}

std::string Kernel::Id() const {
  if (!instantiation) return name;
  return instantiation->op + "__" + std::to_string(instantiation->variant);
}

const Constant* Kernel::FindConstant(std::string_view n) const {
  for (const Constant& c : constants)
    if (c.name == n) return &c;
  return nullptr;
}

bool Kernel::HasTraced() const {
  for (const Param& p : params)
    if (p.traced) return true;
  return false;
}

const Param* Kernel::FindParam(std::string_view n) const {
  for (const Param& p : params)
    if (p.name == n) return &p;
  return nullptr;
}

int Kernel::IndexOf(std::string_view n) const {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].name == n) return static_cast<int>(i);
  return -1;
}

const Kernel* Module::FindKernel(std::string_view n) const {
  for (const Kernel& k : kernels)
    if (k.name == n) return &k;
  return nullptr;
}

void ForEachPath(Module& m, const std::function<void(std::string&)>& f) {
  auto text = [&f](std::optional<Text>& t) {
    if (t) f(t->loc.file);
  };
  for (std::string& s : m.sources) f(s);
  for (Kernel& k : m.kernels) {
    if (!k.source.empty()) f(k.source);  // empty: a PTX-only kernel
    if (k.ptx) {
      f(k.ptx->file);
      f(k.ptx->loc.file);
    }
    f(k.loc.file);
    if (k.instantiation) f(k.instantiation->loc.file);
    for (Text& t : k.grid) f(t.loc.file);
    text(k.shared_bytes);
    for (Param& p : k.params) {
      f(p.loc.file);
      text(p.shape);
      text(p.init);
      text(p.derived);
      text(p.sum);
    }
    for (BlockFeature& b : k.block_features) f(b.loc.file);
    if (k.guard) f(k.guard->loc.file);
    text(k.vjp);
    text(k.jvp);
    for (Text& t : k.parallel) f(t.loc.file);
  }
}

std::vector<int64_t> DefaultBlock(int rank) {
  switch (rank) {
    case 1:
      return {256};
    case 2:
      return {16, 16};
    default:
      return {8, 8, 4};
  }
}

}  // namespace kernelc::model
