// The safetensors reader against hand-crafted byte images: every validation rule has a test
// that breaks exactly that rule and checks the sentence names the file and the problem.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/check.h"
#include "weights/safetensors.h"

namespace laptime {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kSource = "crafted.safetensors";

// A safetensors image from a literal header and a zero-filled data section of `data_size` bytes.
std::vector<std::byte> image(const std::string& header, std::size_t data_size = 0) {
  std::vector<std::byte> out(8 + header.size() + data_size);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((header.size() >> (8 * i)) & 0xff);
  std::memcpy(out.data() + 8, header.data(), header.size());
  return out;
}

// The laptime::Error message `f` throws; fails the test when it throws nothing or something else.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-laptime exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

std::string parse_error(const std::string& header, std::size_t data_size = 0) {
  return error_of([&] { SafeTensors::from_bytes(image(header, data_size), kSource); });
}

template <typename T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());  // the test hosts are little-endian
  return out;
}

// A file under the test temp dir holding `bytes`, removed when the test ends.
class TempFile {
 public:
  TempFile(const std::string& name, const std::vector<std::byte>& bytes)
      : path_(std::filesystem::path(::testing::TempDir()) / name) {
    std::ofstream f(path_, std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

std::vector<std::byte> two_tensor_image() {
  return serialize_safetensors({{"w", DType::F32, {2, 3}, bytes_of<float>({1, 2, 3, 4, 5, 6})},
                                {"b", DType::F32, {3}, bytes_of<float>({-1, 0.5f, 7})}},
                               {{"laptime.format", "1"}, {"gpt2.n_layer", "12"}, {"gpt2.layer_norm_epsilon", "1e-05"}});
}

// --- files -------------------------------------------------------------------------------------

TEST(SafeTensorsFile, OpensAndReadsAValidFile) {
  const TempFile file("valid.safetensors", two_tensor_image());
  const SafeTensors st = SafeTensors::open(file.path());
  EXPECT_EQ(st.source(), file.path());
  EXPECT_THAT(st.to_float(st.get("w", {2, 3})), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(st.meta("laptime.format"), "1");
}

TEST(SafeTensorsFile, MissingFileIsNamed) {
  const std::string path = ::testing::TempDir() + "/no-such.safetensors";
  EXPECT_THAT(error_of([&] { SafeTensors::open(path); }),
              AllOf(HasSubstr("cannot open"), HasSubstr(path), HasSubstr("No such file")));
}

TEST(SafeTensorsFile, DirectoryIsRejected) {
  EXPECT_THAT(error_of([] { SafeTensors::open(::testing::TempDir()); }), HasSubstr("not a regular file"));
}

// The reader itself never blocks on a FIFO (the CLI checks the path first, but the path could
// be swapped between that check and the open): opened without blocking, refused by fstat.
TEST(SafeTensorsFile, AFifoIsRefusedWithoutBlocking) {
  const std::string fifo = ::testing::TempDir() + "laptime_weights_fifo_" + std::to_string(::getpid());
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(error_of([&] { SafeTensors::open(fifo); }),
            fifo + " is not a regular file, so it cannot be a safetensors file");
  ::unlink(fifo.c_str());
}

TEST(SafeTensorsFile, EmptyFileIsTooShort) {
  const TempFile file("empty.safetensors", {});
  EXPECT_THAT(error_of([&] { SafeTensors::open(file.path()); }),
              AllOf(HasSubstr(file.path()), HasSubstr("is 0 bytes long, too short")));
}

TEST(SafeTensorsFile, FileShorterThanTheLengthFieldIsTooShort) {
  const TempFile file("short.safetensors", std::vector<std::byte>(5));
  EXPECT_THAT(error_of([&] { SafeTensors::open(file.path()); }), HasSubstr("is 5 bytes long, too short"));
}

TEST(SafeTensorsFile, TruncatedDataSectionIsCaught) {
  std::vector<std::byte> bytes = two_tensor_image();
  bytes.resize(bytes.size() - 4);
  const TempFile file("truncated.safetensors", bytes);
  EXPECT_THAT(error_of([&] { SafeTensors::open(file.path()); }),
              AllOf(HasSubstr(file.path()), HasSubstr("the file is truncated")));
}

TEST(SafeTensorsFile, TruncatedHeaderIsCaught) {
  std::vector<std::byte> bytes = two_tensor_image();
  bytes.resize(20);
  const TempFile file("truncated-header.safetensors", bytes);
  EXPECT_THAT(error_of([&] { SafeTensors::open(file.path()); }),
              AllOf(HasSubstr("only 12 bytes follow the length field"), HasSubstr("truncated")));
}

TEST(SafeTensorsFile, DataStaysValidAfterMove) {
  const TempFile file("moved.safetensors", two_tensor_image());
  SafeTensors a = SafeTensors::open(file.path());
  const SafeTensors b = std::move(a);
  EXPECT_THAT(b.to_float(b.get("b")), ElementsAre(-1, 0.5f, 7));
}

// --- header length and JSON --------------------------------------------------------------------

TEST(SafeTensorsHeader, LengthOverTheLimitIsRejected) {
  std::vector<std::byte> bytes(16);
  const uint64_t n = SafeTensors::kMaxHeaderBytes + 1;
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>((n >> (8 * i)) & 0xff);
  EXPECT_THAT(error_of([&] { SafeTensors::from_bytes(bytes, kSource); }),
              AllOf(HasSubstr(kSource), HasSubstr("limit")));
}

TEST(SafeTensorsHeader, LengthPastTheEndIsRejected) {
  std::vector<std::byte> bytes = image("{}");
  bytes[0] = std::byte{100};
  EXPECT_THAT(error_of([&] { SafeTensors::from_bytes(bytes, kSource); }),
              HasSubstr("declares a 100-byte header but only 2 bytes follow"));
}

TEST(SafeTensorsHeader, MalformedJsonIsRejected) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32",)"),
              AllOf(HasSubstr("header of crafted.safetensors"), HasSubstr("not valid JSON")));
}

TEST(SafeTensorsHeader, TrailingGarbageIsMalformed) { EXPECT_THAT(parse_error("{} x"), HasSubstr("not valid JSON")); }

// nlohmann stops at a NUL as if the input ended there; the reference reader (serde_json) calls
// anything after the JSON but whitespace "trailing characters", a NUL included.
TEST(SafeTensorsHeader, ANulAfterTheJsonIsRefusedLikeTrailingGarbage) {
  const std::string json = R"({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}})";
  EXPECT_EQ(parse_error(json + std::string("\0xyz", 4), 1),
            "the header of crafted.safetensors is not valid JSON (error at header byte " +
                std::to_string(json.size() + 1) + ")");
  EXPECT_THAT(parse_error(json + std::string(8, '\0'), 1), HasSubstr("not valid JSON"));
  EXPECT_THAT(parse_error(std::string("{\"w\0\": {}}", 10)), HasSubstr("not valid JSON (error at header byte 4)"));
  // The position agrees with nlohmann's own count for other trailing bytes.
  EXPECT_EQ(parse_error("{} x"), parse_error(std::string("{} \0", 4)));
  // Whitespace after the JSON stays valid (the format pads headers with spaces).
  EXPECT_EQ(SafeTensors::from_bytes(image(json + " \t\r\n  ", 1), kSource).tensors().size(), 1u);
}

TEST(SafeTensorsHeader, InvalidUtf8IsNamed) {
  EXPECT_THAT(parse_error("{\"\xff\": {}}"),
              HasSubstr("the header of crafted.safetensors is not valid UTF-8 (error at header "
                        "byte"));
}

TEST(SafeTensorsHeader, NumberOutOfRangeIsMalformed) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32", "shape": [1e400], "data_offsets": [0, 4]}})", 4),
              HasSubstr("not valid JSON (a number is out of range)"));
}

