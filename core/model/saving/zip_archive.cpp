#include "core/model/saving/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/util/error.h"

namespace kb::model {
namespace {

zip_t* as_zip(void* z) { return static_cast<zip_t*>(z); }

std::string zip_error_text(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string text = zip_error_strerror(&e);
  zip_error_fini(&e);
  return text;
}

// An archive of Keras' holds a handful of entries and assets; a bound keeps a listing cheap.
constexpr zip_int64_t kMaxEntries = 100000;
// Deflate shrinks data at most about 1032 times: an entry that claims more is a zip bomb or
// damaged, and is refused before anything is allocated for it.
constexpr uint64_t kMaxCompression = 1100;

// A member's name that would lie outside a folder the archive were unpacked into.
bool escapes(const std::string& name) {
  if (name.empty() || name[0] == '/' || name.find('\\') != std::string::npos) return true;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    if (name.compare(start, end - start, "..") == 0 && end - start == 2) return true;
    start = end + 1;
  }
  return false;
}

}  // namespace

bool is_zip_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  unsigned char head[4] = {0, 0, 0, 0};
  size_t n = std::fread(head, 1, 4, f);
  std::fclose(f);
  return n == 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4;
}

ZipReader::ZipReader(const std::string& path) : path_(path) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  check(z != nullptr, Status::invalid_argument, path, ": not a readable zip archive (",
        zip_error_text(code), ")");
  zip_ = z;
  zip_int64_t n = zip_get_num_entries(z, 0);
  check(n >= 0 && n <= kMaxEntries, Status::invalid_argument, path, ": ", n,
        " entries, more than an archive of a model holds");
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z, zip_uint64_t(i), 0);
    check(name != nullptr, Status::invalid_argument, path, ": entry ", i, " has no name");
    check(!escapes(name), Status::invalid_argument, path, ": entry '", name,
          "' names a path outside the archive");
  }
}

ZipReader::~ZipReader() {
  if (zip_) zip_discard(as_zip(zip_));
}

bool ZipReader::has(const std::string& name) const {
  return zip_name_locate(as_zip(zip_), name.c_str(), 0) >= 0;
}

std::vector<std::string> ZipReader::names() const {
  std::vector<std::string> out;
  zip_int64_t n = zip_get_num_entries(as_zip(zip_), 0);
  for (zip_int64_t i = 0; i < n; ++i)
    if (const char* s = zip_get_name(as_zip(zip_), zip_uint64_t(i), 0)) out.emplace_back(s);
  return out;
}

uint64_t ZipReader::size(const std::string& name) const {
  std::string where = path_ + ":" + name;
  zip_stat_t st;
  zip_stat_init(&st);
  check(zip_stat(as_zip(zip_), name.c_str(), 0, &st) == 0, Status::invalid_argument, path_,
        ": the archive has no ", name);
  check((st.valid & ZIP_STAT_SIZE) != 0, Status::invalid_argument, where, ": no size recorded");
  check((st.valid & ZIP_STAT_COMP_SIZE) != 0 &&
            st.size / kMaxCompression <= std::max<uint64_t>(st.comp_size, 1),
        Status::invalid_argument, where, ": ", st.size, " bytes from ", st.comp_size,
        " compressed, more than compression can give (a zip bomb?)");
  return st.size;
}

std::string ZipReader::read(const std::string& name, uint64_t max_bytes) const {
  std::string where = path_ + ":" + name;
  uint64_t size = this->size(name);
  check(size <= max_bytes, Status::invalid_argument, where, ": ", size, " bytes, more than the ",
        max_bytes, " such an entry may hold");
  zip_file_t* f = zip_fopen(as_zip(zip_), name.c_str(), 0);
  check(f != nullptr, Status::invalid_argument, where, ": cannot be read (",
        zip_strerror(as_zip(zip_)), ")");
  std::string bytes(size_t(size), '\0');
  zip_int64_t got = size ? zip_fread(f, bytes.data(), size) : 0;
  // One byte more than recorded must not come: the entry would be longer than it says.
  char extra;
  zip_int64_t more = got == zip_int64_t(size) ? zip_fread(f, &extra, 1) : 0;
  std::string message = got < 0 ? zip_file_strerror(f) : "";
  zip_fclose(f);
  check(got == zip_int64_t(size) && more == 0, Status::invalid_argument, where, ": damaged (",
        got < 0 ? message : "its length is not the recorded one", ")");
  return bytes;
}

ZipWriter::ZipWriter(const std::string& path) : path_(path) {
  int code = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  check(z != nullptr, Status::io, path, ": cannot be created (", zip_error_text(code), ")");
  zip_ = z;
}

ZipWriter::~ZipWriter() {
  if (zip_) zip_discard(as_zip(zip_));
}

void ZipWriter::add(const std::string& name, std::string bytes) {
  held_.push_back(std::make_unique<std::string>(std::move(bytes)));
  const std::string& b = *held_.back();
  zip_source_t* src = zip_source_buffer(as_zip(zip_), b.data(), b.size(), 0);
  check(src != nullptr, Status::out_of_memory, path_, ": cannot hold ", name);
  zip_int64_t i =
      zip_file_add(as_zip(zip_), name.c_str(), src, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8);
  if (i < 0) {
    zip_source_free(src);
    fail(Status::io, path_, ": cannot add ", name, " (", zip_strerror(as_zip(zip_)), ")");
  }
  check(zip_set_file_compression(as_zip(zip_), zip_uint64_t(i), ZIP_CM_STORE, 0) == 0, Status::io,
        path_, ": cannot store ", name);
}

void ZipWriter::close() {
  zip_t* z = as_zip(zip_);
  if (zip_close(z) != 0) {
    std::string message = zip_strerror(z);
    fail(Status::io, path_, ": cannot be written (", message, ")");
  }
  zip_ = nullptr;
  held_.clear();
}

}  // namespace kb::model
