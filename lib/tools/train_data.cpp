#include "train_data.hpp"

#include <attnlens/random.hpp>
#include <attnlens/status.hpp>

#include "core/check.hpp"

#include <algorithm>
#include <string>

namespace attnlens::train {
namespace {

// Uniform integer on [lo, hi] (hi - lo small: the modulo bias is below 2^-50).
std::int64_t uniform_int(Rng& rng, std::int64_t lo, std::int64_t hi) {
  return lo + static_cast<std::int64_t>(rng.next_u64() % static_cast<std::uint64_t>(hi - lo + 1));
}

}  // namespace

std::vector<std::string_view> split_documents(std::string_view text) {
  std::vector<std::string_view> documents;
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find("\n\n", begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view doc = text.substr(begin, end - begin);
    while (!doc.empty() && doc.front() == '\n')
      doc.remove_prefix(1);
    while (!doc.empty() && doc.back() == '\n')
      doc.remove_suffix(1);
    if (!doc.empty()) documents.push_back(doc);
    begin = end + 2;
  }
  return documents;
}

std::vector<std::int32_t> token_stream(const BpeTokenizer& tokenizer,
                                       const std::vector<std::string_view>& documents,
                                       std::int32_t end_of_text) {
  std::vector<std::int32_t> stream;
  for (const std::string_view doc : documents) {
    const std::vector<std::int32_t> ids = tokenizer.encode(doc);
    stream.insert(stream.end(), ids.begin(), ids.end());
    stream.push_back(end_of_text);
  }
  return stream;
}

BatchSampler::BatchSampler(const std::vector<std::int32_t>& stream, int batch, int length,
                           std::int32_t vocab_size, std::int32_t end_of_text, std::uint64_t seed,
                           const RepeatMix& mix)
    : stream_(stream),
      batch_(batch),
      length_(length),
      vocab_size_(vocab_size),
      end_of_text_(end_of_text),
      seed_(seed),
      mix_(mix) {
  if (batch < 1 || length < 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "batch and length must be >= 1, not ", batch, " and ",
                 length);
  }
  if (stream.size() < static_cast<std::size_t>(length) + 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "the training stream holds ", stream.size(),
                 " tokens; a window needs ", length + 1);
  }
  if (mix.span_rows < 0 || mix.random_rows < 0 || mix.span_rows + mix.random_rows > batch) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "repeat rows (", mix.span_rows, " span + ",
                 mix.random_rows, " random) must fit into the batch of ", batch);
  }
  if (mix.min_length < 1 || mix.max_length < mix.min_length || 2 * mix.max_length > length + 1) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "repeat lengths [", mix.min_length, ", ", mix.max_length,
                 "] must be >= 1 and fit twice into ", length + 1, " tokens");
  }
  if (vocab_size < 2 || end_of_text < 0 || end_of_text >= vocab_size) {
    detail::fail(ErrorCode::BAD_ARGUMENT, "vocab_size ", vocab_size, " and end_of_text ",
                 end_of_text, " do not fit together");
  }
}

void BatchSampler::fill(std::int64_t step, std::vector<std::int32_t>& out) const {
  const std::int64_t width = length_ + 1;
  out.resize(static_cast<std::size_t>(batch_ * width));
  const std::int64_t last_start = static_cast<std::int64_t>(stream_.size()) - width;
  for (int row = 0; row < batch_; ++row) {
    // One generator per row: rows and steps are independent of each other.
    Rng rng(mix_seed(seed_, static_cast<std::uint64_t>(step) * 4096u + static_cast<unsigned>(row)));
    std::int32_t* w = out.data() + row * width;
    const std::int64_t start = uniform_int(rng, 0, last_start);
    std::copy_n(stream_.begin() + start, width, w);
    if (row >= mix_.span_rows + mix_.random_rows) continue;

    // A repeat of n tokens: first at a, again at b >= a + n (both inside the window).
    const std::int64_t n = uniform_int(rng, mix_.min_length, mix_.max_length);
    const std::int64_t a = uniform_int(rng, 0, width - 2 * n);
    const std::int64_t b = uniform_int(rng, a + n, width - n);
    if (row >= mix_.span_rows) {
      for (std::int64_t i = 0; i < n; ++i) {
        std::int32_t id = static_cast<std::int32_t>(uniform_int(rng, 0, vocab_size_ - 2));
        if (id >= end_of_text_) ++id;  // every id but end_of_text
        w[a + i] = id;
      }
    }
    std::copy_n(w + a, n, w + b);
  }
}

}  // namespace attnlens::train
