// Graphviz's C API with its plugins registered by us (docs/sources/ecosystem.md §1.1):
// gvContextPlugins(builtins, 0) registers exactly the plugins listed here and never reads
// config6a, so rendering works on a box where `dot -c` was never run. The plugins are opened
// with dlopen from Graphviz's plugin directory when the first diagram is drawn (in the child
// that draws it, render_dot), not linked: pango's plugin alone maps cairo, pango, fontconfig and
// X11, some 35 libraries that every other planck command would load at start-up for nothing.

#include "viz/graphviz.h"

#include <dlfcn.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <graphviz/gvplugin.h>

namespace planck::viz {
namespace {

// libgvc and libcgraph themselves are opened the same way (GraphvizApi below): linked, the two
// and their dependencies cost every planck process about a millisecond of dynamic loading.
// Only the declarations come from Graphviz's headers.
struct GraphvizApi {
  decltype(&::agclose) agclose = nullptr;
  decltype(&::agmemread) agmemread = nullptr;
  decltype(&::agseterr) agseterr = nullptr;
  decltype(&::agseterrf) agseterrf = nullptr;
  decltype(&::gvContextPlugins) gvContextPlugins = nullptr;
  decltype(&::gvFreeContext) gvFreeContext = nullptr;
  decltype(&::gvFreeLayout) gvFreeLayout = nullptr;
  decltype(&::gvFreeRenderData) gvFreeRenderData = nullptr;
  decltype(&::gvLayout) gvLayout = nullptr;
  decltype(&::gvRenderData) gvRenderData = nullptr;
};

// Opens libcgraph and libgvc (once) and looks up what render_here calls, or names what failed.
core::Result<const GraphvizApi*> graphviz_api() {
  static GraphvizApi api;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    auto open = [](const char* file) -> void* {
      void* handle = dlopen(file, RTLD_NOW | RTLD_GLOBAL);
      if (!handle) {
        const char* why = dlerror();
        error = std::string("graphviz library ") + file + " could not be loaded (" + (why ? why : "?") +
                "): apt-get install libgvc6";
      }
      return handle;
    };
    void* cgraph = open(PLANCK_CGRAPH_LIB);
    void* gvc = cgraph ? open(PLANCK_GVC_LIB) : nullptr;
    if (!gvc) return;
    auto find = [&](void* handle, const char* name, auto& slot) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(dlsym(handle, name));
      if (!slot && error.empty()) error = std::string("graphviz library has no ") + name + ": apt-get install libgvc6";
    };
    find(cgraph, "agclose", api.agclose);
    find(cgraph, "agmemread", api.agmemread);
    find(cgraph, "agseterr", api.agseterr);
    find(cgraph, "agseterrf", api.agseterrf);
    find(gvc, "gvContextPlugins", api.gvContextPlugins);
    find(gvc, "gvFreeContext", api.gvFreeContext);
    find(gvc, "gvFreeLayout", api.gvFreeLayout);
    find(gvc, "gvFreeRenderData", api.gvFreeRenderData);
    find(gvc, "gvLayout", api.gvLayout);
    find(gvc, "gvRenderData", api.gvRenderData);
  });
  if (!error.empty()) return core::Status::error(error);
  return &api;
}

// dot_layout = the `dot` engine; core = svg/dot writers; pango = cairo (png) and text metrics.
constexpr const char* kPlugins[] = {"dot_layout", "core", "pango"};
constexpr std::size_t kPluginCount = sizeof kPlugins / sizeof kPlugins[0];

// The plugins' library tables, or an error naming the one that could not be opened.
core::Result<std::vector<lt_symlist_t>> plugin_symbols() {
  std::vector<lt_symlist_t> out;
  for (const char* name : kPlugins) {
    const std::string file = std::string(PLANCK_GV_PLUGIN_DIR) + "/libgvplugin_" + name + ".so.6";
    void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      return core::Status::error("graphviz plugin " + file + " could not be loaded (" + (why ? why : "?") +
                                 "): apt-get install libgvc6");
    }
    const std::string symbol = std::string("gvplugin_") + name + "_LTX_library";
    void* library = dlsym(handle, symbol.c_str());
    if (!library) return core::Status::error("graphviz plugin " + file + " has no " + symbol);
    // Graphviz keeps the names it is given: they live as long as the process (static storage).
    static std::string names[kPluginCount];
    names[out.size()] = symbol;
    out.push_back({names[out.size()].c_str(), library});
  }
  out.push_back({nullptr, nullptr});
  return out;
}

std::mutex& graphviz_mutex() {
  static std::mutex m;
  return m;
}

// Graphviz reports problems through a global callback; collect them instead of printing.
std::string& graphviz_errors() {
  static std::string errors;
  return errors;
}
int collect_error(char* message) {
  graphviz_errors() += message;
  return 0;
}