TEST(SafeTensorsHeader, NonObjectHeaderIsRejected) {
  EXPECT_THAT(parse_error("[1, 2]"), HasSubstr("is a JSON array instead of an object"));
}

TEST(SafeTensorsHeader, DuplicateNameIsRejected) {
  const std::string entry = R"({"dtype": "U8", "shape": [1], "data_offsets": [0, 1]})";
  EXPECT_THAT(parse_error(R"({"w": )" + entry + R"(, "w": )" + entry + "}", 1), HasSubstr("names 'w' twice"));
}

// The reference refuses a field given twice in one entry ("duplicate field `dtype`"): which of
// the two would be the tensor's? Metadata keys twice are refused the same way (ours).
TEST(SafeTensorsHeader, AKeyTwiceInOneEntryIsRefused) {
  EXPECT_EQ(parse_error(R"({"w": {"dtype": "U8", "dtype": "F32", "shape": [1], "data_offsets": [0, 1]}})", 1),
            "tensor 'w' in crafted.safetensors names 'dtype' twice");
  EXPECT_EQ(parse_error(R"({"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
                        R"( "b": {"dtype": "U8", "shape": [1], "shape": [1], "data_offsets": [1, 2]}})",
                        2),
            "tensor 'b' in crafted.safetensors names 'shape' twice");
  EXPECT_EQ(parse_error(R"({"__metadata__": {"k": "1", "k": "2"}})"),
            "__metadata__ in crafted.safetensors names 'k' twice");
  // The same key in two entries, or deeper inside a value, is no duplicate.
  const SafeTensors st = SafeTensors::from_bytes(
      image(R"({"__metadata__": {"dtype": "x"}, "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},)"
            R"( "b": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}})",
            2),
      kSource);
  EXPECT_EQ(st.tensors().size(), 2u);
}

