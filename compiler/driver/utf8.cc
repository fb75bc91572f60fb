#include "compiler/driver/utf8.h"

#include <fmt/format.h>
#include <llvm/Support/JSON.h>

#include <nlohmann/json.hpp>

#include "compiler/model/json.h"

namespace kernelc::driver {

namespace {

// `text` for a message: bytes that are not UTF-8 as \xNN escapes.
std::string Printable(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    size_t bad = 0;
    if (llvm::json::isUTF8(llvm::StringRef(text.data(), text.size()), &bad)) {
      out += text;
      break;
    }
    out += text.substr(0, bad);
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[bad]));
    text.remove_prefix(bad + 1);
  }
  return out;
}

}  // namespace

Status RequireUtf8(const std::vector<std::string>& sources,
                   diag::DiagnosticEngine& diags) {
  for (const std::string& s : sources) {
    if (!llvm::json::isUTF8(s)) {
      diags.Report<diag::Id::kFileNameNotUtf8>({}, Printable(s));
      return Error::Reported();
    }
  }
  return Status();
}

Status RequireUtf8(const model::Module& m, diag::DiagnosticEngine& diags) {
  Status s = RequireUtf8(m.sources, diags);
  if (!s.ok()) return s;
  std::vector<const nlohmann::json*> todo;
  nlohmann::json j = model::ToJson(m);
  todo.push_back(&j);
  while (!todo.empty()) {
    const nlohmann::json* v = todo.back();
    todo.pop_back();
    if (v->is_string() &&
        !llvm::json::isUTF8(v->get_ref<const std::string&>())) {
      diags.Report<diag::Id::kTextNotUtf8>(
          {}, Printable(v->get_ref<const std::string&>()));
      return Error::Reported();
    }
    if (v->is_object())
      for (auto it = v->begin(); it != v->end(); ++it) {
        if (!llvm::json::isUTF8(it.key())) {
          diags.Report<diag::Id::kKeyNotUtf8>({}, Printable(it.key()));
          return Error::Reported();
        }
        todo.push_back(&it.value());
      }
    if (v->is_array())
      for (const nlohmann::json& e : *v) todo.push_back(&e);
  }
  return Status();
}

}  // namespace kernelc::driver
