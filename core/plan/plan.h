#pragma once
// The plan (docs/plan-format.md) as typed C++ values. Loading and schema checking: plan_load.h.
// Values are stored as written; derived facts (the -1 mesh size, the inferred data-parallel
// strategy, role groups) come from mesh.h and roles.h so there is one place for each rule.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/plan/json_doc.h"

namespace planck::core {

// The largest world a plan may describe: 2^31 - 1 ranks (a larger mesh is mesh-invalid-dim).
inline constexpr std::int64_t kMaxWorld = 2147483647;

enum class DataParallel { kNone, kDdp, kFsdp, kZero1, kZero2, kZero3, kHsdp };
enum class PipelineSchedule { kGpipe, k1F1B, kInterleaved1F1B, kZbv, kInterleavedZb, kDualPipeV };
enum class GradSync { kEveryMicrobatch, kLastMicrobatch, kLastMicrobatchReplicate };
// selective = torchtitan's op-level selective AC; selective_attention = Megatron's selective
// recompute of the attention core (Korthikanti et al. 2022 §4.2); full = every layer re-runs.
enum class Checkpointing { kNone, kSelective, kSelectiveAttention, kFull };
// flash: the fused kernel keeps no s x s scores; standard: scores, softmax and dropout
// materialised (Korthikanti et al. 2022 Table 2's 5as/h term).
enum class Attention { kFlash, kStandard };
enum class DType { kFp32, kBf16, kFp16, kFp8 };
// FP8 training of the transformer layers' linear GEMMs (Transformer Engine, torchao Float8):
// weights, activations and gradients stay in param_dtype; each linear casts its input and its
// output gradient to FP8 and multiplies at the FP8 rate. The recipe is the scaling granularity:
// tensorwise (per-tensor delayed or current scaling: TE DelayedScaling / Float8CurrentScaling,
// torchao "tensorwise"), rowwise (torchao), blockwise (1x128 / 128x128 blocks: DeepSeek-V3, TE
// Float8BlockScaling), mxfp8 (Blackwell MX blocks of 32).
enum class Fp8Recipe { kNone, kTensorwise, kRowwise, kBlockwise, kMxfp8 };
// The software stack that runs the step (docs/simulator.md "Software stack"): what it fuses.
// megatron: Megatron-LM / Megatron-Core / NeMo / Megatron-Bridge (fused norms, RoPE, SwiGLU,
// bias-dropout-add, cross entropy; Transformer Engine), as planck priced every plan before the
// field existed; torchtitan_compile and olmo_compile: torch.compile (Inductor fuses the
// memory-bound ops); torchtitan_eager, fsdp1 (Composer, HF Accelerate), fsdp2 (eager FSDP2:
// NeMo AutoModel, HF), deepspeed, megatron_deepspeed, nanotron: eager PyTorch ops.
enum class Stack { kMegatron, kTorchtitanEager, kTorchtitanCompile, kFsdp1, kFsdp2, kDeepspeed, kMegatronDeepspeed, kNanotron };
// The fused attention kernel (training.attention flash): fa2 (FlashAttention-2, and PyTorch SDPA's
// flash backend, which is FA2), fa1 (FlashAttention-1 and the FA1-era Triton kernel MPT's
// attn_impl "triton" runs), fa3 (FlashAttention-3, Hopper), cudnn (cuDNN fused attention).
enum class AttentionKernel { kFa2, kFa1, kFa3, kCudnn, kSdpa };
// How the loss is computed over the logits (docs/simulator.md "Memory as the allocator sees it"):
// fused = a vocab-parallel cross entropy that works in place on one fp32 copy (Megatron-Core's
// VocabParallelCrossEntropy, nanotron's sharded_cross_entropy); eager = PyTorch's cross_entropy
// over an fp32 upcast of the logits, op by op (torchtitan before 2025-04 or without compile, HF
// and Composer models); compiled = that expression under torch.compile (torchtitan since
// 2025-04-02 with compile on), Inductor fusing upcast, log-softmax and gradient; te = Transformer
// Engine's parallel_cross_entropy (Megatron --cross-entropy-loss-fusion --cross-entropy-fusion-impl
// te): the loss in fp32 registers from the 16-bit logits, which it keeps for backward and
// overwrites with their gradient (no fp32 copy).
enum class CrossEntropy { kFused, kEager, kCompiled, kTe };
// Where states live when not on the GPU (DeepSpeed offload_optimizer / offload_param device,
// FSDP2 CPUOffloadPolicy): none = on the GPU.
enum class OffloadDevice { kNone, kCpu, kNvme };
// How an MoE layer moves tokens to their experts (docs/plan-format.md "Token dispatch"):
// alltoall = one all-to-all of the routed copies (Megatron alltoall, torchtitan all_to_all_single,
// DeepSpeed); allgather = all-gather over the expert group, reduce-scatter back (Megatron
// allgather); deepep / hybridep = Megatron's flex dispatcher (torchtitan's DeepEP path): each
// token crosses to a destination node once and is forwarded inside it over NVLink.
enum class MoeDispatcher { kAllToAll, kAllGather, kDeepEp, kHybridEp };

const char* to_string(DataParallel v);
const char* to_string(PipelineSchedule v);
const char* to_string(GradSync v);
const char* to_string(Checkpointing v);
const char* to_string(DType v);
const char* to_string(Attention v);
const char* to_string(Fp8Recipe v);
const char* to_string(Stack v);
const char* to_string(AttentionKernel v);
const char* to_string(CrossEntropy v);
std::optional<CrossEntropy> parse_cross_entropy(std::string_view s);
const std::vector<std::string>& cross_entropy_names();
std::optional<Stack> parse_stack(std::string_view s);  // "torchtitan-eager" and "torchtitan_eager" alike
std::optional<AttentionKernel> parse_attention_kernel(std::string_view s);
const std::vector<std::string>& stack_names();
const std::vector<std::string>& attention_kernel_names();
// Which memory-bound ops a stack runs as PyTorch's eager ops, one kernel per op (the others are
// one fused kernel): sim/stack_cost.h prices the difference.
struct EagerOps {
  bool norm = false, rope = false, swiglu = false;
  bool any() const { return norm || rope || swiglu; }
};
EagerOps stack_eager_ops(Stack v);
// training.cuda_graphs: what Megatron-Core captures in CUDA graphs (--cuda-graph-impl
// transformer_engine / local with --cuda-graph-modules, formerly --cuda-graph-scope; "layer" is
// its empty list, the whole transformer layer; "full_iteration" the whole step,
// --cuda-graph-impl full_iteration). megatron/core/transformer/transformer_config.py
// cuda_graph_modules.
const std::vector<std::string>& cuda_graph_scope_names();
// training.recompute_modules: the sub-modules Megatron-Core's selective recompute re-runs
// (--recompute-granularity selective --recompute-modules; transformer_config.py recompute_modules):
// core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts.
const std::vector<std::string>& recompute_module_names();
// What training.recompute_modules asks for, as flags (absent: core_attn alone, Megatron's default).
struct RecomputeModules {
  bool core_attn = true, moe_act = false, layernorm = false, mla_up_proj = false, mlp = false, moe = false,
       shared_experts = false;
};
const char* to_string(OffloadDevice v);
const char* to_string(MoeDispatcher v);
int dtype_bytes(DType v);
std::optional<DataParallel> parse_data_parallel(std::string_view s);
std::optional<PipelineSchedule> parse_pipeline_schedule(std::string_view s);  // case-insensitive, torchtitan names too
std::optional<GradSync> parse_grad_sync(std::string_view s);
std::optional<Checkpointing> parse_checkpointing(std::string_view s);
std::optional<DType> parse_dtype(std::string_view s);  // fp32|float32, bf16|bfloat16, fp16|float16, fp8
std::optional<Attention> parse_attention(std::string_view s);
std::optional<Fp8Recipe> parse_fp8_recipe(std::string_view s);  // case-insensitive
const std::vector<std::string>& fp8_recipe_names();              // every recipe, "none" first
std::optional<OffloadDevice> parse_offload_device(std::string_view s);  // none|cpu|nvme
// Optimizers planck prices (training.optimizer), by per-parameter state bytes and step traffic
// (sim/memory.h optimizer_state_bytes).
const std::vector<std::string>& optimizer_names();
std::optional<MoeDispatcher> parse_moe_dispatcher(std::string_view s);  // alltoall|allgather|deepep|hybridep

// How fast kernels run on a GPU relative to its peaks (sim/compute.h, docs/simulator.md
// "Compute model"). GEMM efficiency = gemm_max x f(M) f(N) f(K) with f(x) = x / (x + gemm_half_dim);
// attention (fused, forward + backward) efficiency = attention_max x s / (s + attention_half_seq);
// memory-bound kernels move bytes at hbm_efficiency x hbm_gbps.
struct ComputeCurve {
  double gemm_max = 0.7;
  double gemm_half_dim = 64;
  double attention_max = 0.35;
  double attention_half_seq = 550;
  double hbm_efficiency = 0.8;
  double fp8_gemm_max = 0.5;  // gemm_max of FP8 GEMMs, as a fraction of fp8_tflops
  // An MoE layer's grouped expert GEMMs, as a fraction of what a dense GEMM of the same shape
  // achieves: fitted per GPU generation to published MoE runs (docs/simulator.md "MoE validation").
  double grouped_gemm_scale = 0.7;
};

// GB/s per direction per GPU, GB = 1e9 bytes. memory_bytes as nvidia-smi reports total memory.
struct GpuSpec {
  std::string name;
  std::int64_t memory_bytes = 0;
  double bf16_tflops = 0;   // dense
  double nvlink_gbps = 0;   // intra-node, per direction per GPU
  double nic_gbps = 0;      // inter-node, per direction per GPU
  double fp8_tflops = 0;    // dense; 0 = no FP8 tensor cores (FP8 GEMMs run at the BF16 rate)
  double hbm_gbps = 0;      // HBM bandwidth, GB/s
  double host_gbps = 0;     // GPU <-> host link (PCIe), per direction, GB/s; 0 = unknown (offload unpriced)
  ComputeCurve compute;
};

struct ModelSpec {
  std::string name;  // preset name, or "custom"
  std::int64_t layers = 0, hidden = 0, ffn_hidden = 0, heads = 0, kv_heads = 0, vocab = 0;
  std::int64_t head_dim = 0;  // 0 = hidden / heads
  // Mixture of experts (0 = dense model).
  std::int64_t experts = 0, experts_per_token = 0, moe_ffn_hidden = 0, shared_experts = 0;
  std::int64_t dense_layers = 0;  // leading layers with a dense MLP in an MoE model (first_k_dense_replace)
  std::int64_t moe_layer_freq = 1;  // after them every n-th layer is MoE, the others dense (Llama 4: 2)
  // Group-limited routing (DeepSeek-V3 "node-limited routing", HF n_group / topk_group): the
  // experts form expert_groups groups and a token picks its experts from expert_groups_per_token
  // of them; 0 = unlimited.
  std::int64_t expert_groups = 0, expert_groups_per_token = 0;
  bool tied_embeddings = false;
  bool gated_mlp = true;                  // SwiGLU (3 matrices) vs GELU MLP (2 matrices, GPT-3)
  bool biases = false;                    // linear biases and LayerNorm (GPT-3) vs RMSNorm, no bias
  // LayerNorm rather than RMSNorm; absent: as `biases` says (MPT: no biases, LayerNorm). Only the
  // eager stacks' pricing reads it (PyTorch's layer_norm is one fused kernel, rms_norm was not).
  std::optional<bool> layer_norm;
  bool uses_layer_norm() const { return layer_norm.value_or(biases); }
  std::int64_t position_embeddings = 0;   // learned positions (GPT-3: 2048); 0 = rotary
  // Multi-head latent attention (DeepSeek); 0 = ordinary (GQA) attention.
  std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0,
               v_head_dim = 0;
  std::int64_t effective_head_dim() const { return head_dim > 0 ? head_dim : (heads > 0 ? hidden / heads : 0); }
  bool is_moe() const { return experts > 0; }
  // Layers with routed experts: of the layers after dense_layers, those whose 1-based index
  // among them is a multiple of moe_layer_freq (HF Llama 4 interleave_moe_layer_step).
  std::int64_t moe_layer_count() const {
    if (!is_moe() || layers <= dense_layers) return 0;
    return (layers - dense_layers) / (moe_layer_freq > 0 ? moe_layer_freq : 1);
  }
};

struct Cluster {
  std::int64_t nodes = 0;
  std::int64_t gpus_per_node = 0;
  // GPUs that share one NVLink domain, a whole number of nodes (GB200 / GB300 NVL72: up to 72
  // GPUs in trays of 4); 0 = one node. Collectives inside it run on NVLink, across it on NICs.
  std::int64_t nvlink_domain = 0;
  GpuSpec gpu;
};
// The GPUs whose traffic stays on NVLink: cluster.nvlink_domain, else a node.
inline std::int64_t link_domain(const Cluster& c) { return c.nvlink_domain > 0 ? c.nvlink_domain : c.gpus_per_node; }
// What messages call it: "node", or "NVLink domain" when the plan sets one.
inline const char* link_domain_word(const Cluster& c) { return c.nvlink_domain > 0 ? "NVLink domain" : "node"; }

struct MeshSpec {
  std::vector<std::string> dims;
  std::vector<std::int64_t> shape;  // as written: may hold one -1
};

// Largest parallelism.dp_bucket_params a plan may give (2^50).
inline constexpr std::int64_t kMaxBucketParams = std::int64_t{1} << 50;

struct Parallelism {
  bool present = false;                             // the section was in the file
  std::optional<DataParallel> data_parallel;        // absent: inferred (roles.h)
  std::optional<std::vector<std::string>> fsdp_dims;
  std::optional<std::vector<std::string>> replicate_dims;
  bool reshard_after_forward = true;
  bool sequence_parallel = false;
  std::optional<PipelineSchedule> pipeline_schedule;  // absent: 1f1b where pp > 1
  std::int64_t virtual_stages = 1;
  // Mixture of experts (docs/plan-format.md): expert tensor parallel degree, 1 or tp (absent: tp),
  // and the router's capacity factor (absent: dropless).
  std::optional<std::int64_t> etp;
  std::optional<double> expert_capacity_factor;
  // TP collectives overlapped with the GEMMs they feed (torchtitan enable_async_tensor_parallel,
  // Megatron --tp-comm-overlap); false: they sit on each layer's critical path.
  bool async_tp = false;
  // Expert all-to-all under another micro-batch's compute (sim/ep_overlap.h); absent: on for
  // dualpipev with pp > 1 (DeepSeek's DualPipe, torchtitan's default), off otherwise.
  std::optional<bool> ep_overlap;
  // zero1 / zero2: the all-gather of updated parameters after the optimizer step overlaps the
  // next step's first forward, bucket by bucket (Megatron --overlap-param-gather with the
  // distributed optimizer); false: it runs after the step (DeepSpeed ZeRO-1/2).
  bool overlap_param_gather = false;
  // Parameters per data-parallel bucket (ddp all-reduce, zero1/zero2 reduce-scatter and
  // all-gather); absent: the strategy's default (PyTorch DDP 25 MiB, DeepSpeed 5e8 elements).
  // Megatron's default is max(4e7, 1e6 x dp) (DistributedDataParallelConfig.bucket_size).
  // kMaxBucketParams (or any value above the parameter count): one bucket, so the sync cannot
  // overlap the backward (Megatron without --overlap-grad-reduce).
  std::optional<std::int64_t> dp_bucket_params;
  // Megatron's pipeline scatter-gather; absent: on when tp > 1 and sequence_parallel is false.
  std::optional<bool> pp_scatter_gather;
  // Megatron-LM's pipeline split (core/plan/pipeline_split.h): --account-for-embedding-in-
  // pipeline-split / --account-for-loss-in-pipeline-split, --decoder-first/last-pipeline-num-layers,
  // --pipeline-model-parallel-layout. Absent: the even split (torchtitan's where uneven).
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  std::optional<std::int64_t> first_stage_layers, last_stage_layers;
  std::optional<std::string> pipeline_layout;
  // MoE token dispatch (absent: alltoall) and the busiest expert-parallel rank's routed rows over
  // the mean (absent: 1, a balanced router; a capacity factor bounds it by padding instead).
  std::optional<MoeDispatcher> moe_dispatcher;
  std::optional<double> expert_imbalance;
  // The sharded optimizer's and FSDP's parameter all-gathers carry the transformer blocks'
  // weights in FP8 (Megatron --fp8-param-gather, torchtitan enable_fsdp_float8_all_gather);
  // only with training.fp8 (core::gathered_param_bytes).
  bool fp8_param_gather = false;
};

struct Training {
  std::optional<std::int64_t> global_batch;
  std::int64_t micro_batch = 1;
  std::optional<std::int64_t> seq_len;
  std::optional<std::int64_t> grad_accumulation;  // absent: global_batch / (micro_batch x dp_degree), else 1
  GradSync grad_sync = GradSync::kLastMicrobatch;
  DType param_dtype = DType::kBf16;
  DType reduce_dtype = DType::kFp32;
  // The gradient buffer's dtype when it differs from the dtype gradients are reduced in:
  // DeepSpeed's BF16_Optimizer accumulates into a full fp32 buffer and reduces in bf16
  // (data_types.grad_accum_dtype). Absent: reduce_dtype (Megatron's main_grad buffer, FSDP).
  std::optional<DType> grad_accum_dtype;
  std::string optimizer = "adamw";  // one of optimizer_names()
  // Optimizer states in this dtype (fp32; bf16: DeepSpeed bf16_optimizer_states).
  DType optimizer_state_dtype = DType::kFp32;
  // The optimizer's master copy of the weights: absent = fp32 when param_dtype is 16-bit (none
  // when it is fp32); bf16 = DeepSpeed bf16_master_weights_and_grads.
  std::optional<DType> master_dtype;
  // master_dtype "none": the 16-bit parameters are what the optimizer updates, no master copy
  // (torchtitan's training.dtype = "bfloat16", full bf16 training).
  bool no_master = false;
  // Offloaded states leave GPU memory and cross the host link every step (docs/simulator.md
  // "Offload"): optimizer = master weights + optimizer states (+ the step itself on the host);
  // params = the parameter shards (ZeRO-3 offload_param, FSDP2 CPUOffloadPolicy).
  OffloadDevice offload_optimizer = OffloadDevice::kNone;
  OffloadDevice offload_params = OffloadDevice::kNone;
  // Frozen base weights (Megatron --freeze-LM, a PEFT fine-tune): no gradients, optimizer states
  // or gradient collectives for the model's weights. lora_rank > 0 adds LoRA adapters of that
  // rank on every linear of each transformer layer, which train (and imply frozen).
  bool frozen = false;
  std::int64_t lora_rank = 0;
  // The linears the adapters sit on (core/plan/trainable.h lora_target_names); empty: every linear.
  std::vector<std::string> lora_targets;
  Checkpointing activation_checkpointing = Checkpointing::kNone;
  // With activation_checkpointing full, only some transformer layers recompute (absent: all):
  // every N-th layer of a rank (torchtitan selective_ac_option = "N", layer SAC), or the first N
  // layers of each pipeline chunk (Megatron --recompute-method block --recompute-num-layers N).
  std::optional<std::int64_t> recompute_every;
  std::optional<std::int64_t> recompute_num_layers;
  // With activation_checkpointing selective_attention (Megatron's selective granularity), the
  // sub-modules each layer recomputes (recompute_module_names()); absent: core_attn alone
  // (Megatron's default), an empty list: none.
  std::optional<std::vector<std::string>> recompute_modules;
  Attention attention = Attention::kFlash;
  Fp8Recipe fp8 = Fp8Recipe::kNone;
  Stack stack = Stack::kMegatron;
  bool stack_given = false;  // training.stack was in the file (else megatron's fused pricing)
  // Absent: the stack's own (attention_kernel_of).
  std::optional<AttentionKernel> attention_kernel;
  // Absent: the stack's own (cross_entropy_of).
  std::optional<CrossEntropy> cross_entropy;
  // Multi-token prediction depths trained beside the model (DeepSeek-V3's
  // num_nextn_predict_layers, Megatron --mtp-num-layers): each is one more transformer layer of
  // the model's last kind, a 2h -> h projection and the output head and loss again, on the stage
  // that holds the loss (or a pipeline_layout's 'm'); 0: none.
  std::int64_t mtp_layers = 0;
  // Parts of each layer replayed from CUDA graphs (cuda_graph_scope_names()); empty: launched
  // eagerly. The simulator reads what they remove from the MoE layers' host time.
  std::vector<std::string> cuda_graphs;
  // Set: compute time = model FLOPs (+ recompute) / (peak x mfu), the per-kernel model skipped.
  std::optional<double> mfu;
};

// training.cross_entropy, or the stack's own when absent: compiled for torchtitan_compile
// (torchtitan compiles the loss with the model since pytorch/torchtitan@bbb1b616, 2025-04-02),
// eager for torchtitan_eager, fsdp1 and fsdp2, fused for the Megatron-derived stacks and nanotron.
CrossEntropy cross_entropy_of(const Training& t);
// The fused attention kernel the step runs: the plan's, else its stack's. Megatron-Core's
// Transformer Engine attention prefers cuDNN's fused attention over FlashAttention on Hopper and
// later (transformer_engine/pytorch/attention/dot_product_attention/utils.py
// get_attention_backend: "Disabling FlashAttention to give FusedAttention preference on Hopper+");
// the PyTorch stacks (SDPA's flash backend) and nanotron (flash-attn) run FlashAttention-2.
AttentionKernel attention_kernel_of(const Training& t);
// training.recompute_modules as flags; under any other checkpointing mode, none of them.
RecomputeModules recompute_modules_of(const Training& t);

// Transformer layers of a rank, out of `layers` held in `chunks` pipeline chunks, that full
// activation checkpointing recomputes: all of them, floor(layers / N) under recompute_every N
// (torchtitan counts the blocks it wraps and checkpoints each N-th), min(layers, N x chunks)
// under recompute_num_layers N; 0 for the other checkpointing modes.
std::int64_t recomputed_layers(const Training& t, std::int64_t layers, std::int64_t chunks);

struct RankProgramSpec {
  std::vector<std::string> steps;
  // prefix -> dims it must enumerate, e.g. {"dp", {"dp_replicate", "dp_shard"}}.
  std::vector<std::pair<std::string, std::vector<std::string>>> outputs;
  bool has_outputs = false;
};

struct DeclaredGroups {
  std::string key;  // role ("fsdp") or comma-joined dims ("dp_shard,cp") as written
  std::vector<std::vector<std::int64_t>> groups;
};

struct Plan {
  std::string path;  // as given on the command line
  JsonDoc doc;       // the parsed file with positions
  std::string name;
  std::vector<std::string> notes;
  Cluster cluster;
  bool gpu_given = false;  // cluster.gpu was in the file (else the h100-sxm default)
  MeshSpec mesh;
  Parallelism parallelism;
  std::optional<ModelSpec> model;
  std::optional<Training> training;
  std::optional<RankProgramSpec> rank_program;
  std::vector<DeclaredGroups> groups;

  SourcePos position(std::string_view pointer) const { return doc.position(pointer); }
  // nodes x gpus_per_node, or nullopt when it overflows int64.
  std::optional<std::int64_t> world() const;
};

}  // namespace planck::core