TEST(SafeTensorsHeader, EmptyHeaderHasNoTensors) {
  const SafeTensors st = SafeTensors::from_bytes(image("{}  "), kSource);
  EXPECT_TRUE(st.tensors().empty());
  EXPECT_TRUE(st.metadata().empty());
}

// --- tensor entries ----------------------------------------------------------------------------

TEST(SafeTensorsEntry, NonObjectEntryIsRejected) {
  EXPECT_THAT(parse_error(R"({"w": [1, 2]})"),
              AllOf(HasSubstr("tensor 'w' in crafted.safetensors"), HasSubstr("JSON array instead of an object")));
}

class MissingField : public ::testing::TestWithParam<const char*> {};

TEST_P(MissingField, IsNamed) {
  std::string entry = R"({"dtype": "F32", "shape": [1], "data_offsets": [0, 4]})";
  const std::string field = std::string("\"") + GetParam() + "\"";
  entry.replace(entry.find(field), field.size(), "\"other\"");
  EXPECT_THAT(parse_error(R"({"w": )" + entry + "}", 4), HasSubstr(std::string("has no '") + GetParam() + "' field"));
}

INSTANTIATE_TEST_SUITE_P(SafeTensorsEntry, MissingField, ::testing::Values("dtype", "shape", "data_offsets"));

TEST(SafeTensorsEntry, UnknownDtypeIsRejected) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F8_E4M3", "shape": [4], "data_offsets": [0, 4]}})", 4),
              AllOf(HasSubstr("dtype \"F8_E4M3\""), HasSubstr("does not read")));
  EXPECT_THAT(parse_error(R"({"w": {"dtype": 32, "shape": [1], "data_offsets": [0, 4]}})", 4), HasSubstr("dtype 32"));
}

TEST(SafeTensorsEntry, EveryAcceptedDtypeParses) {
  for (const char* name : {"F32", "F16", "BF16", "F64", "I32", "I64", "U8"}) {
    DType t{};
    ASSERT_TRUE(parse_dtype(name, &t));
    const std::string size = std::to_string(dtype_size(t));
    const SafeTensors st = SafeTensors::from_bytes(
        image(std::string(R"({"w": {"dtype": ")") + name + R"(", "shape": [1], "data_offsets": [0, )" + size + "]}}",
              dtype_size(t)),
        kSource);
    EXPECT_EQ(st.get("w").dtype, t) << name;
  }
}

TEST(SafeTensorsEntry, NonIntegerShapeIsRejected) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32", "shape": [1.5], "data_offsets": [0, 4]}})", 4),
              HasSubstr("shape that is not a list of integers"));
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32", "shape": 4, "data_offsets": [0, 16]}})", 16),
              HasSubstr("shape that is not a list of integers"));
}

TEST(SafeTensorsEntry, NegativeDimensionIsRejected) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32", "shape": [2, -3], "data_offsets": [0, 24]}})", 24),
              HasSubstr("negative dimension in shape [2, -3]"));
}

TEST(SafeTensorsEntry, ShapeAndByteRangeMustAgree) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 20]}})", 24),
              HasSubstr("shape [2, 3] of F32 (24 bytes) but data_offsets [0, 20] span 20 bytes"));
}

TEST(SafeTensorsEntry, ShapeWhoseElementCountOverflowsIsRefused) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "U8", "shape": [4294967296, 4294967296], )"
                          R"("data_offsets": [0, 8]}})",
                          8),
              HasSubstr("tensor 'w' in crafted.safetensors has shape [4294967296, 4294967296] "
                        "whose size overflows 64 bits; the file is corrupt"));
  // As in the reference reader, the product is checked dimension by dimension: a 0 after an
  // overflowing prefix does not rescue it (wrapping arithmetic would have computed 0 bytes).
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "U8", "shape": [4294967296, 4294967296, 0], )"
                          R"("data_offsets": [0, 0]}})"),
              HasSubstr("overflows 64 bits"));
  // 2^64 elements wrap to 0 in 64-bit arithmetic: a wrapping reader would accept 0 bytes.
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "U8", "shape": [4294967296, 4294967296], )"
                          R"("data_offsets": [0, 0]}})"),
              HasSubstr("overflows 64 bits"));
}

