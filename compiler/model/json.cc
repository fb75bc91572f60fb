#include "compiler/model/json.h"

#include <fmt/format.h>
#include <llvm/ADT/SmallString.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Path.h>

#include <limits>
#include <map>
#include <set>
#include <utility>
#include <variant>

#include <algorithm>
#include <cctype>

namespace kernelc::model {

using diag::Id;
using nlohmann::json;

namespace {

// A spec's ranks: -1 for a pointer (its shape gives the rank), else a
// view's; more dimensions than any array has are an error.
constexpr int64_t kMaxSpecRank = 64;

json LocToJson(const SourceLoc& l) { return l.ToString(); }

// What a spec may write as an element type: names, scopes and template
// arguments ("unsigned char", "::ns::Pair<float, 2>"), nothing that ends a
// declaration.
bool IsTypeName(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_: <>,").find(c) != std::string_view::npos;
  });
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

json TextToJson(const Text& t) {
  return json{{"loc", LocToJson(t.loc)}, {"text", t.text}};
}

json ParamToJson(const Param& p) {
  json j{{"dtype", DTypeName(p.dtype)},
         {"loc", LocToJson(p.loc)},
         {"name", p.name},
         {"role", RoleName(p.role)}};
  if (IsTensor(p.role)) {
    j["access"] = p.access == Access::kView ? "view" : "pointer";
    j["rank"] = p.rank;
    if (p.shape) j["shape"] = TextToJson(*p.shape);
    if (p.init) j["init"] = TextToJson(*p.init);
  }
  if (p.derived) j["derived"] = TextToJson(*p.derived);
  if (p.sum) j["sum"] = TextToJson(*p.sum);
  if (p.traced) j["traced"] = true;
  if (p.optional) j["optional"] = true;
  return j;
}

json KernelToJson(const Kernel& k) {
  json params = json::array();
  for (const Param& p : k.params) params.push_back(ParamToJson(p));
  json j{{"kind", KernelKindName(k.kind)},
         {"loc", LocToJson(k.loc)},
         {"name", k.name},
         {"params", params}};
  if (!k.source.empty()) j["source"] = k.source;
  if (k.ptx)
    j["ptx"] = {{"abi", PtxAbiName(k.ptx->abi)},
                {"entry", k.ptx->entry},
                {"file", k.ptx->file},
                {"loc", LocToJson(k.ptx->loc)}};
  if (k.instantiation)
    j["instantiation"] = {{"args", k.instantiation->args},
                          {"loc", LocToJson(k.instantiation->loc)},
                          {"op", k.instantiation->op},
                          {"variant", k.instantiation->variant}};
  if (!k.constants.empty()) {
    json constants = json::object();
    for (const Constant& c : k.constants) constants[c.name] = c.value;
    j["constants"] = constants;
  }
  if (k.vjp) j["vjp"] = TextToJson(*k.vjp);
  if (k.jvp) j["jvp"] = TextToJson(*k.jvp);
  if (k.elementwise) j["elementwise"] = true;
  if (!k.parallel.empty()) {
    json parallel = json::array();
    for (const Text& t : k.parallel) parallel.push_back(TextToJson(t));
    j["parallel"] = parallel;
  }
  if (k.kind == KernelKind::kGlobal) {
    json grid = json::array();
    for (const Text& t : k.grid) grid.push_back(TextToJson(t));
    j["grid"] = grid;
    if (k.grid_in_blocks) j["grid_in_blocks"] = true;
    j["block"] = k.block;
    json features = json::array();
    for (const BlockFeature& f : k.block_features)
      features.push_back({{"loc", LocToJson(f.loc)}, {"what", f.what}});
    j["block_features"] = features;
    // Written, never read: a spec cannot assert a guard that its source
    // does not have; the frontend reads it from the kernel's body, for a
    // spec's kernel too (model::DeclaredKernel::guard).
    if (k.guard)
      j["grid_guard"] = {
          {"bound", k.guard->bound},
          {"index", fmt::format("{}int{}", k.guard->index_signed ? "" : "u",
                                k.guard->index_bits)},
          {"loc", LocToJson(k.guard->loc)}};
    if (!k.extern_shared.empty()) {
      json shared = json::array();
      for (const ExternShared& e : k.extern_shared)
        shared.push_back({{"name", e.name},
                          {"namespaces", e.namespaces},
                          {"type", e.type}});
      j["extern_shared"] = shared;
    }
    if (k.shared_bytes) j["shared_bytes"] = TextToJson(*k.shared_bytes);
  }
  return j;
}

// Reads a JSON spec, reporting each structural problem at its place in the
// spec, with its JSON path.
class Reader {
 public:
  Reader(const JsonPlaces& places, diag::DiagnosticEngine& diags)
      : file_(places.file()), places_(places), diags_(diags) {}

