#include "ember/graph/Node.h"

#include "ember/support/Error.h"

#include <cstring>
#include <sstream>

namespace ember {

namespace {
struct KindEntry {
  const char* name;
  const char* doc;
};
constexpr KindEntry kKindTable[] = {
#define EMBER_NODE(Name, Doc) {#Name, Doc},
#include "ember/graph/Nodes.def"
};
} // namespace

const char* nodeKindName(NodeKind k) {
  return kKindTable[static_cast<size_t>(k)].name;
}
const char* nodeKindDoc(NodeKind k) {
  return kKindTable[static_cast<size_t>(k)].doc;
}
size_t numNodeKinds() {
  return sizeof(kKindTable) / sizeof(kKindTable[0]);
}

bool parseNodeKind(const std::string& s, NodeKind* out) {
  for (size_t i = 0; i < numNodeKinds(); ++i) {
    if (s == kKindTable[i].name) {
      *out = static_cast<NodeKind>(i);
      return true;
    }
  }
  return false;
}

namespace {
template <typename T>
const T* getTyped(const std::map<std::string, AttrValue>& m, const std::string& name,
                  const char* want) {
  auto it = m.find(name);
  if (it == m.end())
    return nullptr;
  if (const T* p = std::get_if<T>(&it->second))
    return p;
  throw Error("attribute '" + name + "'", std::string("expected ") + want);
}

void printValue(std::ostream& os, const AttrValue& v) {
  struct Printer {
    std::ostream& os;
    void operator()(int64_t x) const { os << x; }
    void operator()(double x) const { os << x; }
    void operator()(const std::string& s) const { os << '"' << s << '"'; }
    void operator()(const std::vector<int64_t>& xs) const {
      os << '[';
      for (size_t i = 0; i < xs.size(); ++i)
        os << (i ? ", " : "") << xs[i];
      os << ']';
    }
    void operator()(const std::vector<double>& xs) const {
      os << '[';
      for (size_t i = 0; i < xs.size(); ++i)
        os << (i ? ", " : "") << xs[i];
      os << ']';
    }
  };
  std::visit(Printer{os}, v);
}
} // namespace

int64_t Attrs::getInt(const std::string& name, int64_t def) const {
  const int64_t* p = getTyped<int64_t>(values_, name, "an integer");
  return p ? *p : def;
}

double Attrs::getFloat(const std::string& name, double def) const {
  auto it = values_.find(name);
  if (it != values_.end())
    if (const int64_t* i = std::get_if<int64_t>(&it->second))
      return static_cast<double>(*i);
  const double* p = getTyped<double>(values_, name, "a float");
  return p ? *p : def;
}

std::string Attrs::getString(const std::string& name, const std::string& def) const {
  const std::string* p = getTyped<std::string>(values_, name, "a string");
  return p ? *p : def;
}

std::vector<int64_t> Attrs::getInts(const std::string& name, std::vector<int64_t> def) const {
  const auto* p = getTyped<std::vector<int64_t>>(values_, name, "a list of integers");
  return p ? *p : def;
}

std::vector<double> Attrs::getFloats(const std::string& name, std::vector<double> def) const {
  const auto* p = getTyped<std::vector<double>>(values_, name, "a list of floats");
  return p ? *p : def;
}

std::string Attrs::toString() const {
  if (values_.empty())
    return "";
  std::ostringstream os;
  os << '{';
  bool first = true;
  for (const auto& [k, v] : values_) {
    os << (first ? "" : ", ") << k << '=';
    printValue(os, v);
    first = false;
  }
  os << '}';
  return os.str();
}

const Tensor& Node::payload() const {
  if (!payload_)
    throw Error(name_, std::string("node of kind ") + kindName() + " has no payload");
  return *payload_;
}

Tensor& Node::payload() {
  if (!payload_)
    throw Error(name_, std::string("node of kind ") + kindName() + " has no payload");
  return *payload_;
}

void Node::setPayload(Tensor t) {
  if (kind_ != NodeKind::Constant)
    throw Error(name_, "only a Constant holds a payload");
  results_.at(0) = t.type();
  payload_ = std::make_unique<Tensor>(std::move(t));
}

} // namespace ember