TEST(SafeTensorsEntry, ShapeWhoseByteSizeOverflowsIsRefused) {
  // 2^62 elements fit in 64 bits; 2^62 x 8 bytes wrap to 0.
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F64", "shape": [4611686018427387904], )"
                          R"("data_offsets": [0, 0]}})"),
              HasSubstr("has shape [4611686018427387904] whose size overflows 64 bits"));
}

TEST(SafeTensorsEntry, NumelRefusesAShapeThatOverflows) {
  TensorInfo t;
  t.name = "hand-made";
  t.shape = {int64_t{1} << 32, int64_t{1} << 32};
  EXPECT_THAT(error_of([&] { t.numel(); }),
              HasSubstr("tensor 'hand-made' has shape [4294967296, 4294967296], whose element "
                        "count is negative or overflows 64 bits"));
  t.shape = {int64_t{1} << 31, int64_t{1} << 32};  // 2^63: past int64
  EXPECT_THAT(error_of([&] { t.numel(); }), HasSubstr("overflows"));
  t.shape = {3, -1};
  EXPECT_THAT(error_of([&] { t.numel(); }), HasSubstr("negative"));
  t.shape = {int64_t{1} << 31, int64_t{1} << 31};
  EXPECT_EQ(t.numel(), int64_t{1} << 62);
}

TEST(SafeTensorsEntry, LongShapesAreCountedNotPrinted) {
  std::string shape = "[2";
  for (int i = 1; i < 1000; ++i) shape += ", 1";
  shape += "]";
  const std::string message =
      parse_error(R"({"w": {"dtype": "U8", "shape": )" + shape + R"(, "data_offsets": [0, 1]}})", 1);
  EXPECT_THAT(message, HasSubstr("has shape [2, 1, 1, 1, 1, 1, 1, 1, ... (1000 dimensions)] of U8 "
                                 "(2 bytes) but data_offsets [0, 1] span 1 bytes"));
  EXPECT_LT(message.size(), 200u);
}

TEST(SafeTensorsEntry, MalformedOffsetsAreRejected) {
  for (const char* offsets : {"[0]", "[0, 4, 8]", "[-4, 0]", "[0, 4.0]", "\"0-4\"", "[0, 18446744073709551615]"}) {
    EXPECT_THAT(
        parse_error(std::string(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": )") + offsets + "}}", 4),
        HasSubstr("instead of two non-negative integers"))
        << offsets;
  }
}

TEST(SafeTensorsEntry, BeginAfterEndIsRejected) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32", "shape": [0], "data_offsets": [8, 4]}})", 8),
              HasSubstr("data_offsets [8, 4] whose begin is after its end"));
}

TEST(SafeTensorsEntry, RangePastTheDataSectionIsRejected) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [4, 20]}})", 16),
              HasSubstr("ends at byte 20 of the data section, which is only 16 bytes long"));
}

TEST(SafeTensorsEntry, OverlappingRangesAreRejected) {
  EXPECT_THAT(parse_error(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]},)"
                          R"( "b": {"dtype": "F32", "shape": [2], "data_offsets": [12, 20]}})",
                          20),
              HasSubstr("tensors 'a' and 'b' in crafted.safetensors overlap in the data section "
                        "(bytes [0, 16) and [12, 20))"));
}

TEST(SafeTensorsEntry, RangeInsideAnEarlierLongerOneOverlaps) {
  EXPECT_THAT(parse_error(R"({"a": {"dtype": "U8", "shape": [16], "data_offsets": [0, 16]},)"
                          R"( "b": {"dtype": "U8", "shape": [2], "data_offsets": [2, 4]},)"
                          R"( "c": {"dtype": "U8", "shape": [2], "data_offsets": [8, 10]}})",
                          16),
              HasSubstr("tensors 'a' and 'b'"));
}

TEST(SafeTensorsEntry, AdjacentAndEmptyRangesAreFine) {
  const SafeTensors st =
      SafeTensors::from_bytes(image(R"({"b": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]},)"
                                    R"( "a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
                                    R"( "e": {"dtype": "F32", "shape": [0, 3], "data_offsets": [4, 4]},)"
                                    R"( "s": {"dtype": "U8", "shape": [], "data_offsets": [8, 9]}})",
                                    9),
                              kSource);
  std::vector<std::string> names;
  for (const TensorInfo& t : st.tensors()) names.push_back(t.name);
  EXPECT_THAT(names, ElementsAre("a", "e", "b", "s"));  // data-offset order
  EXPECT_EQ(st.get("e").numel(), 0);
  EXPECT_EQ(st.get("s").numel(), 1);
}

// --- layout of the data section: tensors tile it exactly, as in the reference reader ------------