  SourceLoc At(const std::string& path) const { return places_.At(path); }

  // Reports diagnostic kId at the value `at`.
  template <diag::Id kId, typename... Args>
  void Fail(const std::string& at, const Args&... args) {
    diags_.Report<kId>(At(at), args...);
  }

  const json* Field(const json& obj, const std::string& path, const char* key,
                    json::value_t type, bool required) {
    auto it = obj.find(key);
    std::string p = fmt::format("{}.{}", path, key);
    if (it == obj.end()) {
      if (required) Fail<Id::kSpecFieldMissing>(path, p);
      return nullptr;
    }
    bool ok =
        it->type() == type || (type == json::value_t::number_integer &&
                               it->type() == json::value_t::number_unsigned);
    if (!ok) {
      Fail<Id::kSpecFieldType>(p, p, TypeName(type), it->type_name());
      return nullptr;
    }
    return &*it;
  }

  bool Flag(const json& obj, const std::string& path, const char* key) {
    const json* j = Field(obj, path, key, json::value_t::boolean, false);
    return j != nullptr && j->get<bool>();
  }

  std::string String(const json& obj, const std::string& path, const char* key,
                     bool required = true) {
    const json* j = Field(obj, path, key, json::value_t::string, required);
    return j ? j->get<std::string>() : std::string();
  }

  // An integer member from `min` to `max`; nullopt when it is missing or
  // wrong (reported).
  std::optional<int64_t> Integer(const json& j, const std::string& path,
                                 int64_t min, int64_t max) {
    if (!j.is_number_integer()) {
      Fail<Id::kSpecExpectedInteger>(path, path);
      return std::nullopt;
    }
    // nlohmann reads every number without a sign as unsigned; one above
    // INT64_MAX is out of every range here.
    const bool out =
        j.is_number_unsigned()
            ? j.get<uint64_t>() > static_cast<uint64_t>(max) ||
                  (min > 0 && j.get<uint64_t>() < static_cast<uint64_t>(min))
            : j.get<int64_t>() < min || j.get<int64_t>() > max;
    if (out) {
      Fail<Id::kSpecIntegerRange>(path, path, j.dump(), min, max);
      return std::nullopt;
    }
    return j.get<int64_t>();
  }

  // The place given by member "loc" ("file:line:col", "file" or ""), whose
  // file must be the spec or a source it names (checked once all kernels
  // are read); without one, where `otherwise` is in the spec.
  SourceLoc Loc(const json& obj, const std::string& path,
                const std::string& otherwise) {
    std::string s = obj.contains("loc")
                        ? String(obj, path, "loc", /*required=*/false)
                        : std::string();
    if (s.empty()) return At(otherwise);
    SourceLoc l{s, 0, 0};
    // The file part may itself contain ':'.
    size_t c2 = s.rfind(':');
    size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos
                                                   : s.rfind(':', c2 - 1);
    if (c1 != std::string::npos) {
      int line = 0, col = 0;
      if (llvm::StringRef(s).substr(c1 + 1, c2 - c1 - 1).getAsInteger(10,
                                                                      line) ||
          llvm::StringRef(s).substr(c2 + 1).getAsInteger(10, col) ||
          line < 1 || col < 1) {
        Fail<Id::kSpecBadLoc>(path + ".loc", path + ".loc", s);
        return At(otherwise);
      }
      l = SourceLoc{s.substr(0, c1), line, col};
    }
    l.file = Resolve(l.file);
    // A place in an origin names it as "origins" does, so that its
    // diagnostics find the quoted lines ("./k.py" is "k.py").
    if (auto it = origins_.find(Normal(l.file)); it != origins_.end())
      l.file = it->second;
    locs_.push_back({l.file, path + ".loc"});
    return l;
  }

