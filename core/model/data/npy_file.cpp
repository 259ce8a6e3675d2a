#include "core/model/data/npy_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/util/checked_math.h"
#include "core/util/error.h"

namespace kb::model {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
// NumPy writes headers of a few hundred bytes; a larger one is refused before it is read.
constexpr size_t kMaxHeader = 1 << 20;
constexpr size_t kMaxRank = 64;

// An open file descriptor, closed at scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Exactly n bytes at offset, or a truncation error.
void read_at(int fd, void* dst, size_t n, size_t offset, const std::string& path) {
  char* p = static_cast<char*>(dst);
  while (n > 0) {
    ssize_t got = ::pread(fd, p, n, off_t(offset));
    if (got < 0 && errno == EINTR) continue;
    check(got >= 0, Status::io, path, ": cannot be read: ", std::strerror(errno));
    check(got > 0, Status::invalid_argument, path, ": truncated (not a whole .npy file)");
    p += got;
    n -= size_t(got);
    offset += size_t(got);
  }
}

// The header dict NumPy writes, a Python literal: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }. Parsed by hand, for its three keys and their values only.
struct Header {
  std::string descr;
  bool fortran_order = false;
  Dims shape;
};

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  Header parse() {
    Header h;
    bool descr = false, order = false, shape = false;
    expect('{');
    while (!peek('}')) {
      std::string key = quoted();
      expect(':');
      if (key == "descr") {
        h.descr = quoted();
        descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        shape = true;
      } else {
        bad("an unknown key '" + key + "' in its header");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    check(descr && order && shape, Status::invalid_argument, path_,
          ": the header lacks descr, fortran_order or shape");
    return h;
  }

 private:
  [[noreturn]] void bad(const std::string& what) const {
    fail(Status::invalid_argument, path_, ": not a .npy file: ", what);
  }
  void blanks() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  bool peek(char c) {
    blanks();
    return i_ < s_.size() && s_[i_] == c;
  }
  void expect(char c) {
    if (!peek(c))
      bad(std::string("'") + c + "' expected in its header at byte " + std::to_string(i_));
    ++i_;
  }
  std::string quoted() {
    blanks();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"'))
      bad("a string expected in its header");
    char q = s_[i_++];
    size_t end = s_.find(q, i_);
    if (end == std::string::npos) bad("an unterminated string in its header");
    std::string out = s_.substr(i_, end - i_);
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    blanks();
    for (const char* word : {"True", "False"})
      if (s_.compare(i_, std::strlen(word), word) == 0) {
        i_ += std::strlen(word);
        return word[0] == 'T';
      }
    bad("fortran_order is neither True nor False");
  }
  Dims tuple() {
    Dims d;
    expect('(');
    while (!peek(')')) {
      blanks();
      int64_t v = 0;
      size_t digits = 0;
      while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
        v = checked_add(checked_mul(v, 10, path_, ": a dim too large"), s_[i_] - '0', path_,
                        ": a dim too large");
        ++i_;
        ++digits;
      }
      if (digits == 0) bad("a dim of its shape is not a number");
      // Python 2's NumPy wrote long literals (3L).
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;
      d.push_back(v);
      if (d.size() > kMaxRank) bad("a shape of more than 64 dims");
      if (!peek(')')) expect(',');
    }
    expect(')');
    return d;
  }

  const std::string& s_;
  const std::string& path_;
  size_t i_ = 0;
};

// The dtype of a descr ('<f4', '|u1', '>i8'), and whether its bytes need swapping here.
DType dtype_of(const std::string& descr, bool* swap, const std::string& path) {
  check(descr.size() >= 3, Status::invalid_argument, path, ": an unsupported dtype '", descr, "'");
  char order = descr[0];
  std::string kind = descr.substr(1);
  struct Entry {
    const char* kind;
    DType dtype;
  };
  static const Entry kinds[] = {{"f2", DType::f16}, {"f4", DType::f32}, {"f8", DType::f64},
                                {"i1", DType::i8},  {"i2", DType::i16}, {"i4", DType::i32},
                                {"i8", DType::i64}, {"u1", DType::u8},  {"b1", DType::b8}};
  for (const Entry& e : kinds)
    if (kind == e.kind) {
      check(order == '<' || order == '>' || order == '|' || order == '=', Status::invalid_argument,
            path, ": an unsupported byte order in dtype '", descr, "'");
      *swap = order == '>' && dtype_size(e.dtype) > 1;
      return e.dtype;
    }
  fail(Status::invalid_argument, path, ": dtype '", descr,
       "' is not one kbackend has (float16/32/64, int8/16/32/64, uint8, bool)");
}

void swap_bytes(Buffer& b) {
  size_t w = dtype_size(b.dtype);
  char* p = static_cast<char*>(b.data());
  for (size_t i = 0, n = b.nbytes(); i < n; i += w)
    for (size_t k = 0; k < w / 2; ++k) std::swap(p[i + k], p[i + w - 1 - k]);
}

// The C-ordered copy of Fortran-ordered values `from` (dims `d`).
void fortran_to_c(const char* from, Buffer& to) {
  const Dims& d = to.dims;
  size_t w = dtype_size(to.dtype), rank = d.size();
  std::vector<int64_t> index(rank, 0), stride(rank, 1);  // Fortran strides, in elements
  for (size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * d[k - 1];
  char* out = static_cast<char*>(to.data());
  for (int64_t n = 0, total = to.numel(); n < total; ++n) {
    int64_t at = 0;
    for (size_t k = 0; k < rank; ++k) at += index[k] * stride[k];
    std::memcpy(out + size_t(n) * w, from + size_t(at) * w, w);
    for (size_t k = rank; k-- > 0;) {  // the next C-order index
      if (++index[k] < d[k]) break;
      index[k] = 0;
    }
  }
}

std::string descr_of(DType t, const std::string& path) {
  switch (t) {
    case DType::f16:
      return "<f2";
    case DType::f32:
      return "<f4";
    case DType::f64:
      return "<f8";
    case DType::i8:
      return "|i1";
    case DType::i16:
      return "<i2";
    case DType::i32:
      return "<i4";
    case DType::i64:
      return "<i8";
    case DType::u8:
      return "|u1";
    case DType::b8:
      return "|b1";
    default:
      fail(Status::dtype, path, ": NumPy has no type for ", dtype_name(t),
           " (cast it to float32 first)");
  }
}

}  // namespace

std::shared_ptr<Buffer> read_npy(const std::string& path, bool mapped) {
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (f.fd < 0) {
    check(errno != ENOENT, Status::not_found, path, ": no such file");
    fail(Status::io, path, ": cannot be opened: ", std::strerror(errno));
  }
  struct stat st {};
  check(::fstat(f.fd, &st) == 0 && S_ISREG(st.st_mode), Status::io, path, ": not a regular file");
  size_t size = size_t(st.st_size);
  unsigned char lead[12] = {0};
  check(size >= 10, Status::invalid_argument, path, ": not a .npy file (", size, " bytes)");
  read_at(f.fd, lead, std::min<size_t>(size, sizeof lead), 0, path);
  check(std::memcmp(lead, kMagic, kMagicSize) == 0, Status::invalid_argument, path,
        ": not a .npy file (no \\x93NUMPY magic)");
  int major = lead[6];
  check(major >= 1 && major <= 3, Status::invalid_argument, path, ": .npy format version ", major,
        ".", int(lead[7]), " (1.0, 2.0 and 3.0 are read)");
  size_t length_bytes = major == 1 ? 2 : 4, header_length = 0;
  for (size_t k = 0; k < length_bytes; ++k) header_length |= size_t(lead[8 + k]) << (8 * k);
  size_t data_offset = 8 + length_bytes + header_length;
  check(header_length <= kMaxHeader, Status::invalid_argument, path, ": a header of ",
        header_length, " bytes (at most ", kMaxHeader, ")");
  check(data_offset <= size, Status::invalid_argument, path, ": truncated in its header");
  std::string text(header_length, '\0');
  read_at(f.fd, text.data(), header_length, 8 + length_bytes, path);
  Header h = HeaderParser(text, path).parse();
  bool swap = false;
  DType t = dtype_of(h.descr, &swap, path);
  int64_t count = 1;
  for (int64_t d : h.shape) count = checked_mul(count, d, path, ": a shape too large");
  size_t bytes = size_t(checked_mul(count, int64_t(dtype_size(t)), path, ": a shape too large"));
  check(bytes <= size - data_offset, Status::invalid_argument, path, ": truncated (shape ",
        dims_str(h.shape), " of ", h.descr, " needs ", bytes, " bytes of data, the file holds ",
        size - data_offset, ")");
  auto out = std::make_shared<Buffer>(t, h.shape);
  bool reordered = h.fortran_order && h.shape.size() > 1;
  if (mapped) {
    check(!swap && !reordered, Status::invalid_argument, path, ": ",
          swap ? "big-endian" : "Fortran-ordered",
          " data cannot be mapped as it is (read it without mapping)");
    // Kernels read host buffers as 64-byte aligned; NumPy aligns a file's data so.
    check(data_offset % 64 == 0, Status::invalid_argument, path, ": its data (at byte ",
          data_offset,
          ") is not 64-byte aligned, so it cannot be mapped (read it without "
          "mapping)");
    if (bytes == 0) {
      out->allocate();
      return out;
    }
    // The whole file, private: the pages of the rows a batch reads are loaded then, and a write
    // (none is expected of a constant) stays in this process.
    void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, f.fd, 0);
    check(base != MAP_FAILED, Status::io, path, ": cannot be mapped: ", std::strerror(errno));
    std::shared_ptr<void> whole(base, [size](void* p) { ::munmap(p, size); });
    out->storage = std::shared_ptr<void>(whole, static_cast<char*>(base) + data_offset);
    return out;
  }
  if (!reordered) {
    out->allocate();
    read_at(f.fd, out->data(), bytes, data_offset, path);
  } else {
    std::vector<char> raw(bytes);
    read_at(f.fd, raw.data(), bytes, data_offset, path);
    out->allocate();
    fortran_to_c(raw.data(), *out);
  }
  if (swap) swap_bytes(*out);
  return out;
}