TEST(SafeTensorsLayout, AHoleBetweenTensorsIsRefused) {
  EXPECT_THAT(parse_error(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
                          R"( "b": {"dtype": "U8", "shape": [4], "data_offsets": [8, 12]}})",
                          12),
              HasSubstr("bytes [4, 8) of the data section of crafted.safetensors belong to no "
                        "tensor (a hole before 'b'); safetensors files pack tensors without gaps"));
}

TEST(SafeTensorsLayout, AHoleBeforeTheFirstTensorIsRefused) {
  EXPECT_THAT(parse_error(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [4, 8]}})", 8),
              HasSubstr("bytes [0, 4) of the data section of crafted.safetensors belong to no "
                        "tensor (a hole before 'a')"));
}

TEST(SafeTensorsLayout, BytesAfterTheLastTensorAreRefused) {
  EXPECT_THAT(parse_error(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})", 7),
              HasSubstr("crafted.safetensors has 3 bytes after the last tensor's data (the data "
                        "section is 7 bytes, its tensors end at byte 4); the file is corrupt or "
                        "has something appended"));
  EXPECT_THAT(parse_error("{}", 1), HasSubstr("has 1 byte after the last tensor's data"));
}

TEST(SafeTensorsLayout, AppendedBytesOnAValidFileAreRefused) {
  std::vector<std::byte> bytes = two_tensor_image();
  bytes.push_back(std::byte{0});
  const TempFile file("appended.safetensors", bytes);
  EXPECT_THAT(error_of([&] { SafeTensors::open(file.path()); }),
              AllOf(HasSubstr(file.path()), HasSubstr("has 1 byte after the last tensor's data")));
}

TEST(SafeTensorsLayout, AnEmptyTensorInsideAnotherOverlapsIt) {
  // The reference reader requires every tensor, empty ones included, to start where the
  // previous one ends; an empty range inside another tensor is refused there too.
  EXPECT_THAT(parse_error(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
                          R"( "e": {"dtype": "U8", "shape": [0], "data_offsets": [2, 2]}})",
                          4),
              HasSubstr("tensors 'a' and 'e' in crafted.safetensors overlap in the data section "
                        "(bytes [0, 4) and [2, 2))"));
}

TEST(SafeTensorsLayout, TheSameRangeTwiceOverlaps) {
  EXPECT_THAT(parse_error(R"({"a": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},)"
                          R"( "b": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]}})",
                          4),
              HasSubstr("overlap in the data section (bytes [0, 4) and [0, 4))"));
}

// --- hostile headers: nothing recursive, bounded messages --------------------------------------