  // A Text is {"text": ..., "loc": ...} or, in hand-written specs, a string;
  // without a "loc" it is where its text starts in the spec.
  std::optional<Text> OptText(const json& obj, const std::string& path,
                              const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    std::string p = fmt::format("{}.{}", path, key);
    return ToText(*it, p);
  }

  std::optional<Text> ToText(const json& j, const std::string& p) {
    if (j.is_string()) return Text{j.get<std::string>(), At(p).Shifted(1)};
    if (!j.is_object()) {
      Fail<Id::kSpecTextType>(p, p, j.type_name());
      return std::nullopt;
    }
    Text t;
    t.text = String(j, p, "text");
    t.loc = Loc(j, p, p + ".text").Shifted(j.contains("loc") ? 0 : 1);
    return t;
  }

  std::optional<Param> ReadParam(const json& j, const std::string& path) {
    if (!j.is_object()) {
      Fail<Id::kSpecExpectedObject>(path, path);
      return std::nullopt;
    }
    Param p;
    p.name = String(j, path, "name");
    p.loc = Loc(j, path, path + ".name");
    std::string role = String(j, path, "role");
    if (auto r = RoleFromName(role)) {
      p.role = *r;
    } else if (!role.empty()) {
      Fail<Id::kSpecUnknownRole>(path + ".role", path + ".role", role);
    }
    // A dtype is a name, or a Text where a front end places it in the file
    // it came from; an unknown one is reported at its quote or its "loc".
    const std::string dtype_path = path + ".dtype";
    std::string dtype;
    SourceLoc dtype_at = At(dtype_path);
    if (auto it = j.find("dtype"); it != j.end() && it->is_object()) {
      if (std::optional<Text> t = ToText(*it, dtype_path)) {
        dtype = t->text;
        dtype_at = t->loc;
      }
    } else {
      dtype = String(j, path, "dtype");
    }
    if (auto d = DTypeFromName(dtype)) {
      p.dtype = *d;
    } else if (!dtype.empty()) {
      diags_.Report<Id::kSpecUnknownDtype>(dtype_at, dtype_path, dtype);
    }
    std::string access = String(j, path, "access", /*required=*/false);
    if (access == "view") {
      p.access = Access::kView;
    } else if (!access.empty() && access != "pointer") {
      Fail<Id::kSpecUnknownAccess>(path + ".access", path + ".access", access);
    }
    if (auto it = j.find("rank"); it != j.end()) {
      if (auto r = Integer(*it, path + ".rank", -1, kMaxSpecRank))
        p.rank = static_cast<int>(*r);
    }
    p.shape = OptText(j, path, "shape");
    p.init = OptText(j, path, "init");
    p.derived = OptText(j, path, "derived");
    p.traced = Flag(j, path, "traced");
    p.optional = Flag(j, path, "optional");
    p.sum = OptText(j, path, "sum");
    return p;
  }

