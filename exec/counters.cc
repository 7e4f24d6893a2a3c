#include "exec/counters.h"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/base/input_file.h"
#include "core/base/str_cat.h"

namespace planck::exec {
namespace {

class NetdevCounter final : public WireCounter {
 public:
  NetdevCounter(std::vector<std::string> ifs, std::string path) : ifs_(std::move(ifs)), path_(std::move(path)) {}
  std::string source() const override {
    std::string s = "netdev:";
    if (ifs_.empty()) return s + "all-but-lo";
    for (std::size_t i = 0; i < ifs_.size(); ++i) s += (i ? "+" : "") + ifs_[i];
    return s;
  }
  core::Result<std::uint64_t> read() override {
    auto text = core::read_input(path_);
    if (!text) return text.status();
    return parse_netdev_tx(*text, ifs_);
  }

 private:
  std::vector<std::string> ifs_;
  std::string path_;
};

// NVML through dlopen: no link-time dependency, so the binary runs on hosts without a driver.
// Layout of nvmlFieldValue_t (nvml.h): fieldId, scopeId, timestamp, latencyUsec, valueType,
// nvmlReturn, value (8-byte union).
struct NvmlFieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;
  int nvml_return;
  unsigned long long value;
};
constexpr unsigned int kNvlinkDataTx = 138;  // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, KiB

class NvmlCounter final : public WireCounter {
 public:
  using InitFn = int (*)();
  using CountFn = int (*)(unsigned int*);
  using HandleFn = int (*)(unsigned int, void**);
  using FieldsFn = int (*)(void*, int, NvmlFieldValue*);

  explicit NvmlCounter(void* lib) : lib_(lib) {}
  ~NvmlCounter() override {
    if (lib_) dlclose(lib_);
  }
  core::Status open() {
    auto init = reinterpret_cast<InitFn>(dlsym(lib_, "nvmlInit_v2"));
    auto count = reinterpret_cast<CountFn>(dlsym(lib_, "nvmlDeviceGetCount_v2"));
    handle_ = reinterpret_cast<HandleFn>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
    fields_ = reinterpret_cast<FieldsFn>(dlsym(lib_, "nvmlDeviceGetFieldValues"));
    if (!init || !count || !handle_ || !fields_) return core::Status::error("libnvidia-ml.so.1 lacks the NVML v2 entry points");
    if (init() != 0) return core::Status::error("nvmlInit_v2 failed (no NVIDIA driver?)");
    if (count(&devices_) != 0 || devices_ == 0) return core::Status::error("NVML sees no GPU");
    return core::Status::ok();
  }
  std::string source() const override { return "nvml:nvlink"; }
  core::Result<std::uint64_t> read() override {
    std::uint64_t total = 0;
    for (unsigned int d = 0; d < devices_; ++d) {
      void* dev = nullptr;
      if (handle_(d, &dev) != 0) return core::Status::error("nvmlDeviceGetHandleByIndex failed for GPU " + std::to_string(d));
      NvmlFieldValue v{};
      v.field_id = kNvlinkDataTx;
      v.scope_id = 0xffffffffu;  // all links
      if (fields_(dev, 1, &v) != 0 || v.nvml_return != 0) {
        return core::Status::error("GPU " + std::to_string(d) + " has no NVLink throughput counter");
      }
      total += v.value * 1024ull;
    }
    return total;
  }

 private:
  void* lib_;
  HandleFn handle_ = nullptr;
  FieldsFn fields_ = nullptr;
  unsigned int devices_ = 0;
};

class IbCounter final : public WireCounter {
 public:
  IbCounter(std::vector<std::string> files, std::string label) : files_(std::move(files)), label_(std::move(label)) {}
  std::string source() const override { return "ib:" + label_; }
  core::Result<std::uint64_t> read() override {
    std::uint64_t total = 0;
    for (const auto& f : files_) {
      std::ifstream in(f);
      std::uint64_t words = 0;
      if (!(in >> words)) return core::Status::error("cannot read " + f);
      total += words * 4;  // port_xmit_data counts 32-bit words
    }
    return total;
  }

