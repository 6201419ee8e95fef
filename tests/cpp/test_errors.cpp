// Every error code, triggered by a realistic bad input, with a message naming the argument.
#include "helpers.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

using attnlens::AttentionOptions;
using attnlens::ErrorCode;
using attnlens::MaskView;
using testing::require_error;
using testing::view;

TEST_CASE("error codes: one list, names and descriptions", "[errors]") {
  std::set<std::string> names;
  for (std::size_t i = 0; i < attnlens::kErrorCodeCount; ++i) {
    const auto code = static_cast<ErrorCode>(i);
    names.insert(attnlens::error_code_name(code));
    CHECK(std::string(attnlens::error_code_description(code)).size() > 10);
  }
  CHECK(names.size() == attnlens::kErrorCodeCount);
  CHECK(names.count("SHAPE_MISMATCH") == 1);
  CHECK(names.count("INVALID_UTF8") == 1);
}

TEST_CASE("SHAPE_MISMATCH names the argument and the shapes", "[errors]") {
  const std::vector<float> a(4 * 4, 0.5f), b(4 * 5, 0.5f);
  require_error(
      [&] {
        attnlens::attention(view(a, {4, 4}), view(b, {4, 5}), view(a, {4, 4}));
      },
      ErrorCode::SHAPE_MISMATCH, {"k has last dimension 5 but q has 4", "[4, 5]"});
  require_error(
      [&] {
        attnlens::attention(view(a, {4, 4}), view(a, {4, 4}), view(b, {5, 4}));
      },
      ErrorCode::SHAPE_MISMATCH, {"v has 5 rows"});
  require_error([&] { attnlens::attention(view(a, {16}), view(a, {16}), view(a, {16})); },
                ErrorCode::SHAPE_MISMATCH, {"q must have rank"});
  require_error(
      [&] {
        attnlens::attention(view(a, {1, 4, 4}), view(a, {4, 4}), view(a, {4, 4}));
      },
      ErrorCode::SHAPE_MISMATCH, {"same rank"});
  require_error(
      [&] {
        attnlens::attention(view(a, {1, 3, 1, 4}), view(b, {1, 2, 2, 5}), view(b, {1, 2, 2, 5}));
      },
      ErrorCode::SHAPE_MISMATCH, {"k has last dimension"});
  const std::vector<float> q3(3 * 2 * 2), kv2(2 * 2 * 2);
  require_error(
      [&] {
        attnlens::attention(view(q3, {1, 3, 2, 2}), view(kv2, {1, 2, 2, 2}),
                            view(kv2, {1, 2, 2, 2}));
      },
      ErrorCode::SHAPE_MISMATCH, {"q has 3 heads", "multiple"});
  const std::vector<std::uint8_t> m(9, 1);
  AttentionOptions o;
  o.mask = MaskView::boolean(m.data(), {3, 3});
  require_error(
      [&] {
        attnlens::attention(view(a, {4, 4}), view(a, {4, 4}), view(a, {4, 4}), o);
      },
      ErrorCode::SHAPE_MISMATCH, {"mask has shape [3, 3]", "[4, 4]"});
  attnlens::SelfAttentionConfig config;
  config.model_dim = 8;
  config.num_heads = 2;
  const attnlens::SelfAttention layer(config);
  require_error(
      [&] {
        layer.forward(view(a, {4, 4}));
      },
      ErrorCode::SHAPE_MISMATCH, {"x has last dimension 4", "model dimension is 8"});
  attnlens::SelfAttentionWeights w = layer.weights();
  w.wk = attnlens::RowMatrixXf::Zero(8, 4);
  require_error([&] { attnlens::SelfAttention(8, 2, w); }, ErrorCode::SHAPE_MISMATCH,
                {"wk has shape [8, 4]"});
}