  // {"name": "smem", "namespaces": ["ops", ""], "type": "float"}: the
  // generated code declares the array with these, so each name must be an
  // identifier ("" in `namespaces`: an unnamed namespace).
  std::optional<ExternShared> ReadExternShared(const json& j,
                                               const std::string& path) {
    if (!j.is_object()) {
      Fail<Id::kSpecExpectedObject>(path, path);
      return std::nullopt;
    }
    ExternShared e;
    const int errors = diags_.error_count();
    e.name = String(j, path, "name");
    if (!e.name.empty() && !IsIdentifier(e.name))
      Fail<Id::kSpecNotIdentifier>(path + ".name", path + ".name", e.name);
    e.type = String(j, path, "type");
    if (!e.type.empty() && !IsTypeName(e.type))
      Fail<Id::kSpecNotTypeName>(path + ".type", path + ".type", e.type);
    if (const json* ns =
            Field(j, path, "namespaces", json::value_t::array, false)) {
      for (size_t i = 0; i < ns->size(); ++i) {
        const std::string p = fmt::format("{}.namespaces[{}]", path, i);
        if (!(*ns)[i].is_string()) {
          Fail<Id::kSpecExpectedString>(p, p);
          continue;
        }
        e.namespaces.push_back((*ns)[i].get<std::string>());
        if (!e.namespaces.back().empty() && !IsIdentifier(e.namespaces.back()))
          Fail<Id::kSpecNotIdentifier>(p, p, e.namespaces.back());
      }
    }
    if (diags_.error_count() > errors) return std::nullopt;
    return e;
  }

  std::optional<Kernel> ReadKernel(const json& j, const std::string& path) {
    if (!j.is_object()) {
      Fail<Id::kSpecExpectedObject>(path, path);
      return std::nullopt;
    }
    Kernel k;
    k.name = String(j, path, "name");
    k.loc = Loc(j, path, path + ".name");
    if (const json* x = Field(j, path, "ptx", json::value_t::object, false)) {
      const std::string p = path + ".ptx";
      PtxCode code;
      code.loc = Loc(*x, p, p);
      code.file = String(*x, p, "file");
      if (!code.file.empty()) code.file = Resolve(code.file);
      code.entry = String(*x, p, "entry");
      const std::string abi = String(*x, p, "abi", /*required=*/false);
      if (auto a = PtxAbiFromName(abi)) {
        code.abi = *a;
      } else if (!abi.empty()) {
        Fail<Id::kSpecUnknownAbi>(p + ".abi", p + ".abi", abi);
      }
      k.ptx = std::move(code);
    }
    // A relative source is in the spec's directory. A kernel with PTX needs
    // none: the source is then its CPU code.
    k.source = String(j, path, "source", /*required=*/!k.ptx);
    if (!k.source.empty()) k.source = Resolve(k.source);
    // PTX is a __global__ kernel's code: "kind" may go without saying.
    std::string kind = String(j, path, "kind", /*required=*/!k.ptx);
    if (kind == "host") {
      k.kind = KernelKind::kHost;
    } else if (!kind.empty() && kind != "global") {
      Fail<Id::kSpecUnknownKind>(path + ".kind", path + ".kind", kind);
    }
    if (const json* g = Field(j, path, "grid", json::value_t::array, false)) {
      for (size_t i = 0; i < g->size(); ++i)
        if (auto t = ToText((*g)[i], fmt::format("{}.grid[{}]", path, i)))
          k.grid.push_back(*t);
    }
    k.shared_bytes = OptText(j, path, "shared_bytes");
    k.vjp = OptText(j, path, "vjp");
    k.jvp = OptText(j, path, "jvp");
    k.elementwise = Flag(j, path, "elementwise");
    k.grid_in_blocks = Flag(j, path, "grid_in_blocks");
    if (const json* in =
            Field(j, path, "instantiation", json::value_t::object, false)) {
      std::string p = path + ".instantiation";
      Instantiation inst;
      inst.op = String(*in, p, "op");
      inst.loc = Loc(*in, p, p + ".op");
      if (const json* v =
              Field(*in, p, "variant", json::value_t::number_integer, true))
        inst.variant = v->get<int>();
      if (const json* a = Field(*in, p, "args", json::value_t::array, true)) {
        for (size_t i = 0; i < a->size(); ++i) {
          if ((*a)[i].is_string())
            inst.args.push_back((*a)[i].get<std::string>());
          else
          {
            const std::string at = fmt::format("{}.args[{}]", p, i);
            Fail<Id::kSpecFieldType>(at, at, "a string", (*a)[i].type_name());
          }
        }
      }
      k.instantiation = std::move(inst);
    }
    if (const json* c =
            Field(j, path, "constants", json::value_t::object, false)) {
      for (const auto& [name, value] : c->items()) {
        if (!value.is_number_integer()) {
          const std::string at = fmt::format("{}.constants.{}", path, name);
          Fail<Id::kSpecExpectedInteger>(at, at);
          continue;
        }
        k.constants.push_back({name, value.get<int64_t>()});
      }
    }
    if (const json* g =
            Field(j, path, "parallel", json::value_t::array, false)) {
      for (size_t i = 0; i < g->size(); ++i)
        if (auto t = ToText((*g)[i], fmt::format("{}.parallel[{}]", path, i)))
          k.parallel.push_back(*t);
    }
    if (const json* b = Field(j, path, "block", json::value_t::array, false)) {
      for (size_t i = 0; i < b->size(); ++i) {
        // Sema checks the limits of a block; this only keeps the number.
        if (auto v = Integer((*b)[i], fmt::format("{}.block[{}]", path, i),
                             std::numeric_limits<int64_t>::min(),
                             std::numeric_limits<int64_t>::max()))
          k.block.push_back(*v);
      }
    }
    if (const json* f =
            Field(j, path, "block_features", json::value_t::array, false)) {
      for (size_t i = 0; i < f->size(); ++i) {
        std::string p = fmt::format("{}.block_features[{}]", path, i);
        if (!(*f)[i].is_object()) {
          Fail<Id::kSpecExpectedObject>(p, p);
          continue;
        }
        k.block_features.push_back(
            {String((*f)[i], p, "what"), Loc((*f)[i], p, p + ".what")});
      }
    }
    if (const json* e =
            Field(j, path, "extern_shared", json::value_t::array, false)) {
      for (size_t i = 0; i < e->size(); ++i)
        if (auto d = ReadExternShared(
                (*e)[i], fmt::format("{}.extern_shared[{}]", path, i)))
          k.extern_shared.push_back(std::move(*d));
      std::sort(k.extern_shared.begin(), k.extern_shared.end());
      k.extern_shared.erase(
          std::unique(k.extern_shared.begin(), k.extern_shared.end()),
          k.extern_shared.end());
    }
    if (const json* ps = Field(j, path, "params", json::value_t::array, true)) {
      for (size_t i = 0; i < ps->size(); ++i)
        if (auto p = ReadParam((*ps)[i], fmt::format("{}.params[{}]", path, i)))
          k.params.push_back(std::move(*p));
    }
    return k;
  }

