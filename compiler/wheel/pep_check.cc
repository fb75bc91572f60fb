// pep_check --versions | --requirements: reads one JSON string a line from
// stdin and prints one JSON value a line: with --versions the version's PEP
// 440 normal form, or null when it is not a version; with --requirements
// true or false, whether it is a valid requirement (PEP 508). The Python
// tests hold both to the `packaging` distribution.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "compiler/wheel/pep440.h"
#include "compiler/wheel/pep508.h"

int main(int argc, char** argv) {
  std::string_view mode = argc == 2 ? argv[1] : "";
  if (mode != "--versions" && mode != "--requirements") {
    std::cerr << "usage: pep_check --versions|--requirements < lines\n";
    return 2;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    nlohmann::json in = nlohmann::json::parse(line, nullptr,
                                              /*allow_exceptions=*/false);
    if (!in.is_string()) {
      std::cerr << "pep_check: not a JSON string: " << line << "\n";
      return 2;
    }
    std::string text = in.get<std::string>();
    nlohmann::json out;
    if (mode == "--versions") {
      std::optional<kernelc::wheel::Version> v =
          kernelc::wheel::ParseVersion(text);
      if (v) out = v->Normalized();
    } else {
      out = !kernelc::wheel::CheckRequirement(text).has_value();
    }
    std::cout << out.dump() << "\n";
  }
  return 0;
}