TEST_CASE("NON_FINITE names the tensor and the position", "[errors]") {
  std::vector<float> a(2 * 3, 1.0f);
  std::vector<float> bad = a;
  bad[4] = std::numeric_limits<float>::quiet_NaN();
  require_error(
      [&] {
        attnlens::attention(view(bad, {2, 3}), view(a, {2, 3}), view(a, {2, 3}));
      },
      ErrorCode::NON_FINITE, {"q holds nan at flat index 4"});
  bad[4] = std::numeric_limits<float>::infinity();
  require_error(
      [&] {
        attnlens::attention(view(a, {2, 3}), view(a, {2, 3}), view(bad, {2, 3}));
      },
      ErrorCode::NON_FINITE, {"v holds inf"});
  const std::vector<float> mask = {0, std::numeric_limits<float>::quiet_NaN(), 0, 0};
  AttentionOptions o;
  o.mask = MaskView::additive(mask.data(), {2, 2});
  require_error(
      [&] {
        attnlens::attention(view(a, {2, 3}), view(a, {2, 3}), view(a, {2, 3}), o);
      },
      ErrorCode::NON_FINITE, {"mask holds nan"});
  AttentionOptions s;
  s.scale = std::numeric_limits<float>::infinity();
  require_error(
      [&] {
        attnlens::attention(view(a, {2, 3}), view(a, {2, 3}), view(a, {2, 3}), s);
      },
      ErrorCode::NON_FINITE, {"scale"});
  // (Finite inputs whose scores overflow float32 are computed, not reported: test_overflow.cpp.)
}

TEST_CASE("TOO_LARGE: tensors over the limit, long sentences, huge text", "[errors]") {
  const std::vector<float> a(64 * 8, 0.1f);
  AttentionOptions o;
  o.max_elements = 1000;
  require_error(
      [&] {
        attnlens::attention(view(a, {64, 8}), view(a, {64, 8}), view(a, {64, 8}), o);
      },
      ErrorCode::TOO_LARGE, {"score matrix", "4096", "1000"});
  // Work: 64 x 64 scores x (8 + 8 + 32) = 196608 multiply-adds; streaming has no L x S limit,
  // but the work limit holds for it too.
  AttentionOptions w;
  w.streaming = true;
  w.max_work = 196608;
  CHECK(
      attnlens::attention(view(a, {64, 8}), view(a, {64, 8}), view(a, {64, 8}), w).output.numel() ==
      64 * 8);
  w.max_work = 196607;
  require_error(
      [&] {
        attnlens::attention(view(a, {64, 8}), view(a, {64, 8}), view(a, {64, 8}), w);
      },
      ErrorCode::TOO_LARGE, {"196608 multiply-adds", "L 64 x S 64", "maxWork = 196607"});
  // L = S = 65536 with E = 1 once ran for 9 s: now it needs maxWork raised.
  const std::vector<float> one(65536, 0.5f);
  AttentionOptions defaults;
  defaults.streaming = true;
  require_error(
      [&] {
        attnlens::attention(view(one, {65536, 1}), view(one, {65536, 1}), view(one, {65536, 1}),
                            defaults);
      },
      ErrorCode::TOO_LARGE, {"maxWork = 68719476736"});
  w.max_work = 0;
  require_error(
      [&] {
        attnlens::attention(view(a, {64, 8}), view(a, {64, 8}), view(a, {64, 8}), w);
      },
      ErrorCode::BAD_ARGUMENT, {"maxWork must be at least 1"});
  attnlens::ExplainOptions eo;
  eo.max_tokens = 4;
  require_error([&] { attnlens::explain("one two three four five", eo); }, ErrorCode::TOO_LARGE,
                {"5 tokens", "limit of 4"});
  const std::string text(attnlens::kMaxTextBytes + 1, 'a');
  require_error([&] { attnlens::tokenize(text); }, ErrorCode::TOO_LARGE, {"bytes"});
}

TEST_CASE("BAD_ARGUMENT: heads that do not divide the model, options out of range", "[errors]") {
  attnlens::SelfAttentionConfig config;
  config.model_dim = 10;
  config.num_heads = 4;
  require_error([&] { attnlens::SelfAttention{config}; }, ErrorCode::BAD_ARGUMENT,
                {"modelDim 10 is not divisible by numHeads 4"});
  config.num_heads = 0;
  require_error([&] { attnlens::SelfAttention{config}; }, ErrorCode::BAD_ARGUMENT, {"numHeads"});
  attnlens::ExplainOptions eo;
  eo.model_dim = 4096;
  require_error([&] { attnlens::explain("hi", eo); }, ErrorCode::BAD_ARGUMENT, {"modelDim"});
  require_error([] { attnlens::parse_init("kaiming"); }, ErrorCode::BAD_ARGUMENT,
                {"init", "kaiming"});
  require_error([] { attnlens::parse_causal_align("center"); }, ErrorCode::BAD_ARGUMENT,
                {"causalAlign"});
  attnlens::ExplainOptions opts;
  require_error([&] { attnlens::set_explain_option(opts, "numHeads", "four"); },
                ErrorCode::BAD_ARGUMENT, {"numHeads", "four"});
  const attnlens::ConstTensorView null_q{nullptr, {2, 2}};
  const std::vector<float> a(4, 1.0f);
  require_error(
      [&] {
        attnlens::attention(null_q, view(a, {2, 2}), view(a, {2, 2}));
      },
      ErrorCode::BAD_ARGUMENT, {"q has shape [2, 2] but no data"});
}

