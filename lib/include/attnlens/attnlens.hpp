// attnlens — compute and see self-attention. Include this header for the whole public API.
#pragma once

#include <attnlens/ablation.hpp>
#include <attnlens/analysis.hpp>
#include <attnlens/attention.hpp>
#include <attnlens/bert.hpp>
#include <attnlens/bpe.hpp>
#include <attnlens/checkpoint.hpp>
#include <attnlens/explain.hpp>
#include <attnlens/gpt2.hpp>
#include <attnlens/lens.hpp>
#include <attnlens/model.hpp>
#include <attnlens/optim.hpp>
#include <attnlens/options.hpp>
#include <attnlens/random.hpp>
#include <attnlens/safetensors.hpp>
#include <attnlens/self_attention.hpp>
#include <attnlens/status.hpp>
#include <attnlens/tensor.hpp>
#include <attnlens/text.hpp>
#include <attnlens/version.hpp>
#include <attnlens/wordpiece.hpp>
