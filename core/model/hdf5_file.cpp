#include "core/model/hdf5_file.h"

#include <hdf5.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

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

// Variable-length strings (h5py's str attributes: tf.keras' model_config) live in the file's
// global heap. libhdf5 1.10 follows a damaged reference there, or a damaged object size, without
// checking it (a crash, or a loop), so the library reads them itself: H5Aread gives it the raw
// references (through a conversion to an opaque type of their size, which copies them as they
// are), and each collection's signature, size and objects are checked against the file before
// a string is taken from it.
const char kHeapReferenceTag[] = "kbackend: a variable-length string's heap reference";

herr_t copy_heap_references(hid_t src, hid_t dst, H5T_cdata_t* cdata, size_t, size_t, size_t, void*,
                            void*, hid_t) {
  if (cdata->command != H5T_CONV_INIT) return 0;  // the references stay as they are
  if (H5Tis_variable_str(src) <= 0 || H5Tget_class(dst) != H5T_OPAQUE ||
      H5Tget_size(src) != H5Tget_size(dst))
    return -1;  // not ours: libhdf5 looks further
  char* tag = H5Tget_tag(dst);
  bool ours = tag != nullptr && std::strcmp(tag, kHeapReferenceTag) == 0;
  H5free_memory(tag);
  if (!ours) return -1;
  cdata->need_bkg = H5T_BKG_NO;
  return 0;
}

void register_heap_reference_copy() {
  static const bool registered = [] {
    Hdf5Handle vlen(H5Tcopy(H5T_C_S1)), opaque(H5Tcreate(H5T_OPAQUE, 1));
    H5Tset_size(vlen.id(), H5T_VARIABLE);
    return H5Tregister(H5T_PERS_SOFT, "kbackend_heap_references", vlen.id(), opaque.id(),
                       copy_heap_references) >= 0;
  }();
  check(registered, Status::internal, "libhdf5 refused a conversion of heap references");
}

uint64_t little_endian(const unsigned char* p, size_t n) {
  uint64_t v = 0;
  for (size_t i = n; i > 0; --i) v = (v << 8) | p[i - 1];
  return v;
}

// The open file under `loc` as libhdf5 reads it (a descriptor on disk, an image in memory):
// bytes at a file address, checked to lie within it.
class RawFile {
 public:
  RawFile(hid_t loc, const std::string& where) : where_(where) {
    file_ = Hdf5Handle(H5Iget_file_id(loc));
    check(file_.valid(), Status::invalid_argument, where, ": no file");
    Hdf5Handle fcpl(H5Fget_create_plist(file_.id())), fapl(H5Fget_access_plist(file_.id()));
    hsize_t userblock = 0;
    check(fcpl.valid() && fapl.valid() &&
              H5Pget_sizes(fcpl.id(), &address_size_, &length_size_) >= 0 &&
              H5Pget_userblock(fcpl.id(), &userblock) >= 0 &&
              H5Fget_filesize(file_.id(), &size_) >= 0,
          Status::invalid_argument, where, ": the file's layout cannot be read");
    check(address_size_ >= 2 && address_size_ <= 8 && length_size_ >= 2 && length_size_ <= 8,
          Status::invalid_argument, where, ": the file's addresses have a bad size");
    base_ = userblock;
    hid_t driver = H5Pget_driver(fapl.id());
    void* handle = nullptr;
    check(H5Fget_vfd_handle(file_.id(), H5P_DEFAULT, &handle) >= 0 && handle != nullptr,
          Status::invalid_argument, where, ": the file cannot be read directly");
    if (driver == H5FD_SEC2)
      fd_ = *static_cast<int*>(handle);
    else if (driver == H5FD_CORE)
      image_ = *static_cast<const unsigned char**>(handle);
    else
      fail(Status::not_implemented, where, ": variable-length strings in a file of this driver");
  }
  size_t address_size() const { return address_size_; }
  size_t length_size() const { return length_size_; }

  // `n` bytes at file address `address`.
  std::string read(uint64_t address, uint64_t n) const {
    // (A file that opened holds what its superblock says it does: libhdf5 refuses a truncated
    // one, so the size is the image's or the file's on disk.)
    check(address <= size_ && base_ <= size_ - address && n <= size_ - base_ - address,
          Status::invalid_argument, where_, ": a reference past the end of the file");
    uint64_t at = base_ + address;
    std::string out(size_t(n), '\0');
    if (image_ != nullptr) {
      std::memcpy(out.data(), image_ + at, size_t(n));
      return out;
    }
    check(pread(fd_, out.data(), size_t(n), off_t(at)) == ssize_t(n), Status::invalid_argument,
          where_, ": cannot be read at a heap reference");
    return out;
  }

 private:
  std::string where_;
  Hdf5Handle file_;
  size_t address_size_ = 8, length_size_ = 8;
  hsize_t size_ = 0, base_ = 0;
  int fd_ = -1;
  const unsigned char* image_ = nullptr;
};

