#pragma once
// A tiny DOT writer: the whole diagram is built as text in insertion order, so the same input
// gives the same bytes (golden files), with no pointers or hash order in ids.

#include <string>
#include <utility>
#include <vector>

namespace planck::viz {

// One attribute. Values are quoted and escaped, except HTML-like labels (html = true), which
// are written as <...>.
struct Attr {
  std::string key;
  std::string value;
  bool html = false;
};
using Attrs = std::vector<Attr>;

class DotGraph {
 public:
  explicit DotGraph(std::string name) : name_(std::move(name)) {}

  void graph_attr(std::string key, std::string value) { graph_attrs_.push_back({std::move(key), std::move(value)}); }
  void graph_attr_html(std::string key, std::string value) {
    graph_attrs_.push_back({std::move(key), std::move(value), true});
  }
  void node_defaults(Attrs attrs) { node_defaults_ = std::move(attrs); }
  void edge_defaults(Attrs attrs) { edge_defaults_ = std::move(attrs); }

  // Returns the cluster's index for add_node. `id` without the "cluster_" prefix.
  int add_cluster(std::string id, Attrs attrs);
  void add_node(std::string id, Attrs attrs, int cluster = -1);
  void add_edge(std::string from, std::string to, Attrs attrs);
  // A statement written verbatim after the nodes (e.g. "{rank=same; a; b}").
  void add_statement(std::string statement) { statements_.push_back(std::move(statement)); }

  int node_count() const { return node_count_; }
  int edge_count() const { return static_cast<int>(edges_.size()); }
  std::string str() const;

 private:
  struct Node {
    std::string id;
    Attrs attrs;
  };
  struct Cluster {
    std::string id;
    Attrs attrs;
    std::vector<Node> nodes;
  };
  struct Edge {
    std::string from, to;
    Attrs attrs;
  };
  std::string name_;
  Attrs graph_attrs_, node_defaults_, edge_defaults_;
  std::vector<Cluster> clusters_;
  std::vector<Node> loose_nodes_;
  std::vector<Edge> edges_;
  std::vector<std::string> statements_;
  int node_count_ = 0;
};

// Escapes text for an HTML-like label (&, <, >, ").
std::string html_escape(const std::string& text);

}  // namespace planck::viz