void write_npy(const Buffer& value, const std::string& path) {
  std::string shape;  // Python's tuple: (), (5,), (2, 3)
  for (size_t k = 0; k < value.dims.size(); ++k)
    shape += (k ? ", " : "") + std::to_string(value.dims[k]);
  if (value.dims.size() == 1) shape += ",";
  std::string header = "{'descr': '" + descr_of(value.dtype, path) +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  // Padded with spaces to a multiple of 64 bytes with the 10 before it, ending in a newline.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  check(header.size() <= 65535, Status::invalid_argument, path, ": a shape too long for .npy");
  std::FILE* f = std::fopen(path.c_str(), "wb");
  check(f != nullptr, Status::io, path, ": cannot be created: ", std::strerror(errno));
  unsigned char lead[10] = {0x93,
                            'N',
                            'U',
                            'M',
                            'P',
                            'Y',
                            1,
                            0,
                            static_cast<unsigned char>(header.size() & 0xff),
                            static_cast<unsigned char>(header.size() >> 8)};
  bool ok =
      std::fwrite(lead, 1, sizeof lead, f) == sizeof lead &&
      std::fwrite(header.data(), 1, header.size(), f) == header.size() &&
      (value.nbytes() == 0 || std::fwrite(value.data(), 1, value.nbytes(), f) == value.nbytes());
  ok = std::fclose(f) == 0 && ok;
  check(ok, Status::io, path, ": cannot be written");
}

}  // namespace kb::model