struct GvcDeleter {
  const GraphvizApi* api;
  void operator()(GVC_t* gvc) const { api->gvFreeContext(gvc); }
};
struct GraphDeleter {
  const GraphvizApi* api;
  void operator()(Agraph_t* g) const { api->agclose(g); }
};

// One context for the process: creating one costs plugin registration every time.
core::Result<GVC_t*> context(const GraphvizApi& api) {
  static std::unique_ptr<GVC_t, GvcDeleter> gvc(nullptr, GvcDeleter{&api});
  static std::vector<lt_symlist_t> builtins;
  if (!gvc) {
    auto symbols = plugin_symbols();
    if (!symbols) return symbols.status();
    builtins = std::move(*symbols);
    gvc.reset(api.gvContextPlugins(builtins.data(), 0));
  }
  if (!gvc) return core::Status::error("graphviz: cannot create a rendering context");
  return gvc.get();
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// Layout and render in this process. Only ever called in a child (see render_dot).
core::Result<std::string> render_here(const std::string& dot, Format format) {
  auto loaded = graphviz_api();
  if (!loaded) return loaded.status();
  const GraphvizApi& api = **loaded;
  graphviz_errors().clear();
  agusererrf previous = api.agseterrf(collect_error);
  api.agseterr(AGERR);
  struct Restore {
    const GraphvizApi& api;
    agusererrf f;
    ~Restore() { api.agseterrf(f); }
  } restore{api, previous};

  auto made = context(api);
  if (!made) return made.status();
  GVC_t* gvc = *made;
  std::unique_ptr<Agraph_t, GraphDeleter> graph(api.agmemread(dot.c_str()), GraphDeleter{&api});
  if (!graph) {
    return core::Status::error("graphviz could not parse the generated DOT: " + trimmed(graphviz_errors()));
  }
  if (api.gvLayout(gvc, graph.get(), "dot") != 0) {
    return core::Status::error("graphviz layout failed: " + trimmed(graphviz_errors()));
  }
  char* data = nullptr;
  unsigned int length = 0;
  // "png" is cairo's 8-bit RGBA renderer from the pango plugin; "svg" is the core writer.
  int rc = api.gvRenderData(gvc, graph.get(), format_name(format), &data, &length);
  std::string out;
  if (rc == 0 && data != nullptr) out.assign(data, length);
  if (data != nullptr) api.gvFreeRenderData(data);
  api.gvFreeLayout(gvc, graph.get());
  if (rc != 0) {
    return core::Status::error(std::string("graphviz could not render ") + format_name(format) + ": " +
                               trimmed(graphviz_errors()));
  }
  return out;
}

// Child -> parent message: 'O' + bytes, or 'E' + error text.
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

core::Result<Format> format_from_path(std::string_view path) {
  auto dot = path.rfind('.');
  std::string ext;
  if (dot != std::string_view::npos && path.find('/', dot) == std::string_view::npos) {
    for (char c : path.substr(dot + 1)) ext += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (ext == "svg") return Format::kSvg;
  if (ext == "png") return Format::kPng;
  if (ext == "dot" || ext == "gv") return Format::kDot;
  return core::Status::error("cannot tell the image format of '" + std::string(path) +
                             "': use an output name ending in .svg, .png or .dot");
}

const char* format_name(Format f) {
  switch (f) {
    case Format::kDot: return "dot";
    case Format::kSvg: return "svg";
    case Format::kPng: return "png";
  }
  return "dot";
}

core::Result<std::string> render_dot(const std::string& dot, Format format) {
  if (format == Format::kDot) return dot;
  std::lock_guard<std::mutex> lock(graphviz_mutex());
  // Each layout runs in a forked child. Graphviz 2.42 keeps layout state in process globals
  // (e.g. the network-simplex search start S_i in lib/common/ns.c survives between layouts), so
  // the second layout in a process can differ from the first — measured here: the same graph
  // rendered twice in one process gave two different SVGs, while the first layout of every
  // fresh process is byte-identical. A fresh child per render keeps output deterministic, and a
  // Graphviz abort on some odd input cannot take the caller down.
  int fds[2];
  if (::pipe(fds) != 0) return render_here(dot, format);
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return render_here(dot, format);
  }
  if (pid == 0) {
    ::close(fds[0]);
    auto r = render_here(dot, format);
    const std::string& payload = r ? *r : r.message();
    bool ok = write_all(fds[1], r ? "O" : "E", 1) && write_all(fds[1], payload.data(), payload.size());
    ::close(fds[1]);
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  std::string message;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    message.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    return core::Status::error(std::string("graphviz crashed while rendering ") + format_name(format) + " (signal " +
                               std::to_string(WTERMSIG(status)) + ": " + ::strsignal(WTERMSIG(status)) + ")");
  }
  if (message.empty() || (message[0] != 'O' && message[0] != 'E')) {
    return core::Status::error(std::string("graphviz renderer exited without output for ") + format_name(format));
  }
  if (message[0] == 'E') return core::Status::error(message.substr(1));
  return message.substr(1);
}

}  // namespace planck::viz
