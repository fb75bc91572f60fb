#include <clang/Basic/Version.h>
#include <fmt/format.h>
#include "compiler/model/model.h"
int main() { fmt::print("clang {}\n", CLANG_VERSION_STRING); return 0; }