// `depth` nested arrays around a 1: "[[[1]]]".
std::string nested_arrays(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

TEST(SafeTensorsHostile, DeeplyNestedDtypeIsRefusedWithoutRecursion) {
  // The issue's crash: 100,000 nested arrays in dtype overflowed the stack while the error
  // message printed the value.
  const std::string message =
      parse_error(R"({"w": {"dtype": )" + nested_arrays(100000) + R"(, "shape": [1], "data_offsets": [0, 4]}})", 4);
  EXPECT_EQ(message,
            "the header of crafted.safetensors nests JSON arrays or objects more than 128 deep; "
            "it is corrupt or not a safetensors file");
}

TEST(SafeTensorsHostile, DeeplyNestedOffsetsInAFileAreRefused) {
  const std::string header = R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": )" + nested_arrays(100000) + "}}";
  const TempFile file("nested.safetensors", image(header, 4));  // ~200 KB, as in the issue
  EXPECT_THAT(error_of([&] { SafeTensors::open(file.path()); }),
              AllOf(HasSubstr(file.path()), HasSubstr("more than 128 deep")));
}

TEST(SafeTensorsHostile, DeeplyNestedObjectsAndMetadataAreRefused) {
  std::string objects;
  for (int i = 0; i < 50000; ++i) objects += R"({"a":)";
  objects += "1" + std::string(50000, '}');
  EXPECT_THAT(parse_error(R"({"__metadata__": )" + objects + "}"), HasSubstr("more than 128 deep"));
  EXPECT_THAT(parse_error(nested_arrays(100000)), HasSubstr("more than 128 deep"));
}

TEST(SafeTensorsHostile, NestingUpToTheLimitIsParsedAndExcerpted) {
  // The root object, the entry and 126 arrays: 128 levels, the most a header may have.
  const std::string message =
      parse_error(R"({"w": {"dtype": )" + nested_arrays(126) + R"(, "shape": [1], "data_offsets": [0, 4]}})", 4);
  EXPECT_THAT(message, HasSubstr("tensor 'w' in crafted.safetensors has dtype [[[[[[[["));
  EXPECT_THAT(message, HasSubstr("..., which laptime does not read"));
  EXPECT_LT(message.size(), 250u);
  EXPECT_THAT(
      parse_error(R"({"w": {"dtype": )" + nested_arrays(127) + R"(, "shape": [1], "data_offsets": [0, 4]}})", 4),
      HasSubstr("more than 128 deep"));
}

TEST(SafeTensorsHostile, LongValuesAreExcerpted) {
  const std::string huge(1 << 20, 'x');
  std::string message = parse_error(R"({"w": {"dtype": ")" + huge + R"(", "shape": [1], "data_offsets": [0, 4]}})", 4);
  EXPECT_THAT(message, HasSubstr(R"(has dtype "xxxxxxxx)"));
  EXPECT_LT(message.size(), 250u);

  std::string offsets = "[0";
  for (int i = 0; i < 100000; ++i) offsets += ", 4";
  offsets += "]";
  message = parse_error(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": )" + offsets + "}}", 4);
  EXPECT_THAT(message, AllOf(HasSubstr("has data_offsets [0, 4, 4, 4"), HasSubstr("...")));
  EXPECT_LT(message.size(), 250u);

  message = parse_error(R"({"w": {"dtype": {"k": ["a", {"b": null}], "z": true}, "shape": [1], )"
                        R"("data_offsets": [0, 4]}})",
                        4);
  EXPECT_THAT(message, HasSubstr(R"(has dtype {"k": ["a", {"b": null}], "z": true}, which)"));
}

TEST(SafeTensorsHostile, LongAndControlCharacterNamesAreExcerpted) {
  const std::string name = R"(a\nb\u0007)" + std::string(100000, 'n');  // JSON escapes
  const std::string message =
      parse_error(R"({")" + name + R"(": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 4);
  EXPECT_THAT(message, HasSubstr("tensor 'a\\x0ab\\x07nnnn"));
  EXPECT_THAT(message, HasSubstr("... (100004 bytes)' in crafted.safetensors has shape [2]"));
  EXPECT_EQ(message.find('\n'), std::string::npos);
  EXPECT_LT(message.size(), 250u);
}

TEST(SafeTensorsHostile, NonAsciiIsEscapedInExcerpts) {
  EXPECT_THAT(parse_error(R"({"w": {"dtype": "F\u00e9", "shape": [1], "data_offsets": [0, 4]}})", 4),
              HasSubstr(R"(has dtype "F\u00e9")"));
  EXPECT_THAT(parse_error(R"({"\u00e9": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})", 4),
              HasSubstr(R"(tensor '\xc3\xa9' in)"));
}

// Every file of the fuzzer's seed corpus (tests/fuzz/corpus) through the plain build: "valid-*"
// files load, every other one is refused with a laptime::Error, never anything else.
TEST(SafeTensorsHostile, SeedCorpusLoadsOrIsRefused) {
  const std::filesystem::path dir = std::filesystem::path(LAPTIME_SOURCE_DIR) / "tests/fuzz/corpus";
  int valid = 0, refused = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool expect_valid = name.rfind("valid-", 0) == 0;
    try {
      const SafeTensors st = SafeTensors::open(entry.path().string());
      EXPECT_TRUE(expect_valid) << name << " loaded";
      for (const TensorInfo& t : st.tensors()) EXPECT_GE(t.numel(), 0) << name;
      ++valid;
    } catch (const Error& e) {
      EXPECT_FALSE(expect_valid) << name << ": " << e.what();
      ++refused;
    }
  }
  EXPECT_GE(valid, 3);
  EXPECT_GE(refused, 10);
}

// --- metadata ----------------------------------------------------------------------------------

TEST(SafeTensorsMetadata, MustBeAnObject) {
  EXPECT_THAT(parse_error(R"({"__metadata__": ["a"]})"),
              AllOf(HasSubstr("__metadata__ in crafted.safetensors"), HasSubstr("instead of an object")));
}

TEST(SafeTensorsMetadata, ValuesMustBeStrings) {
  EXPECT_THAT(parse_error(R"({"__metadata__": {"gpt2.n_layer": 12}})"),
              AllOf(HasSubstr("key 'gpt2.n_layer'"), HasSubstr("holds a JSON number"), HasSubstr("must be strings")));
}

TEST(SafeTensorsMetadata, Accessors) {
  const SafeTensors st = SafeTensors::from_bytes(two_tensor_image(), kSource);
  EXPECT_EQ(st.metadata().size(), 3u);
  EXPECT_EQ(st.meta("laptime.format"), "1");
  EXPECT_EQ(st.meta_int("gpt2.n_layer"), 12);
  EXPECT_DOUBLE_EQ(st.meta_double("gpt2.layer_norm_epsilon"), 1e-5);
  EXPECT_DOUBLE_EQ(st.meta_double("gpt2.n_layer"), 12.0);
}

TEST(SafeTensorsMetadata, MissingKeyIsNamed) {
  const SafeTensors st = SafeTensors::from_bytes(two_tensor_image(), kSource);
  EXPECT_THAT(error_of([&] { st.meta("resnet.layers"); }),
              HasSubstr("metadata key 'resnet.layers' is missing from crafted.safetensors"));
  EXPECT_THAT(error_of([&] { st.meta_int("resnet.layers"); }), HasSubstr("is missing"));
}

TEST(SafeTensorsMetadata, UnparsableValuesNameKeyAndValue) {
  const SafeTensors st = SafeTensors::from_bytes(
      serialize_safetensors({}, {{"layers", "3,4,6,3"}, {"eps", "tiny"}, {"n", " 12"}, {"big", "1e999"}}), kSource);
  EXPECT_THAT(error_of([&] { st.meta_int("layers"); }),
              HasSubstr("metadata key 'layers' in crafted.safetensors has value '3,4,6,3', "
                        "which is not an integer"));
  EXPECT_THAT(error_of([&] { st.meta_int("n"); }), HasSubstr("value ' 12'"));
  EXPECT_THAT(error_of([&] { st.meta_double("eps"); }),
              HasSubstr("key 'eps' in crafted.safetensors has value 'tiny', which is not a finite number"));
  EXPECT_THAT(error_of([&] { st.meta_double("big"); }), HasSubstr("value '1e999'"));
}

// --- lookups and conversion --------------------------------------------------------------------

TEST(SafeTensorsLookup, MissingTensor) {
  const SafeTensors st = SafeTensors::from_bytes(two_tensor_image(), kSource);
  EXPECT_EQ(st.find("h.0.ln_1.weight"), nullptr);
  EXPECT_THAT(error_of([&] { st.get("h.0.ln_1.weight"); }),
              HasSubstr("tensor 'h.0.ln_1.weight' is missing from crafted.safetensors"));
}

TEST(SafeTensorsLookup, ShapeMismatchNamesBothShapes) {
  const SafeTensors st = SafeTensors::from_bytes(two_tensor_image(), kSource);
  EXPECT_THAT(error_of([&] {
                st.get("w", {3, 2});
              }),
              HasSubstr("tensor 'w' in crafted.safetensors has shape [2, 3], expected [3, 2]"));
}

TEST(SafeTensorsConvert, F32AndF64) {
  const SafeTensors st =
      SafeTensors::from_bytes(serialize_safetensors({{"f", DType::F32, {3}, bytes_of<float>({1.5f, -0.0f, 3e38f})},
                                                     {"d", DType::F64, {2}, bytes_of<double>({0.1, -1e300})}},
                                                    {}),
                              kSource);
  EXPECT_THAT(st.to_float(st.get("f")), ElementsAre(1.5f, -0.0f, 3e38f));
  const std::vector<float> d = st.to_float(st.get("d"));
  EXPECT_EQ(d[0], 0.1f);
  EXPECT_EQ(d[1], -std::numeric_limits<float>::infinity());
}

// Reads `bits` as a 16-bit dtype through the reader.
std::vector<float> widen(DType dtype, const std::vector<uint16_t>& bits) {
  const SafeTensors st = SafeTensors::from_bytes(
      serialize_safetensors({{"x", dtype, {static_cast<int64_t>(bits.size())}, bytes_of(bits)}}, {}), kSource);
  return st.to_float(st.get("x"));
}

TEST(SafeTensorsConvert, BF16BitPatterns) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v =
      widen(DType::BF16, {0x3f80, 0xc000, 0x3e20, 0x0000, 0x8000, 0x7f80, 0xff80, 0x0001, 0x7f7f, 0x7fc0});
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 0.15625f);
  EXPECT_EQ(v[3], 0.0f);
  EXPECT_TRUE(v[4] == 0.0f && std::signbit(v[4]));
  EXPECT_EQ(v[5], inf);
  EXPECT_EQ(v[6], -inf);
  EXPECT_EQ(v[7], std::ldexp(1.0f, -133));   // smallest bf16 subnormal
  EXPECT_EQ(v[8], std::ldexp(255.0f, 120));  // largest finite bf16: (2 - 2^-7) * 2^127
  EXPECT_TRUE(std::isnan(v[9]));
}