 private:
  std::vector<std::string> files_;
  std::string label_;
};

class SumCounter final : public WireCounter {
 public:
  explicit SumCounter(std::vector<std::unique_ptr<WireCounter>> parts) : parts_(std::move(parts)) {}
  std::string source() const override {
    std::string s;
    for (const auto& p : parts_) s += core::str_cat(s.empty() ? "" : "+", p->source());
    return s;
  }
  core::Result<std::uint64_t> read() override {
    std::uint64_t total = 0;
    for (auto& p : parts_) {
      auto v = p->read();
      if (!v) return v.status();
      total += *v;
    }
    return total;
  }

 private:
  std::vector<std::unique_ptr<WireCounter>> parts_;
};

}  // namespace

core::Result<std::uint64_t> parse_netdev_tx(const std::string& text, const std::vector<std::string>& interfaces) {
  // "  lo: rx_bytes rx_packets errs drop fifo frame compressed multicast tx_bytes ..."
  std::istringstream in(text);
  std::string line;
  std::uint64_t total = 0;
  std::vector<std::string> found;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    const bool wanted = interfaces.empty() ? name != "lo"
                                           : std::find(interfaces.begin(), interfaces.end(), name) != interfaces.end();
    if (!wanted) continue;
    std::istringstream fields(line.substr(colon + 1));
    std::uint64_t v[9] = {};
    for (auto& x : v) {
      if (!(fields >> x)) return core::Status::error("/proc/net/dev: unreadable counters for interface " + name);
    }
    total += v[8];
    found.push_back(name);
  }
  for (const auto& want : interfaces) {
    if (std::find(found.begin(), found.end(), want) == found.end()) {
      return core::Status::error("/proc/net/dev has no interface '" + want + "'");
    }
  }
  return total;
}

core::Result<std::unique_ptr<WireCounter>> netdev_counter(std::vector<std::string> interfaces,
                                                          std::string proc_net_dev) {
  auto c = std::make_unique<NetdevCounter>(std::move(interfaces), std::move(proc_net_dev));
  if (auto first = c->read(); !first) return first.status();
  return std::unique_ptr<WireCounter>(std::move(c));
}

core::Result<std::unique_ptr<WireCounter>> nvml_counter() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return core::Status::error("libnvidia-ml.so.1 not found (no NVIDIA driver on this host)");
  auto c = std::make_unique<NvmlCounter>(lib);
  if (auto st = c->open(); !st) return st;
  if (auto first = c->read(); !first) return first.status();
  return std::unique_ptr<WireCounter>(std::move(c));
}

core::Result<std::unique_ptr<WireCounter>> infiniband_counter(std::string sysfs_root) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<std::string> files;
  std::string label;
  if (!fs::is_directory(sysfs_root, ec)) return core::Status::error(sysfs_root + " does not exist (no InfiniBand device)");
  for (const auto& dev : fs::directory_iterator(sysfs_root, ec)) {
    for (const auto& port : fs::directory_iterator(dev.path() / "ports", ec)) {
      const fs::path f = port.path() / "counters" / "port_xmit_data";
      if (fs::exists(f, ec)) {
        files.push_back(f.string());
        label += core::str_cat(label.empty() ? "" : "+", dev.path().filename().string(), "/",
                               port.path().filename().string());
      }
    }
  }
  if (files.empty()) return core::Status::error(sysfs_root + " has no port_xmit_data counters");
  return std::unique_ptr<WireCounter>(std::make_unique<IbCounter>(std::move(files), std::move(label)));
}

std::unique_ptr<WireCounter> sum_counter(std::vector<std::unique_ptr<WireCounter>> parts) {
  return std::make_unique<SumCounter>(std::move(parts));
}

}  // namespace planck::exec
