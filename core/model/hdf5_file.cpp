#include "core/model/hdf5_file.h"

#include <hdf5.h>

#include <algorithm>
#include <cstring>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

// libhdf5 prints its error stack to stderr by default; the library reports through statuses.
void quiet() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

Hdf5Handle checked(hid_t id, const std::string& where, const char* what) {
  check(id >= 0, Status::invalid_argument, where, ": ", what);
  return Hdf5Handle(id);
}

// Where a child of `where` lies: "file:/a" for child "a" of the root ("file").
std::string child_where(const std::string& where, const std::string& name) {
  return where.find(":/") == std::string::npos ? where + ":/" + name : where + "/" + name;
}

struct DatasetType {
  hid_t memory;
  DType dtype;
};

DatasetType memory_type(hid_t file_type, const std::string& where) {
  H5T_class_t cls = H5Tget_class(file_type);
  size_t size = H5Tget_size(file_type);
  if (cls == H5T_FLOAT) {
    // float16 files hold a 2-byte IEEE type: libhdf5 converts it to float32.
    return size == 8 ? DatasetType{H5T_NATIVE_DOUBLE, DType::f64}
                     : DatasetType{H5T_NATIVE_FLOAT, DType::f32};
  }
  if (cls == H5T_INTEGER || cls == H5T_ENUM) {
    bool is_signed = cls == H5T_INTEGER && H5Tget_sign(file_type) == H5T_SGN_2;
    if (size == 8) return {H5T_NATIVE_INT64, DType::i64};
    if (size == 1 && !is_signed) return {H5T_NATIVE_UINT8, DType::u8};
    return {H5T_NATIVE_INT32, DType::i32};
  }
  fail(Status::invalid_argument, where, ": a dataset of a type that is neither numbers nor bool");
}

hid_t file_type_of(DType t) {
  switch (t) {
    case DType::f64:
      return H5T_IEEE_F64LE;
    case DType::f32:
      return H5T_IEEE_F32LE;
    case DType::i64:
      return H5T_STD_I64LE;
    case DType::i32:
      return H5T_STD_I32LE;
    case DType::i16:
      return H5T_STD_I16LE;
    case DType::i8:
      return H5T_STD_I8LE;
    case DType::u8:
    case DType::b8:
      return H5T_STD_U8LE;
    default:
      return -1;
  }
}

hid_t native_type_of(DType t) {
  switch (t) {
    case DType::f64:
      return H5T_NATIVE_DOUBLE;
    case DType::f32:
      return H5T_NATIVE_FLOAT;
    case DType::i64:
      return H5T_NATIVE_INT64;
    case DType::i32:
      return H5T_NATIVE_INT32;
    case DType::i16:
      return H5T_NATIVE_INT16;
    case DType::i8:
      return H5T_NATIVE_INT8;
    default:
      return H5T_NATIVE_UINT8;
  }
}

// The strings of a string attribute (one for a scalar).
std::vector<std::string> read_strings(hid_t loc, const std::string& name,
                                      const std::string& where) {
  std::string at = where + " (attribute " + name + ")";
  Hdf5Handle attr = checked(H5Aopen(loc, name.c_str(), H5P_DEFAULT), at, "cannot be opened");
  Hdf5Handle type = checked(H5Aget_type(attr.id()), at, "has no type");
  Hdf5Handle space = checked(H5Aget_space(attr.id()), at, "has no shape");
  hssize_t n = H5Sget_simple_extent_npoints(space.id());
  check(n >= 0 && n < (int64_t(1) << 24), Status::invalid_argument, at, ": a bad element count");
  if (n == 0) return {};  // h5py writes an empty list as an empty float array
  check(H5Tget_class(type.id()) == H5T_STRING, Status::invalid_argument, at, ": not a string");
  std::vector<std::string> out;
  Hdf5Handle memory = checked(H5Tcopy(H5T_C_S1), at, "no string type");
  if (H5Tis_variable_str(type.id()) > 0) {
    H5Tset_size(memory.id(), H5T_VARIABLE);
    H5Tset_cset(memory.id(), H5Tget_cset(type.id()));
    std::vector<char*> items(static_cast<size_t>(n), nullptr);
    check(H5Aread(attr.id(), memory.id(), items.data()) >= 0, Status::invalid_argument, at,
          ": cannot be read");
    for (char* s : items) out.emplace_back(s ? s : "");
    H5Dvlen_reclaim(memory.id(), space.id(), H5P_DEFAULT, items.data());
    return out;
  }
  size_t size = H5Tget_size(type.id());
  check(size > 0 && size < (size_t(1) << 30), Status::invalid_argument, at, ": a bad string size");
  H5Tset_size(memory.id(), size);
  H5Tset_strpad(memory.id(), H5T_STR_NULLPAD);
  std::vector<char> bytes(checked_mul(size, static_cast<size_t>(n)) + 1, '\0');
  check(H5Aread(attr.id(), memory.id(), bytes.data()) >= 0, Status::invalid_argument, at,
        ": cannot be read");
  for (hssize_t i = 0; i < n; ++i) {
    const char* s = bytes.data() + static_cast<size_t>(i) * size;
    out.emplace_back(s, strnlen(s, size));
  }
  return out;
}

