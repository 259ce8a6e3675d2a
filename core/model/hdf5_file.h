// Keras' HDF5 files through libhdf5's C API: groups, string attributes and numeric datasets.
// Every failure is a kb::Error naming the file and the object in it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/graph/buffer.h"
#include "core/graph/shape.h"

namespace kb::model {

// One open HDF5 identifier, closed with the function that fits its kind.
class Hdf5Handle {
 public:
  Hdf5Handle() = default;
  explicit Hdf5Handle(int64_t id) : id_(id) {}
  Hdf5Handle(Hdf5Handle&& o) noexcept : id_(o.id_) { o.id_ = -1; }
  Hdf5Handle& operator=(Hdf5Handle&& o) noexcept;
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;
  ~Hdf5Handle();
  int64_t id() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  int64_t id_ = -1;
};

// A group of an open file (the root group too). Keeps the file open while it lives.
class Hdf5Group {
 public:
  // "<file>" or "<file>:/model_weights/dense_1": where a message says the problem is.
  const std::string& where() const { return where_; }
  bool has(const std::string& name) const;  // a group or dataset of that name (may hold '/')
  bool has_group(const std::string& name) const;
  Hdf5Group group(const std::string& name) const;
  Hdf5Group create_group(const std::string& name) const;  // with its parents ("a/b")
  // The names of the group's members (groups and datasets), in the file's name order.
  std::vector<std::string> members() const;
  bool has_attr(const std::string& name) const;
  // A scalar string attribute, fixed-length or variable-length (Keras 2.2 writes the first,
  // h5py 3 the second).
  std::string string_attr(const std::string& name) const;
  // A list of strings: one 1-D attribute, or Keras' chunks name0, name1, ... for long lists.
  std::vector<std::string> strings_attr(const std::string& name) const;
  void set_string_attr(const std::string& name, const std::string& value) const;
  void set_strings_attr(const std::string& name, const std::vector<std::string>& values) const;
  // A dataset's dims, read without its values (to compare with what a layer expects first).
  Dims dataset_dims(const std::string& name) const;
  // A numeric dataset (float, integer or bool) as a host buffer of the matching dtype. One that
  // declares far more values than the file stores for it fails before anything is allocated.
  std::shared_ptr<Buffer> read_dataset(const std::string& name) const;
  void write_dataset(const std::string& name, const Buffer& value) const;

 private:
  friend class Hdf5File;
  // The dataset `name` (`at` names it in messages), opened.
  Hdf5Handle open_dataset(const std::string& name, const std::string& at) const;
  std::shared_ptr<Hdf5Handle> file_;
  std::shared_ptr<Hdf5Handle> group_;
  std::string where_;
};

class Hdf5File {
 public:
  static Hdf5Group open_read(const std::string& path);
  // A file held in memory (an archive's entry), read-only; `where` names it in messages.
  static Hdf5Group open_image(const std::string& bytes, const std::string& where);
  // A new file in memory, written out by image().
  static Hdf5Group create_image(const std::string& where);
  // The bytes of a file create_image made (everything written so far).
  static std::string image(const Hdf5Group& root);
  // The root group of an open file.
  static Hdf5Group open_root(Hdf5Handle file, const std::string& where);
  static Hdf5Group create(const std::string& path);  // truncates an existing file
};

}  // namespace kb::model