TEST(SafeTensorsConvert, F16BitPatterns) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> v = widen(DType::F16, {0x3c00, 0xc000, 0x3555, 0x7bff, 0x0400, 0x0001, 0x03ff, 0x8001,
                                                  0x8000, 0x7c00, 0xfc00, 0x7e00, 0x2e66});
  EXPECT_EQ(v[0], 1.0f);
  EXPECT_EQ(v[1], -2.0f);
  EXPECT_EQ(v[2], 0.333251953125f);
  EXPECT_EQ(v[3], 65504.0f);                  // largest finite half
  EXPECT_EQ(v[4], std::ldexp(1.0f, -14));     // smallest normal half
  EXPECT_EQ(v[5], std::ldexp(1.0f, -24));     // smallest subnormal half
  EXPECT_EQ(v[6], std::ldexp(1023.0f, -24));  // largest subnormal half
  EXPECT_EQ(v[7], -std::ldexp(1.0f, -24));
  EXPECT_TRUE(v[8] == 0.0f && std::signbit(v[8]));
  EXPECT_EQ(v[9], inf);
  EXPECT_EQ(v[10], -inf);
  EXPECT_TRUE(std::isnan(v[11]));
  EXPECT_EQ(v[12], 0.0999755859375f);  // 0.1 rounded to half
}

