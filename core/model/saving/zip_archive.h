// A zip file read and written through libzip: Keras 3's `.keras` archive (metadata.json,
// config.json, model.weights.h5). An archive is untrusted input: each entry's size is checked
// against a bound before anything is allocated for it, and every failure is a kb::Error naming
// the file and the entry.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kb::model {

class ZipReader {
 public:
  explicit ZipReader(const std::string& path);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  bool has(const std::string& name) const;
  // The entry's size once inflated, as the archive records it (checked against what its
  // compressed size can give); fails when it is missing.
  uint64_t size(const std::string& name) const;
  // The entry's bytes; fails (invalid_argument) when it is missing or larger than max_bytes.
  std::string read(const std::string& name, uint64_t max_bytes) const;
  std::vector<std::string> names() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* zip_ = nullptr;  // zip_t*
};

// Whether the file starts with a zip entry's signature (PK\3\4).
bool is_zip_file(const std::string& path);

class ZipWriter {
 public:
  explicit ZipWriter(const std::string& path);  // truncates an existing file
  ~ZipWriter();                                 // discards what close() did not write
  ZipWriter(const ZipWriter&) = delete;
  ZipWriter& operator=(const ZipWriter&) = delete;

  // Adds an entry, stored uncompressed as Keras stores its entries.
  void add(const std::string& name, std::string bytes);
  void close();  // writes the archive; fails (io) when it cannot

 private:
  std::string path_;
  void* zip_ = nullptr;
  std::vector<std::unique_ptr<std::string>> held_;  // entries' bytes, until close() writes them
};

}  // namespace kb::model
