#pragma once
// Byte Latent Transformer (facebookresearch/blt @9774ed4fcc78313f9f218295f3d7e4decdadf2ae) trains
// with Lingua's trainer, but its TrainArgs is its own pydantic model (extra="forbid"):
//   - bytelatent/args.py:297-336 TrainArgs (max_steps, entropy_model, train_entropy_model,
//     eval_on_gpus besides Lingua's fields);
//   - bytelatent/args.py:125-151 DataloaderArgs;
//   - bytelatent/base_transformer.py:44-68 BaseTransformerArgs, bytelatent/transformer.py:55-61
//     LMTransformerArgs (the entropy model).
// Written out by hand from those lines. Sections whose classes are BLT's own and not listed here
// (distributed, optim, checkpoint, ...) are not followed: their keys are BLT's to judge.

#include <yaml-cpp/yaml.h>

#include "import/config_keys.h"

namespace planck::import {

inline const ConfigClasses& blt_classes() {
  static const ConfigClasses k = {
      {"TrainArgs",
       {{"name", ""}, {"dump_dir", ""}, {"seed", ""}, {"debug_dynamo", ""}, {"grad_acc_steps", ""},
        {"gc_collect_freq", ""}, {"probe_freq", ""}, {"steps", ""}, {"max_steps", ""}, {"data", "DataloaderArgs"},
        {"optim", ""}, {"model", ""}, {"entropy_model", "LMTransformerArgs"}, {"train_entropy_model", ""},
        {"distributed", ""}, {"env", ""}, {"checkpoint", ""}, {"profiling", ""}, {"logging", ""},
        {"async_eval_gpus", ""}, {"eval", ""}, {"eval_on_gpus", ""}}},
      {"DataloaderArgs",
       {{"s3_profile", ""}, {"root_dir", ""}, {"sources", ""}, {"batch_size", ""}, {"seq_len", ""}, {"seed", ""},
        {"add_bos", ""}, {"add_eos", ""}, {"load_async", ""}, {"async_persist_type", ""}, {"prefetch_size", ""},
        {"preprocess_dir", ""}, {"dataset_files", ""}, {"entropy_model_name", ""}, {"arrow_batch_size", ""},
        {"buffer_size", ""}, {"file_format", ""}, {"pad_to_max_length", ""}, {"max_encoder_seq_length", ""},
        {"enable_byte_ngrams", ""}, {"add_patches", ""}, {"tokenizer_args", ""}, {"patcher_args", ""}}},
      {"LMTransformerArgs",
       {{"dim", ""}, {"n_layers", ""}, {"head_dim", ""}, {"n_heads", ""}, {"n_kv_heads", ""},
        {"ffn_dim_multiplier", ""}, {"multiple_of", ""}, {"norm_eps", ""}, {"rope_theta", ""},
        {"rope_use_fp32_in_outer_product", ""}, {"init_base_std", ""}, {"init_std_factor", ""}, {"max_seqlen", ""},
        {"attn_impl", ""}, {"attn_bias_type", ""}, {"eos_id", ""}, {"seed", ""}, {"vocab_size", ""},
        {"weight_tying", ""}, {"sliding_window", ""}}},
  };
  return k;
}

// A BLT config: it sets a TrainArgs field only BLT has, or the data's patcher.
inline bool is_blt_config(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  for (const char* key : {"train_entropy_model", "entropy_model", "eval_on_gpus", "max_steps"}) {
    if (root[key].IsDefined()) return true;
  }
  const YAML::Node data = root["data"];
  return data.IsDefined() && data.IsMap() && (data["patcher_args"].IsDefined() || data["tokenizer_args"].IsDefined());
}

}  // namespace planck::import