TEST_CASE("EMPTY_INPUT: no tokens, a zero-length sequence", "[errors]") {
  require_error([] { attnlens::explain("   \n "); }, ErrorCode::EMPTY_INPUT,
                {"sentence has no tokens"});
  const std::vector<float> a(4, 1.0f);
  require_error(
      [&] {
        attnlens::attention(view(a, {0, 4}), view(a, {1, 4}), view(a, {1, 4}));
      },
      ErrorCode::EMPTY_INPUT, {"q has shape [0, 4]"});
  require_error(
      [&] {
        attnlens::attention(view(a, {1, 4}), view(a, {0, 4}), view(a, {0, 4}));
      },
      ErrorCode::EMPTY_INPUT, {"k has shape [0, 4]"});
}

TEST_CASE("INVALID_UTF8 reaches explain()", "[errors]") {
  require_error([] { attnlens::explain("The cat \xC3\x28 sat"); }, ErrorCode::INVALID_UTF8,
                {"offset 9"});
}

TEST_CASE("choice names: one list per enum, parsed and printed the same way", "[errors]") {
  for (std::string_view name : attnlens::kInitNames)
    CHECK(attnlens::init_name(attnlens::parse_init(name)) == name);
  for (std::string_view name : attnlens::kPositionalNames)
    CHECK(attnlens::positional_name(attnlens::parse_positional(name)) == name);
  for (std::string_view name : attnlens::kCausalAlignNames)
    CHECK(attnlens::causal_align_name(attnlens::parse_causal_align(name)) == name);
  CHECK(attnlens::init_name(attnlens::Init::Identity) == "identity");
  require_error([] { attnlens::parse_positional("learned"); }, ErrorCode::BAD_ARGUMENT,
                {"positional must be \"sinusoidal\" or \"none\"; got \"learned\""});
  require_error([] { attnlens::parse_init("he"); }, ErrorCode::BAD_ARGUMENT,
                {"init must be \"normal\", \"xavier\" or \"identity\"; got \"he\""});
}

TEST_CASE("UNKNOWN_OPTION names the option and the known ones", "[errors]") {
  attnlens::ExplainOptions opts;
  require_error([&] { attnlens::set_explain_option(opts, "heads", "4"); },
                ErrorCode::UNKNOWN_OPTION, {"\"heads\"", "numHeads"});
  attnlens::set_explain_option(opts, "numHeads", "8");
  attnlens::set_explain_option(opts, "init", "identity");
  attnlens::set_explain_option(opts, "causal", "false");
  CHECK(opts.num_heads == 8);
  CHECK(opts.init == attnlens::Init::Identity);
  CHECK_FALSE(opts.causal);
}

TEST_CASE("OUT_OF_MEMORY: a raised limit and weights that cannot fit", "[errors]") {
  // 2^20 queries x 2^20 keys of weights is 4 TiB: the allocation fails and is reported.
  const std::int64_t n = std::int64_t{1} << 20;
  const std::vector<float> a(static_cast<std::size_t>(n), 0.0f);
  AttentionOptions o;
  o.max_elements = std::numeric_limits<std::int64_t>::max();
  o.max_work = std::numeric_limits<std::int64_t>::max();
  o.return_weights = true;
  require_error(
      [&] {
        attnlens::attention(view(a, {n, 1}), view(a, {n, 1}), view(a, {n, 1}), o);
      },
      ErrorCode::OUT_OF_MEMORY, {"weights [1048576, 1048576]"});
}

TEST_CASE("the library version matches package.json", "[errors][version]") {
  std::ifstream file(ATTNLENS_PACKAGE_JSON);
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  CHECK_THAT(text.str(),
             Catch::Matchers::Contains(std::string("\"version\": \"") + attnlens::kVersion + "\""));
}
