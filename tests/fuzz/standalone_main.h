// A fuzzer's main() without libFuzzer: runs each file given (or each file of each folder given)
// once through LLVMFuzzerTestOneInput, as ctest does with the committed corpora. Included at the
// end of a fuzzer's source.
#pragma once
#ifndef KB_LIBFUZZER
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static int run_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    return 1;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  return 0;
}

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int runs = 0, failures = 0;
  for (int a = 1; a < argc; ++a) {
    struct stat st {};
    if (stat(argv[a], &st) != 0) {
      std::fprintf(stderr, "cannot read %s\n", argv[a]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      failures += run_file(argv[a]);
      ++runs;
      continue;
    }
    DIR* d = opendir(argv[a]);
    while (dirent* e = d ? readdir(d) : nullptr) {
      if (e->d_name[0] == '.') continue;
      failures += run_file(std::string(argv[a]) + "/" + e->d_name);
      ++runs;
    }
    if (d) closedir(d);
  }
  std::printf("ran %d inputs\n", runs);
  return failures ? 1 : 0;
}
#endif
