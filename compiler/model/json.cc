#include "compiler/model/json.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kernelc::model {

using diag::Id;
using nlohmann::json;

namespace {

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
         {"params", params},
         {"source", k.source}};
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

// Reads a JSON spec, reporting each structural problem with its JSON path.
class Reader {
 public:
  Reader(const std::string& file, diag::DiagnosticEngine& diags)
      : file_(file), diags_(diags) {}

  // Reports diagnostic kId at the spec's file; its first argument is the
  // JSON path of what is wrong.
  template <diag::Id kId, typename... Args>
  void Fail(const Args&... args) {
    diags_.Report<kId>(SourceLoc{file_, 0, 0}, args...);
  }

  const json* Field(const json& obj, const std::string& path, const char* key,
                    json::value_t type, bool required) {
    auto it = obj.find(key);
    std::string p = fmt::format("{}.{}", path, key);
    if (it == obj.end()) {
      if (required) Fail<Id::kSpecFieldMissing>(p);
      return nullptr;
    }
    bool ok =
        it->type() == type || (type == json::value_t::number_integer &&
                               it->type() == json::value_t::number_unsigned);
    if (!ok) {
      Fail<Id::kSpecFieldType>(p, TypeName(type), it->type_name());
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

  SourceLoc Loc(const json& obj, const std::string& path) {
    SourceLoc l;
    if (!obj.contains("loc")) {  // hand-written: point at the spec file
      l.file = file_;
      return l;
    }
    std::string s = String(obj, path, "loc", /*required=*/false);
    if (s.empty()) return l;
    // "file:line:col"; the file part may itself contain ':'.
    size_t c2 = s.rfind(':');
    size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos
                                                   : s.rfind(':', c2 - 1);
    if (c1 != std::string::npos) {
      try {
        l.file = s.substr(0, c1);
        l.line = std::stoi(s.substr(c1 + 1, c2 - c1 - 1));
        l.col = std::stoi(s.substr(c2 + 1));
        return l;
      } catch (const std::exception&) {
      }
    }
    l = SourceLoc{s, 0, 0};
    return l;
  }

  // A Text is {"text": ..., "loc": ...} or, in hand-written specs, a string.
  std::optional<Text> OptText(const json& obj, const std::string& path,
                              const char* key) {
    auto it = obj.find(key);
    if (it == obj.end()) return std::nullopt;
    std::string p = fmt::format("{}.{}", path, key);
    return ToText(*it, p);
  }

  std::optional<Text> ToText(const json& j, const std::string& p) {
    if (j.is_string()) return Text{j.get<std::string>(), SourceLoc{file_}};
    if (!j.is_object()) {
      Fail<Id::kSpecTextType>(p, j.type_name());
      return std::nullopt;
    }
    Text t;
    t.text = String(j, p, "text");
    t.loc = Loc(j, p);
    return t;
  }

  std::optional<Param> ReadParam(const json& j, const std::string& path) {
    if (!j.is_object()) {
      Fail<Id::kSpecExpectedObject>(path);
      return std::nullopt;
    }
    Param p;
    p.name = String(j, path, "name");
    p.loc = Loc(j, path);
    std::string role = String(j, path, "role");
    if (auto r = RoleFromName(role)) {
      p.role = *r;
    } else if (!role.empty()) {
      Fail<Id::kSpecUnknownRole>(path + ".role", role);
    }
    std::string dtype = String(j, path, "dtype");
    if (auto d = DTypeFromName(dtype)) {
      p.dtype = *d;
    } else if (!dtype.empty()) {
      Fail<Id::kSpecUnknownDtype>(path + ".dtype", dtype);
    }
    std::string access = String(j, path, "access", /*required=*/false);
    if (access == "view") {
      p.access = Access::kView;
    } else if (!access.empty() && access != "pointer") {
      Fail<Id::kSpecUnknownAccess>(path + ".access", access);
    }
    if (const json* r =
            Field(j, path, "rank", json::value_t::number_integer, false))
      p.rank = r->get<int>();
    p.shape = OptText(j, path, "shape");
    p.init = OptText(j, path, "init");
    p.derived = OptText(j, path, "derived");
    p.traced = Flag(j, path, "traced");
    p.optional = Flag(j, path, "optional");
    return p;
  }

  // {"name": "smem", "namespaces": ["ops", ""], "type": "float"}: the
  // generated code declares the array with these, so each name must be an
  // identifier ("" in `namespaces`: an unnamed namespace).
  std::optional<ExternShared> ReadExternShared(const json& j,
                                               const std::string& path) {
    if (!j.is_object()) {
      Fail<Id::kSpecExpectedObject>(path);
      return std::nullopt;
    }
    ExternShared e;
    const int errors = diags_.error_count();
    e.name = String(j, path, "name");
    if (!e.name.empty() && !IsIdentifier(e.name))
      Fail<Id::kSpecNotIdentifier>(path + ".name", e.name);
    e.type = String(j, path, "type");
    if (!e.type.empty() && !IsTypeName(e.type))
      Fail<Id::kSpecNotTypeName>(path + ".type", e.type);
    if (const json* ns =
            Field(j, path, "namespaces", json::value_t::array, false)) {
      for (size_t i = 0; i < ns->size(); ++i) {
        const std::string p = fmt::format("{}.namespaces[{}]", path, i);
        if (!(*ns)[i].is_string()) {
          Fail<Id::kSpecExpectedString>(p);
          continue;
        }
        e.namespaces.push_back((*ns)[i].get<std::string>());
        if (!e.namespaces.back().empty() && !IsIdentifier(e.namespaces.back()))
          Fail<Id::kSpecNotIdentifier>(p, e.namespaces.back());
      }
    }
    if (diags_.error_count() > errors) return std::nullopt;
    return e;
  }

  std::optional<Kernel> ReadKernel(const json& j, const std::string& path) {
    if (!j.is_object()) {
      Fail<Id::kSpecExpectedObject>(path);
      return std::nullopt;
    }
    Kernel k;
    k.name = String(j, path, "name");
    k.loc = Loc(j, path);
    k.source = String(j, path, "source", /*required=*/false);
    if (k.source.empty()) k.source = file_;
    std::string kind = String(j, path, "kind");
    if (kind == "host") {
      k.kind = KernelKind::kHost;
    } else if (!kind.empty() && kind != "global") {
      Fail<Id::kSpecUnknownKind>(path + ".kind", kind);
    }
    if (const json* g = Field(j, path, "grid", json::value_t::array, false)) {
      for (size_t i = 0; i < g->size(); ++i)
        if (auto t = ToText((*g)[i], fmt::format("{}.grid[{}]", path, i)))
          k.grid.push_back(*t);
    }
    if (j.contains("shared_bytes"))
      k.shared_bytes = ToText(j["shared_bytes"], path + ".shared_bytes");
    k.vjp = OptText(j, path, "vjp");
    k.jvp = OptText(j, path, "jvp");
    k.elementwise = Flag(j, path, "elementwise");
    k.grid_in_blocks = Flag(j, path, "grid_in_blocks");
    if (const json* in =
            Field(j, path, "instantiation", json::value_t::object, false)) {
      std::string p = path + ".instantiation";
      Instantiation inst;
      inst.op = String(*in, p, "op");
      inst.loc = Loc(*in, p);
      if (const json* v =
              Field(*in, p, "variant", json::value_t::number_integer, true))
        inst.variant = v->get<int>();
      if (const json* a = Field(*in, p, "args", json::value_t::array, true)) {
        for (size_t i = 0; i < a->size(); ++i) {
          if ((*a)[i].is_string())
            inst.args.push_back((*a)[i].get<std::string>());
          else
            Fail<Id::kSpecFieldType>(fmt::format("{}.args[{}]", p, i),
                                     "a string", (*a)[i].type_name());
        }
      }
      k.instantiation = std::move(inst);
    }
    if (const json* c =
            Field(j, path, "constants", json::value_t::object, false)) {
      for (const auto& [name, value] : c->items()) {
        if (!value.is_number_integer()) {
          Fail<Id::kSpecExpectedInteger>(
              fmt::format("{}.constants.{}", path, name));
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
        if (!(*b)[i].is_number_integer()) {
          Fail<Id::kSpecExpectedInteger>(fmt::format("{}.block[{}]", path, i));
          continue;
        }
        k.block.push_back((*b)[i].get<int64_t>());
      }
    }
    if (const json* f =
            Field(j, path, "block_features", json::value_t::array, false)) {
      for (size_t i = 0; i < f->size(); ++i) {
        std::string p = fmt::format("{}.block_features[{}]", path, i);
        if (!(*f)[i].is_object()) {
          Fail<Id::kSpecExpectedObject>(p);
          continue;
        }
        k.block_features.push_back(
            {String((*f)[i], p, "what"), Loc((*f)[i], p)});
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
      default:
        return "a value";
    }
  }

  const std::string& file_;
  diag::DiagnosticEngine& diags_;
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
                        diag::DiagnosticEngine& diags) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Re-parse with exceptions for the position of the syntax error.
    try {
      (void)json::parse(text);
    } catch (const json::parse_error& e) {
      diags.Report<Id::kSpecInvalidJson>(SourceLoc{file, 0, 0}, e.byte,
                                         e.what());
      return Error::Reported();
    }
  }
  int errors_before = diags.error_count();
  Reader r(file, diags);
  Module m;
  if (!j.is_object()) {
    r.Fail<Id::kSpecNotAnObject>();
    return Error::Reported();
  }
  if (const json* ks = r.Field(j, "$", "kernels", json::value_t::array, true)) {
    for (size_t i = 0; i < ks->size(); ++i)
      if (auto k = r.ReadKernel((*ks)[i], fmt::format("$.kernels[{}]", i)))
        m.kernels.push_back(std::move(*k));
  }
  if (const json* s = r.Field(j, "$", "sources", json::value_t::array, false)) {
    for (const json& e : *s)
      if (e.is_string()) m.sources.push_back(e.get<std::string>());
  }
  if (m.sources.empty()) m.sources.push_back(file);
  if (diags.error_count() > errors_before) return Error::Reported();
  return m;
}

}  // namespace kernelc::model
