#include "ember/graph/Dump.h"

#include <sstream>

namespace ember {

namespace {
std::string valueName(const NodeValue& v) {
  if (!v)
    return "<none>";
  std::string s = "%" + v.node->name();
  if (v.node->numResults() > 1)
    s += "#" + std::to_string(v.resNo);
  return s;
}

std::string dotEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == '<' || c == '>' || c == '|')
      out += '\\';
    out += c;
  }
  return out;
}
} // namespace

void dumpText(const Function& f, std::ostream& os) {
  os << "function " << f.name() << " {\n";
  for (const Node* p : f.inputs())
    os << "  input %" << p->name() << " : " << p->resultType().toString() << "\n";
  for (const auto& n : f.nodes()) {
    os << "  ";
    for (size_t r = 0; r < n->numResults(); ++r)
      os << (r ? ", " : "") << valueName(NodeValue(n.get(), static_cast<unsigned>(r)));
    os << " = " << n->kindName() << '(';
    for (size_t i = 0; i < n->numInputs(); ++i)
      os << (i ? ", " : "") << valueName(n->input(i));
    os << ')';
    std::string attrs = n->attrs().toString();
    if (!attrs.empty())
      os << ' ' << attrs;
    os << " : ";
    for (size_t r = 0; r < n->numResults(); ++r)
      os << (r ? ", " : "") << n->resultType(static_cast<unsigned>(r)).toString();
    os << '\n';
  }
  for (const auto& o : f.outputs())
    os << "  output \"" << o.name << "\" = " << valueName(o.value) << " : "
       << o.value.type().toString() << '\n';
  os << "}\n";
}

std::string dumpText(const Function& f) {
  std::ostringstream os;
  dumpText(f, os);
  return os.str();
}

void dumpDot(const Function& f, std::ostream& os) {
  os << "digraph \"" << dotEscape(f.name()) << "\" {\n  rankdir=TB;\n  node [shape=record];\n";
  auto id = [](const Node* n) { return "n" + std::to_string(reinterpret_cast<uintptr_t>(n)); };
  std::vector<const Node*> storage;
  for (const Node* p : f.inputs())
    storage.push_back(p);
  for (const auto& n : f.nodes())
    for (const NodeValue& v : n->inputs())
      if (v && v.node->kind() == NodeKind::Constant)
        storage.push_back(v.node);
  for (const Node* s : storage)
    os << "  " << id(s) << " [label=\"{" << s->kindName() << "|" << dotEscape(s->name()) << "|"
       << dotEscape(s->resultType().toString()) << "}\", style=filled, fillcolor="
       << (s->kind() == NodeKind::Placeholder ? "lightblue" : "lightgrey") << "];\n";
  for (const auto& n : f.nodes()) {
    os << "  " << id(n.get()) << " [label=\"{" << n->kindName() << "|" << dotEscape(n->name());
    std::string attrs = n->attrs().toString();
    if (!attrs.empty())
      os << "|" << dotEscape(attrs);
    os << "}\"];\n";
    for (const NodeValue& v : n->inputs())
      if (v)
        os << "  " << id(v.node) << " -> " << id(n.get()) << " [label=\""
           << dotEscape(v.type().toString()) << "\"];\n";
  }
  for (size_t i = 0; i < f.outputs().size(); ++i) {
    const auto& o = f.outputs()[i];
    os << "  out" << i << " [label=\"output|" << dotEscape(o.name)
       << "\", style=filled, fillcolor=palegreen];\n";
    os << "  " << id(o.value.node) << " -> out" << i << ";\n";
  }
  os << "}\n";
}

} // namespace ember
