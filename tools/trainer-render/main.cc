// trainer-render entry point: only hands argv to render::Run (render.h documents the tool).
#include <iostream>

#include "tools/trainer-render/render.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return trainer::render::Run(args, std::cout, std::cerr);
}