// Object `index` of the global heap collection at `address`, of `length` bytes: the collection
// ("GCOL", version 1, its size) and each object's header checked to lie within it.
std::string heap_object(const RawFile& file, uint64_t address, uint32_t index, uint32_t length,
                        std::map<uint64_t, std::string>& collections, const std::string& at) {
  const size_t ls = file.length_size(), header = 8 + ls;
  auto it = collections.find(address);
  if (it == collections.end()) {
    std::string head = file.read(address, header);
    const auto* h = reinterpret_cast<const unsigned char*>(head.data());
    check(std::memcmp(h, "GCOL", 4) == 0 && h[4] == 1, Status::invalid_argument, at,
          ": a string's heap reference is damaged");
    uint64_t size = little_endian(h + 8, ls);
    check(size >= header && size <= (uint64_t(1) << 30), Status::invalid_argument, at,
          ": a heap collection of a bad size");
    it = collections.emplace(address, file.read(address, size)).first;
  }
  const std::string& c = it->second;
  const auto* p = reinterpret_cast<const unsigned char*>(c.data());
  uint64_t offset = header;
  while (offset + header <= c.size()) {
    uint32_t id = uint32_t(little_endian(p + offset, 2));
    uint64_t size = little_endian(p + offset + 8, ls);
    if (id == 0) break;  // the free space: no object after it
    uint64_t data = offset + header;
    check(size <= c.size() - data, Status::invalid_argument, at,
          ": a heap object past its collection");
    if (id == index) {
      check(length <= size, Status::invalid_argument, at, ": a string longer than its heap object");
      return c.substr(size_t(data), length);
    }
    offset = data + ((size + 7) / 8) * 8;
  }
  fail(Status::invalid_argument, at, ": a string's heap object is missing");
}

std::vector<std::string> read_variable_strings(hid_t attr, hssize_t n, hid_t loc,
                                               const std::string& at) {
  register_heap_reference_copy();
  RawFile file(loc, at);
  // A reference: the string's length (4 bytes), its collection's address, its index (4 bytes).
  const size_t width = 4 + file.address_size() + 4;
  Hdf5Handle raw(H5Tcreate(H5T_OPAQUE, width));
  check(raw.valid() && H5Tset_tag(raw.id(), kHeapReferenceTag) >= 0, Status::internal, at,
        ": no type for heap references");
  std::vector<unsigned char> refs(width * size_t(n));
  check(H5Aread(attr, raw.id(), refs.data()) >= 0, Status::invalid_argument, at,
        ": cannot be read");
  std::map<uint64_t, std::string> collections;
  std::vector<std::string> out;
  for (hssize_t i = 0; i < n; ++i) {
    const unsigned char* r = refs.data() + size_t(i) * width;
    uint32_t length = uint32_t(little_endian(r, 4));
    uint64_t address = little_endian(r + 4, file.address_size());
    uint32_t index = uint32_t(little_endian(r + 4 + file.address_size(), 4));
    out.push_back(length == 0 ? std::string()
                              : heap_object(file, address, index, length, collections, at));
  }
  return out;
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
  if (H5Tis_variable_str(type.id()) > 0) return read_variable_strings(attr.id(), n, loc, at);
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

namespace {

// A dataset's dims, each bounded; `at` names it.
Dims extent_of(hid_t space, const std::string& at) {
  int rank = H5Sget_simple_extent_ndims(space);
  check(rank >= 0 && rank <= 32, Status::invalid_argument, at, ": a bad rank");
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  Dims shape;
  for (hsize_t d : dims) {
    check(d < (hsize_t(1) << 40), Status::invalid_argument, at, ": a dim too large");
    shape.push_back(static_cast<int64_t>(d));
  }
  return shape;
}

// Deflate, the strongest filter h5py offers Keras, shrinks data at most about 1032 times: a
// dataset that declares more than that over what the file stores for it is damaged or hostile.
constexpr uint64_t kMaxCompression = 1100;

}  // namespace

Hdf5Handle Hdf5Group::open_dataset(const std::string& name, const std::string& at) const {
  quiet();
  check(has(name), Status::invalid_argument, at, ": no such dataset");
  return checked(H5Dopen2(group_->id(), name.c_str(), H5P_DEFAULT), at, "is not a dataset");
}

Dims Hdf5Group::dataset_dims(const std::string& name) const {
  std::string at = child_where(where_, name);
  Hdf5Handle set = open_dataset(name, at);
  Hdf5Handle space = checked(H5Dget_space(set.id()), at, "has no shape");
  return extent_of(space.id(), at);
}

std::shared_ptr<Buffer> Hdf5Group::read_dataset(const std::string& name) const {
  std::string at = child_where(where_, name);
  Hdf5Handle set = open_dataset(name, at);
  Hdf5Handle type = checked(H5Dget_type(set.id()), at, "has no type");
  DatasetType t = memory_type(type.id(), at);
  Hdf5Handle space = checked(H5Dget_space(set.id()), at, "has no shape");
  Dims shape = extent_of(space.id(), at);
  int64_t count = 1;
  for (int64_t d : shape) count = checked_mul(count, d);
  uint64_t bytes = uint64_t(checked_mul(count, static_cast<int64_t>(dtype_size(t.dtype))));
  check(bytes < (uint64_t(1) << 36), Status::invalid_argument, at, ": larger than 64 GiB");
  // What the file holds for it bounds what is allocated: a declared shape alone is not trusted.
  uint64_t stored = H5Dget_storage_size(set.id());
  check(count == 0 || (stored > 0 && bytes / kMaxCompression <= stored), Status::invalid_argument,
        at, ": declares ", bytes, " bytes of values, but the file holds ", stored, " for it");
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