TEST(SafeTensorsConvert, IntegerDtypesAreRejected) {
  const SafeTensors st = SafeTensors::from_bytes(
      serialize_safetensors({{"ids", DType::I64, {2}, bytes_of<int64_t>({1, 2})}}, {}), kSource);
  EXPECT_THAT(error_of([&] { st.to_float(st.get("ids")); }),
              AllOf(HasSubstr("tensor 'ids' in crafted.safetensors holds I64 integers"),
                    HasSubstr("F32, F16, BF16 or F64 expected")));
}

// --- serialization -----------------------------------------------------------------------------

TEST(SafeTensorsSerialize, RoundTripKeepsEverything) {
  const std::vector<TensorBlob> blobs = {
      {"u8", DType::U8, {3}, bytes_of<uint8_t>({1, 2, 3})},
      {"half", DType::F16, {1, 2}, bytes_of<uint16_t>({0x3c00, 0xc000})},
      {"wide", DType::F64, {2}, bytes_of<double>({1.0, 2.0})},
      {"ids", DType::I32, {2, 1}, bytes_of<int32_t>({-7, 9})},
      {"bf", DType::BF16, {1}, bytes_of<uint16_t>({0x3f80})},
  };
  const std::map<std::string, std::string> metadata = {{"laptime.model", "gpt2"}, {"note", "ünïcode"}};
  const std::vector<std::byte> bytes = serialize_safetensors(blobs, metadata);

  uint64_t header_size = 0;
  for (int i = 0; i < 8; ++i) header_size |= std::to_integer<uint64_t>(bytes[i]) << (8 * i);
  EXPECT_EQ(header_size % 8, 0u) << "header is padded so the data section starts 8-aligned";
  EXPECT_EQ(std::to_integer<char>(bytes[8]), '{');

  const SafeTensors st = SafeTensors::from_bytes(bytes, kSource);
  EXPECT_EQ(st.metadata(), metadata);
  ASSERT_EQ(st.tensors().size(), blobs.size());
  const std::byte* data = bytes.data() + 8 + header_size;
  for (const TensorBlob& blob : blobs) {
    const TensorInfo& t = st.get(blob.name, blob.shape);
    EXPECT_EQ(t.dtype, blob.dtype) << blob.name;
    ASSERT_EQ(t.nbytes, blob.bytes.size()) << blob.name;
    EXPECT_EQ(std::memcmp(t.data, blob.bytes.data(), t.nbytes), 0) << blob.name;
    EXPECT_EQ(static_cast<std::size_t>(t.data - data) % dtype_size(t.dtype), 0u)
        << blob.name << " is not aligned to its element size";
  }
}

TEST(SafeTensorsSerialize, RejectsInconsistentBlobs) {
  EXPECT_THAT(error_of([] {
                serialize_safetensors({{"w", DType::F32, {2}, std::vector<std::byte>(4)}}, {});
              }),
              AllOf(HasSubstr("tensor 'w'"), HasSubstr("does not match its 4 bytes")));
  EXPECT_THAT(
      error_of([] {
        serialize_safetensors(
            {{"w", DType::U8, {1}, std::vector<std::byte>(1)}, {"w", DType::U8, {1}, std::vector<std::byte>(1)}}, {});
      }),
      HasSubstr("given twice"));
  EXPECT_THAT(error_of([] {
                serialize_safetensors({{"w", DType::U8, {-1}, {}}}, {});
              }),
              HasSubstr("negative dimension"));
}

}  // namespace
}  // namespace laptime