  // "origins": {"k.py": {"first_line": 12, "lines": ["...", ...]}}: the
  // lines of the files that the spec was made from, which its "loc"s may
  // name; read before the kernels. Diagnostics there quote these lines: kernelc never reads an
  // origin, so naming one reads nothing that the spec does not hold.
  void ReadOrigins(const json& spec) {
    const json* o = Field(spec, "$", "origins", json::value_t::object, false);
    if (o == nullptr) return;
    for (const auto& [name, value] : o->items()) {
      const std::string p = fmt::format("$.origins.{}", name);
      if (!value.is_object()) {
        Fail<Id::kSpecExpectedObject>(p, p);
        continue;
      }
      diag::Excerpt quoted;
      if (const json* first = Field(value, p, "first_line",
                                    json::value_t::number_integer, true)) {
        if (auto n = Integer(*first, p + ".first_line", 1,
                             std::numeric_limits<int>::max()))
          quoted.first_line = static_cast<int>(*n);
      }
      if (const json* lines =
              Field(value, p, "lines", json::value_t::array, true)) {
        for (size_t i = 0; i < lines->size(); ++i) {
          if ((*lines)[i].is_string()) {
            quoted.lines.push_back((*lines)[i].get<std::string>());
          } else {
            const std::string at = fmt::format("{}.lines[{}]", p, i);
            Fail<Id::kSpecExpectedString>(at, at);
          }
        }
      }
      const std::string file = Resolve(name);
      origins_[Normal(file)] = file;
      if (quoted.first_line > 0) diags_.AddQuotedLines(file, std::move(quoted));
    }
  }