void write_strings(hid_t loc, const std::string& name, const std::vector<std::string>& values,
                   bool scalar, const std::string& where) {
  std::string at = where + " (attribute " + name + ")";
  if (H5Aexists(loc, name.c_str()) > 0) H5Adelete(loc, name.c_str());
  size_t width = 1;
  for (const auto& v : values) width = std::max(width, v.size());
  // Fixed-length, null-padded strings: what h5py writes for the bytes Keras 2.2 stores.
  Hdf5Handle type = checked(H5Tcopy(H5T_C_S1), at, "no string type");
  H5Tset_size(type.id(), width);
  H5Tset_strpad(type.id(), H5T_STR_NULLPAD);
  hsize_t count = values.size();
  Hdf5Handle space = checked(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &count, nullptr),
                             at, "no shape");
  std::vector<char> bytes(checked_mul(width, std::max<size_t>(values.size(), 1)), '\0');
  for (size_t i = 0; i < values.size(); ++i)
    std::memcpy(bytes.data() + i * width, values[i].data(), values[i].size());
  Hdf5Handle attr =
      checked(H5Acreate2(loc, name.c_str(), type.id(), space.id(), H5P_DEFAULT, H5P_DEFAULT), at,
              "cannot be created (an attribute holds at most 64 KiB)");
  check(H5Awrite(attr.id(), type.id(), bytes.data()) >= 0, Status::invalid_argument, at,
        ": cannot be written");
}

}  // namespace

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& o) noexcept {
  std::swap(id_, o.id_);
  return *this;
}

Hdf5Handle::~Hdf5Handle() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE:
      H5Fclose(id_);
      break;
    case H5I_GROUP:
      H5Gclose(id_);
      break;
    case H5I_DATASET:
      H5Dclose(id_);
      break;
    case H5I_ATTR:
      H5Aclose(id_);
      break;
    case H5I_DATATYPE:
      H5Tclose(id_);
      break;
    case H5I_DATASPACE:
      H5Sclose(id_);
      break;
    case H5I_GENPROP_LST:
      H5Pclose(id_);
      break;
    default:
      break;
  }
}

