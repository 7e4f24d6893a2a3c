#include "viz/dot_graph.h"

namespace planck::viz {
namespace {

// U+FFFD in UTF-8: what a control character of a plan's text becomes in a drawing.
constexpr const char* kReplacement = "\xEF\xBF\xBD";

// A DOT quoted string. '\n' becomes DOT's centred line break "\n"; quotes and backslashes are
// escaped so any text (plan names, observed group names) stays one token.
std::string quote(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      continue;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += kReplacement;  // Graphviz reads C strings: a NUL (JSON allows \u0000) would end the file
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string attr_list(const Attrs& attrs) {
  std::string out;
  for (const Attr& a : attrs) {
    out += out.empty() ? "[" : ", ";
    out += a.key + "=" + (a.html ? "<" + a.value + ">" : quote(a.value));
  }
  if (!out.empty()) out += "]";
  return out;
}

void write_node(std::string& out, const std::string& indent, const std::string& id, const Attrs& attrs) {
  out += indent + quote(id);
  std::string list = attr_list(attrs);
  if (!list.empty()) out += " " + list;
  out += ";\n";
}

}  // namespace

int DotGraph::add_cluster(std::string id, Attrs attrs) {
  clusters_.push_back({std::move(id), std::move(attrs), {}});
  return static_cast<int>(clusters_.size()) - 1;
}

void DotGraph::add_node(std::string id, Attrs attrs, int cluster) {
  ++node_count_;
  if (cluster >= 0 && cluster < static_cast<int>(clusters_.size())) {
    clusters_[cluster].nodes.push_back({std::move(id), std::move(attrs)});
  } else {
    loose_nodes_.push_back({std::move(id), std::move(attrs)});
  }
}

void DotGraph::add_edge(std::string from, std::string to, Attrs attrs) {
  edges_.push_back({std::move(from), std::move(to), std::move(attrs)});
}

std::string DotGraph::str() const {
  std::string out = "digraph " + quote(name_) + " {\n";
  for (const Attr& a : graph_attrs_) out += "  " + a.key + "=" + (a.html ? "<" + a.value + ">" : quote(a.value)) + ";\n";
  if (!node_defaults_.empty()) out += "  node " + attr_list(node_defaults_) + ";\n";
  if (!edge_defaults_.empty()) out += "  edge " + attr_list(edge_defaults_) + ";\n";
  for (const Cluster& c : clusters_) {
    out += "  subgraph " + quote("cluster_" + c.id) + " {\n";
    for (const Attr& a : c.attrs) out += "    " + a.key + "=" + (a.html ? "<" + a.value + ">" : quote(a.value)) + ";\n";
    for (const Node& n : c.nodes) write_node(out, "    ", n.id, n.attrs);
    out += "  }\n";
  }
  for (const Node& n : loose_nodes_) write_node(out, "  ", n.id, n.attrs);
  for (const Edge& e : edges_) {
    out += "  " + quote(e.from) + " -> " + quote(e.to);
    std::string list = attr_list(e.attrs);
    if (!list.empty()) out += " " + list;
    out += ";\n";
  }
  for (const std::string& s : statements_) out += "  " + s + "\n";
  out += "}\n";
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += kReplacement;
        else out += c;
    }
  }
  return out;
}

}  // namespace planck::viz