  // Every "loc" names the spec, a source or PTX file that one of `kernels`
  // names, or one of its origins: a spec cannot make a diagnostic quote
  // another file.
  void CheckLocs(const std::vector<Kernel>& kernels) {
    std::set<std::string> own = {Normal(file_)};
    for (const auto& [normal, file] : origins_) own.insert(normal);
    for (const Kernel& k : kernels) {
      if (!k.source.empty()) own.insert(Normal(k.source));
      if (k.ptx) own.insert(Normal(k.ptx->file));
    }
    for (const auto& [loc_file, path] : locs_)
      if (!own.count(Normal(loc_file)))
        Fail<Id::kSpecLocOutside>(path, path, loc_file);
  }

 private:
  static const char* TypeName(json::value_t t) {
    switch (t) {
      case json::value_t::string:
        return "a string";
      case json::value_t::array:
        return "an array";
      case json::value_t::object:
        return "an object";
      case json::value_t::number_integer:
        return "an integer";
      case json::value_t::boolean:
        return "true or false";
      default:
        return "a value";
    }
  }

  // `path` as the spec means it: relative to the spec's directory.
  std::string Resolve(const std::string& path) const {
    llvm::StringRef dir = llvm::sys::path::parent_path(file_);
    if (path.empty() || dir.empty() || llvm::sys::path::is_absolute(path))
      return path;
    llvm::SmallString<256> joined(dir);
    llvm::sys::path::append(joined, path);
    return std::string(joined);
  }

  static std::string Normal(const std::string& path) {
    llvm::SmallString<256> p(path);
    llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
    return std::string(p);
  }

  const std::string& file_;
  const JsonPlaces& places_;
  diag::DiagnosticEngine& diags_;
  // Each "loc" read: its file, and the JSON path of the "loc".
  std::vector<std::pair<std::string, std::string>> locs_;
  // The files of "origins" as the spec names them (joined to its
  // directory), by their Normal() form.
  std::map<std::string, std::string> origins_;
};

}  // namespace

json ToJson(const Module& m) {
  json kernels = json::array();
  for (const Kernel& k : m.kernels) kernels.push_back(KernelToJson(k));
  return json{{"kernels", kernels}, {"sources", m.sources}};
}

std::string ToCanonicalJson(const Module& m) {
  // nlohmann::json objects are std::map-backed: keys come out sorted.
  return ToJson(m).dump(2) + "\n";
}

Result<Module> FromJson(std::string_view text, const std::string& file,
                        diag::DiagnosticEngine& diags, JsonPlaces* places) {
  JsonPositions positions;
  std::variant<json, JsonSyntaxError> parsed = ParseJson(text, &positions);
  if (auto* e = std::get_if<JsonSyntaxError>(&parsed)) {
    auto [line, col] = LineMap(text).At(e->offset);
    diags.Report<Id::kSpecInvalidJson>(SourceLoc{file, line, col}, e->message);
    return Error::Reported();
  }
  JsonPlaces local;
  JsonPlaces& where = places ? *places : local;
  where = JsonPlaces(file, text, std::move(positions));
  const json& j = std::get<json>(parsed);
  int errors_before = diags.error_count();
  Reader r(where, diags);
  Module m;
  if (!j.is_object()) {
    r.Fail<Id::kSpecNotAnObject>("$");
    return Error::Reported();
  }
  // The origins first: the kernels' places in them are named as they are.
  r.ReadOrigins(j);
  if (const json* ks = r.Field(j, "$", "kernels", json::value_t::array, true)) {
    for (size_t i = 0; i < ks->size(); ++i)
      if (auto k = r.ReadKernel((*ks)[i], fmt::format("$.kernels[{}]", i)))
        m.kernels.push_back(std::move(*k));
  }
  r.CheckLocs(m.kernels);
  if (const json* s = r.Field(j, "$", "sources", json::value_t::array, false)) {
    for (const json& e : *s)
      if (e.is_string()) m.sources.push_back(e.get<std::string>());
  }
  if (m.sources.empty()) m.sources.push_back(file);
  if (diags.error_count() > errors_before) return Error::Reported();
  return m;
}

}  // namespace kernelc::model
