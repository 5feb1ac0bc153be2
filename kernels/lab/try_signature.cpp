// The learner's-file convention (kernels/lab/try_signature.h): one table of signatures, and the
// text and checks made from it.
#include "kernels/lab/try_signature.h"

#include <sstream>

namespace laptime::lab {
namespace {

TryParam out(const std::string& name, const std::string& meaning, const std::string& type = "scalar_t*") {
  return {type, name, meaning, ParamKind::Pointer};
}
TryParam in(const std::string& name, const std::string& meaning, const std::string& type = "const scalar_t*") {
  return {type, name, meaning, ParamKind::Pointer};
}
TryParam i32(const std::string& name, const std::string& meaning) { return {"int", name, meaning, ParamKind::Int32}; }
TryParam i64(const std::string& name, const std::string& meaning) {
  return {"long long", name, meaning, ParamKind::Int64};
}
TryParam f32(const std::string& name, const std::string& meaning) {
  return {"float", name, meaning, ParamKind::Float32};
}

std::vector<TrySignature> make_signatures() {
  const std::string eps = "added to the variance before the square root (1e-5, GPT-2's)";
  return {
      {"layernorm",
       {out("out", "[rows, C]: y = (x - mean) / sqrt(var + eps) * weight + bias, row by row"),
        in("in", "[rows, C]: x, one row a token"), in("weight", "[C]: the gain"), in("bias", "[C]: the bias"),
        i32("rows", "the rows (B * T tokens)"), i32("C", "the row's width (768 in GPT-2 small)"), f32("eps", eps)},
       ""},
      {"bias_gelu",
       {out("out", "[rows, C]: gelu(x + bias[c]), GPT-2's tanh form 0.5 u (1 + tanh(sqrt(2/pi) (u + 0.044715 u^3)))"),
        in("in", "[rows, C]: x"), in("bias", "[C]"), i32("rows", "the rows"), i32("C", "the row's width")},
       "out never aliases in"},
      {"attention",
       {out("out", "[B, T, C], C = H * hd: head h's output in columns h*hd .. h*hd + hd - 1"),
        in("qkv", "[B, T, 3C]: q | k | v of each token, each [H, hd] (the QKV projection's output)"),
        i32("B", "the batch"), i32("T", "the tokens of a sequence"), i32("H", "the heads"),
        i32("hd", "the head size (a multiple of 8)")},
       "causal: query i attends to keys 0..i; the scores are scaled by 1/sqrt(hd)"},
      {"embedding",
       {out("out", "[B, T, C]: wte[tokens[b, t]] + wpe[t]"),
        in("tokens", "[B, T]: token ids, each in [0, vocab)", "const int*"), in("wte", "[vocab, C]: token embeddings"),
        in("wpe", "[T or more, C]: position embeddings"), i32("B", "the batch"), i32("T", "the tokens of a sequence"),
        i32("C", "the embedding width")},
       ""},
      {"residual",
       {out("out", "[n]: x + r"), in("x", "[n]"), in("r", "[n]"), i64("n", "the elements (rows * C)")},
       "out never aliases x or r in the lab (the model's stream may)"},
      {"residual_layernorm",
       {out("x_out", "[rows, C]: x + r, the residual stream"),
        out("y", "[rows, C]: layernorm(x + r), the next layer's input"), in("x", "[rows, C]"), in("r", "[rows, C]"),
        in("weight", "[C]: the gain"), in("bias", "[C]: the bias"), i32("rows", "the rows"),
        i32("C", "the row's width"), f32("eps", eps)},
       ""},
      {"quantize",
       {out("out", "[n]: e4m3(x * *inv_scale), rounded to nearest even, saturated to +-448", "__nv_fp8_e4m3*"),
        in("inv_scale", "one float on the device: the inverse of the tensor's scale", "const float*"),
        in("in", "[n]: x, bf16", "const __nv_bfloat16*"), i64("n", "the elements")},
       ""},
      {"amax",
       {out("amax", "one float on the device: *amax = max(*amax, max |x|); a NaN in x wins", "float*"),
        in("in", "[n]: x, bf16", "const __nv_bfloat16*"), i64("n", "the elements")},
       "*amax is 0 before each call (the caller zeroes it)"},
      {"maxpool",
       {out("out", "[N, Ho, Wo, C], Ho = (H - 1) / 2 + 1, Wo = (W - 1) / 2 + 1: the 3 x 3 max, stride 2, padding 1"),
        in("in", "[N, H, W, C] (NHWC)"), i32("N", "the images"), i32("H", "the height"), i32("W", "the width"),
        i32("C", "the channels")},
       "a padded position never wins: a window's max is over the pixels inside the image"},
      {"avgpool",
       {out("out", "[N, C]: the mean over H x W of each image's channel"), in("in", "[N, H, W, C] (NHWC)"),
        i32("N", "the images"), i32("H", "the height"), i32("W", "the width"), i32("C", "the channels")},
       ""},
      {"conv_epilogue",
       {out("y", "[rows, C], in place: y = act(y + bias[c] (+ residual)), act ReLU when relu is 1"),
        in("bias", "[C]: the folded BatchNorm's bias"),
        in("residual", "[rows, C], or a null pointer when the convolution adds none"),
        i64("rows", "the pixels (N * H * W)"), i32("C", "the channels"), i32("relu", "1: ReLU after the add, 0: none")},
       ""},
      {"stem",
       {out("out",
            "[N, Po, Po, C], Po = (Hs - 4) / 2 + 1: max pool 3 x 3/2 of ReLU(conv + bias), each conv value "
            "rounded to bf16 after the ReLU"),
        in("in", "[N, Hs, Hs, 16]: the image's 2 x 2 space-to-depth transform"),
        in("weight", "[C, 4, 4, 16]: the 4 x 4 convolution (BatchNorm folded)"), in("bias", "[C]"),
        i32("N", "the images"), i32("Hs", "the transform's side (115 at 224 x 224)"), i32("C", "output channels")},
       "the conv output (Hs - 3 a side) never reaches memory in production; a window is clipped to it"},
  };
}

}  // namespace

std::vector<TryParam> TrySignature::launch_params() const {
  std::vector<TryParam> p;
  for (const TryParam& x : params)
    if (x.kind == ParamKind::Int32 || x.kind == ParamKind::Int64) p.push_back(x);
  p.push_back(i32("sms", "the GPU's streaming multiprocessors (for a grid sized to the GPU)"));
  return p;
}

namespace {
std::string param_list(const std::vector<TryParam>& ps, bool names) {
  std::string s;
  for (const TryParam& p : ps) {
    s += (s.empty() ? "" : ", ") + p.type;
    if (names) s += " " + p.name;
  }
  return s;
}
}  // namespace

std::string TrySignature::kernel_declaration() const {
  return "extern \"C\" __global__ void " + kernel + "(" + param_list(params, true) + ")";
}

std::string TrySignature::launch_declaration() const {
  return "__device__ LaunchShape " + launch_name() + "(" + param_list(launch_params(), true) + ")";
}

const std::vector<TrySignature>& try_signatures() {
  static const std::vector<TrySignature> all = make_signatures();
  return all;
}

const TrySignature* find_try_signature(const std::string& kernel) {
  for (const TrySignature& s : try_signatures())
    if (s.kernel == kernel) return &s;
  return nullptr;
}

const char* launch_shape_entry() { return "laptime_launch_shape"; }

std::string precision_macro(const std::string& precision) {
  return precision == "fp32" ? "LAPTIME_FP32" : "LAPTIME_BF16";
}

const char* param_kind_name(ParamKind k) {
  switch (k) {
    case ParamKind::Pointer:
      return "a pointer";
    case ParamKind::Int32:
      return "an int";
    case ParamKind::Int64:
      return "a long long";
    case ParamKind::Float32:
      return "a float";
  }
  return "?";
}

std::string signature_footer(const TrySignature& s) {
  // A string literal of the C text: the declarations hold quotes (extern "C").
  const auto literal = [](const std::string& text) {
    std::string out = "\"";
    for (char c : text) out += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    return out + "\"";
  };
  std::ostringstream f;
  f << "\n#line 1 \"laptime-lab-signature\"\n"
    << "template <class A, class B> struct laptime_same_type { static constexpr bool value = false; };\n"
    << "template <class A> struct laptime_same_type<A, A> { static constexpr bool value = true; };\n"
    << "static_assert(laptime_same_type<decltype(" << s.kernel << "), void(" << param_list(s.params, false)
    << ")>::value,\n              " << literal("the lab calls " + s.kernel_declaration() + ": declare it so") << ");\n"
    << "static_assert(laptime_same_type<decltype(" << s.launch_name() << "), LaunchShape("
    << param_list(s.launch_params(), false) << ")>::value,\n              "
    << literal("the lab calls " + s.launch_declaration() + ": declare it so") << ");\n"
    << "static_assert(sizeof(LaunchShape) == 7 * sizeof(unsigned) && laptime_same_type<decltype(LaunchShape::grid), "
       "dim3>::value &&\n"
       "                  laptime_same_type<decltype(LaunchShape::block), dim3>::value &&\n"
       "                  laptime_same_type<decltype(LaunchShape::shared_bytes), unsigned>::value,\n"
       "              \"LaunchShape is { dim3 grid; dim3 block; unsigned shared_bytes; }, as the template defines "
       "it\");\n"
    << "extern \"C\" __global__ void " << launch_shape_entry() << "(LaunchShape* laptime_shape";
  for (const TryParam& p : s.launch_params()) f << ", " << p.type << " " << p.name;
  f << ") {\n  *laptime_shape = " << s.launch_name() << "(";
  bool first = true;
  for (const TryParam& p : s.launch_params()) f << (first ? "" : ", ") << p.name, first = false;
  f << ");\n}\n";
  return f.str();
}

namespace {

// The parameter kinds of `.entry NAME(...)` in `ptx`: 'p' for a 64-bit word (a pointer or a
// long long: PTX does not tell them apart), 'i' for 32-bit integer, 'f' for a float, '?' for
// anything else; nullopt-like "!" when there is no such entry.
std::string entry_kinds(const std::string& ptx, const std::string& name) {
  const std::string head = ".entry " + name + "(";
  const size_t at = ptx.find(head);
  if (at == std::string::npos) return "!";
  const size_t end = ptx.find(')', at);
  std::istringstream params(ptx.substr(at + head.size(), end == std::string::npos ? 0 : end - at - head.size()));
  std::string kinds, word;
  bool in_param = false;
  while (params >> word) {
    if (word == ".param") {
      in_param = true;
      continue;
    }
    if (!in_param || word == ".align" || word == ".ptr" || word == ".global" || word[0] != '.') {
      if (word == ".align") params >> word;  // its number
      continue;
    }
    const std::string t = word;
    kinds += t == ".u64" || t == ".s64" || t == ".b64"   ? 'p'
             : t == ".u32" || t == ".s32" || t == ".b32" ? 'i'
             : t == ".f32"                               ? 'f'
                                                         : '?';
    in_param = false;
  }
  return kinds;
}

char expected_kind(ParamKind k) { return k == ParamKind::Int32 ? 'i' : k == ParamKind::Float32 ? 'f' : 'p'; }

// The names of the entries in `ptx`, for a message.
std::vector<std::string> entry_names(const std::string& ptx) {
  std::vector<std::string> names;
  for (size_t at = ptx.find(".entry "); at != std::string::npos; at = ptx.find(".entry ", at + 1)) {
    const size_t start = at + 7, paren = ptx.find('(', start);
    if (paren != std::string::npos) names.push_back(ptx.substr(start, paren - start));
  }
  return names;
}

}  // namespace

std::string check_ptx_entries(const std::string& ptx, const TrySignature& s, const std::string& file) {
  std::string want;
  for (const TryParam& p : s.params) want += expected_kind(p.kind);
  const std::string got = entry_kinds(ptx, s.kernel);
  if (got == "!") {
    std::string mangled;
    for (const std::string& n : entry_names(ptx))
      if (n != launch_shape_entry() && n.find(s.kernel) != std::string::npos) mangled = n;
    if (!mangled.empty())
      return file + " compiles " + s.kernel + " under its C++ name " + mangled +
             ", which the lab cannot look up: declare it extern \"C\" __global__ (`laptime lab " + s.kernel +
             " --template`).";
    return file + " has no kernel named " + s.kernel + ": the lab calls " + s.kernel_declaration() + " (`laptime lab " +
           s.kernel + " --template`).";
  }
  if (got != want)
    return file + "'s kernel " + s.kernel + " takes " + std::to_string(got.size()) +
           " parameters of other kinds than the lab passes: " + s.kernel_declaration() + ".";
  if (entry_kinds(ptx, launch_shape_entry()) == "!")
    return file + " has no launch-shape kernel: internal, the lab's own footer did not compile.";
  return "";
}

}  // namespace laptime::lab