bool Hdf5Group::has(const std::string& name) const {
  quiet();
  // Every link on the path must exist before the next one is asked for.
  size_t pos = 0;
  while (true) {
    size_t slash = name.find('/', pos);
    std::string prefix = name.substr(0, slash);
    if (prefix.empty() || H5Lexists(group_->id(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (slash == std::string::npos) return true;
    pos = slash + 1;
  }
}

bool Hdf5Group::has_group(const std::string& name) const {
  if (!has(name)) return false;
  H5O_info_t info;
  if (H5Oget_info_by_name2(group_->id(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
    return false;
  return info.type == H5O_TYPE_GROUP;
}

std::vector<std::string> Hdf5Group::members() const {
  quiet();
  H5G_info_t info;
  check(H5Gget_info(group_->id(), &info) >= 0, Status::invalid_argument, where_,
        ": its members cannot be listed");
  std::vector<std::string> out;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t n = H5Lget_name_by_idx(group_->id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0,
                                   H5P_DEFAULT);
    check(n >= 0 && n < 4096, Status::invalid_argument, where_, ": member ", i,
          " has no readable name");
    std::string name(size_t(n) + 1, '\0');
    H5Lget_name_by_idx(group_->id(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size(),
                       H5P_DEFAULT);
    name.resize(size_t(n));
    out.push_back(std::move(name));
  }
  return out;
}

Hdf5Group Hdf5Group::group(const std::string& name) const {
  quiet();
  std::string at = child_where(where_, name);
  check(has_group(name), Status::invalid_argument, at, ": no such group");
  Hdf5Group g;
  g.file_ = file_;
  g.group_ = std::make_shared<Hdf5Handle>(
      checked(H5Gopen2(group_->id(), name.c_str(), H5P_DEFAULT), at, "cannot be opened"));
  g.where_ = at;
  return g;
}

Hdf5Group Hdf5Group::create_group(const std::string& name) const {
  quiet();
  std::string at = child_where(where_, name);
  if (has_group(name)) return group(name);
  Hdf5Handle links = checked(H5Pcreate(H5P_LINK_CREATE), at, "no property list");
  H5Pset_create_intermediate_group(links.id(), 1);
  Hdf5Group g;
  g.file_ = file_;
  g.group_ = std::make_shared<Hdf5Handle>(
      checked(H5Gcreate2(group_->id(), name.c_str(), links.id(), H5P_DEFAULT, H5P_DEFAULT), at,
              "cannot be created"));
  g.where_ = at;
  return g;
}

bool Hdf5Group::has_attr(const std::string& name) const {
  quiet();
  return H5Aexists(group_->id(), name.c_str()) > 0;
}

std::string Hdf5Group::string_attr(const std::string& name) const {
  quiet();
  check(has_attr(name), Status::invalid_argument, where_, ": no attribute ", name);
  auto strings = read_strings(group_->id(), name, where_);
  check(strings.size() == 1, Status::invalid_argument, where_, " (attribute ", name,
        "): not one string");
  return strings[0];
}

std::vector<std::string> Hdf5Group::strings_attr(const std::string& name) const {
  quiet();
  if (has_attr(name)) return read_strings(group_->id(), name, where_);
  std::vector<std::string> out;
  for (int chunk = 0; has_attr(name + std::to_string(chunk)); ++chunk)
    for (auto& s : read_strings(group_->id(), name + std::to_string(chunk), where_))
      out.push_back(std::move(s));
  check(!out.empty() || has_attr(name + "0"), Status::invalid_argument, where_, ": no attribute ",
        name);
  return out;
}

void Hdf5Group::set_string_attr(const std::string& name, const std::string& value) const {
  quiet();
  write_strings(group_->id(), name, {value}, true, where_);
}

void Hdf5Group::set_strings_attr(const std::string& name,
                                 const std::vector<std::string>& values) const {
  quiet();
  write_strings(group_->id(), name, values, false, where_);
}

std::shared_ptr<Buffer> Hdf5Group::read_dataset(const std::string& name) const {
  quiet();
  std::string at = child_where(where_, name);
  check(has(name), Status::invalid_argument, at, ": no such dataset");
  Hdf5Handle set =
      checked(H5Dopen2(group_->id(), name.c_str(), H5P_DEFAULT), at, "is not a dataset");
  Hdf5Handle type = checked(H5Dget_type(set.id()), at, "has no type");
  DatasetType t = memory_type(type.id(), at);
  Hdf5Handle space = checked(H5Dget_space(set.id()), at, "has no shape");
  int rank = H5Sget_simple_extent_ndims(space.id());
  check(rank >= 0 && rank <= 32, Status::invalid_argument, at, ": a bad rank");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.id(), dims.data(), nullptr);
  Dims shape;
  int64_t count = 1;
  for (hsize_t d : dims) {
    check(d < (hsize_t(1) << 40), Status::invalid_argument, at, ": a dim too large");
    shape.push_back(static_cast<int64_t>(d));
    count = checked_mul(count, static_cast<int64_t>(d));
  }
  check(checked_mul(count, static_cast<int64_t>(dtype_size(t.dtype))) < (int64_t(1) << 36),
        Status::invalid_argument, at, ": larger than 64 GiB");
  auto buf = Buffer::make(t.dtype, shape);
  if (count > 0)
    check(H5Dread(set.id(), t.memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf->data()) >= 0,
          Status::invalid_argument, at, ": cannot be read (damaged?)");
  return buf;
}

void Hdf5Group::write_dataset(const std::string& name, const Buffer& value) const {
  quiet();
  std::string at = child_where(where_, name);
  check(value.device == Device::cpu, Status::internal, at, ": a value not in host memory");
  hid_t file_type = file_type_of(value.dtype);
  check(file_type >= 0, Status::dtype, at, ": ", dtype_name(value.dtype),
        " values are written as float32 first");
  std::vector<hsize_t> dims(value.dims.begin(), value.dims.end());
  Hdf5Handle space = checked(
      value.dims.empty() ? H5Screate(H5S_SCALAR)
                         : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
      at, "no shape");
  Hdf5Handle links = checked(H5Pcreate(H5P_LINK_CREATE), at, "no property list");
  H5Pset_create_intermediate_group(links.id(), 1);
  Hdf5Handle set = checked(H5Dcreate2(group_->id(), name.c_str(), file_type, space.id(), links.id(),
                                      H5P_DEFAULT, H5P_DEFAULT),
                           at, "cannot be created");
  if (value.numel() > 0)
    check(H5Dwrite(set.id(), native_type_of(value.dtype), H5S_ALL, H5S_ALL, H5P_DEFAULT,
                   value.data()) >= 0,
          Status::invalid_argument, at, ": cannot be written");
}

Hdf5Group Hdf5File::open_read(const std::string& path) {
  quiet();
  check(H5Fis_hdf5(path.c_str()) > 0, Status::invalid_argument, path,
        ": not an HDF5 file (or it cannot be read)");
  Hdf5Group g;
  g.file_ = std::make_shared<Hdf5Handle>(
      checked(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "cannot be opened"));
  g.group_ = std::make_shared<Hdf5Handle>(
      checked(H5Gopen2(g.file_->id(), "/", H5P_DEFAULT), path, "has no root group"));
  g.where_ = path;
  return g;
}

namespace {
// A file access list for a file in memory (HDF5's core driver), with no file behind it.
Hdf5Handle memory_access(const std::string& where) {
  Hdf5Handle fapl = checked(H5Pcreate(H5P_FILE_ACCESS), where, "no file access list");
  check(H5Pset_fapl_core(fapl.id(), 1 << 20, 0) >= 0, Status::internal, where,
        ": HDF5's memory driver");
  return fapl;
}
}  // namespace

Hdf5Group Hdf5File::open_image(const std::string& bytes, const std::string& where) {
  quiet();
  check(bytes.size() >= 8 && std::memcmp(bytes.data(), "\x89HDF\r\n\x1a\n", 8) == 0,
        Status::invalid_argument, where, ": not an HDF5 file");
  Hdf5Handle fapl = memory_access(where);
  // HDF5 copies the image: the bytes need not outlive the file.
  check(H5Pset_file_image(fapl.id(), const_cast<char*>(bytes.data()), bytes.size()) >= 0,
        Status::out_of_memory, where, ": cannot hold the file in memory");
  Hdf5Handle file =
      checked(H5Fopen(where.c_str(), H5F_ACC_RDONLY, fapl.id()), where, "not a readable HDF5 file");
  return open_root(std::move(file), where);
}

Hdf5Group Hdf5File::create_image(const std::string& where) {
  quiet();
  Hdf5Handle fapl = memory_access(where);
  Hdf5Handle file = checked(H5Fcreate(where.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id()), where,
                            "cannot be made in memory");
  return open_root(std::move(file), where);
}

std::string Hdf5File::image(const Hdf5Group& root) {
  hid_t f = root.file_->id();
  check(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0, Status::io, root.where_, ": cannot be flushed");
  ssize_t n = H5Fget_file_image(f, nullptr, 0);
  check(n > 0, Status::io, root.where_, ": has no image");
  std::string bytes(size_t(n), '\0');
  check(H5Fget_file_image(f, bytes.data(), bytes.size()) == n, Status::io, root.where_,
        ": its image cannot be read");
  return bytes;
}

Hdf5Group Hdf5File::open_root(Hdf5Handle file, const std::string& where) {
  Hdf5Group g;
  g.file_ = std::make_shared<Hdf5Handle>(std::move(file));
  g.group_ = std::make_shared<Hdf5Handle>(
      checked(H5Gopen2(g.file_->id(), "/", H5P_DEFAULT), where, "has no root group"));
  g.where_ = where;
  return g;
}

Hdf5Group Hdf5File::create(const std::string& path) {
  quiet();
  Hdf5Group g;
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  check(file >= 0, Status::io, path,
        ": cannot be created (its folder is missing, or it is not writable)");
  g.file_ = std::make_shared<Hdf5Handle>(file);
  g.group_ = std::make_shared<Hdf5Handle>(
      checked(H5Gopen2(g.file_->id(), "/", H5P_DEFAULT), path, "has no root group"));
  g.where_ = path;
  return g;
}

}  // namespace kb::model
