// Interned names: every kernel, API call and NVTX range of a trace names itself through a Name,
// one pointer into its trace's NamePool, so a million kernels of twelve distinct names hold
// twelve strings, not a million (and a 1 MB name shared by 2,500 kernels is held once). Work
// done per name (classifying a kernel, folding a range's indices) is memoised by Name::key().
//
// A Name reads as the const std::string it points to (implicit conversion, str(), c_str());
// it is made only by a NamePool (or empty). Names from different pools compare by content.
// The pool is shared by every copy of a Trace (std::shared_ptr), so a Name stays valid as long
// as any Trace holding it does; NamePool's strings never move (a deque).
#pragma once

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <deque>
#include <unordered_map>

namespace laptime::trace {

class Name {
 public:
  Name() : s_(&blank()) {}
  const std::string& str() const { return *s_; }
  operator const std::string&() const { return *s_; }  // NOLINT: reads as the text it names
  const char* c_str() const { return s_->c_str(); }
  bool empty() const { return s_->empty(); }
  size_t size() const { return s_->size(); }
  // Identity within one pool: equal keys, equal names (and, from one pool, the converse).
  const void* key() const { return s_; }

  friend bool operator==(const Name& a, const Name& b) { return a.s_ == b.s_ || *a.s_ == *b.s_; }
  friend bool operator!=(const Name& a, const Name& b) { return !(a == b); }
  friend bool operator<(const Name& a, const Name& b) { return a.s_ != b.s_ && *a.s_ < *b.s_; }
  friend bool operator==(const Name& a, const std::string& b) { return *a.s_ == b; }
  friend bool operator==(const std::string& a, const Name& b) { return a == *b.s_; }
  friend bool operator!=(const Name& a, const std::string& b) { return *a.s_ != b; }
  friend bool operator==(const Name& a, const char* b) { return *a.s_ == b; }
  friend bool operator!=(const Name& a, const char* b) { return *a.s_ != b; }
  friend std::string operator+(const std::string& a, const Name& b) { return a + *b.s_; }
  friend std::string operator+(const char* a, const Name& b) { return a + *b.s_; }
  friend std::string operator+(const Name& a, const std::string& b) { return *a.s_ + b; }
  friend std::string operator+(const Name& a, const char* b) { return *a.s_ + b; }
  friend std::ostream& operator<<(std::ostream& os, const Name& n) { return os << *n.s_; }

 private:
  friend class NamePool;
  explicit Name(const std::string* s) : s_(s) {}
  static const std::string& blank() {
    static const std::string kEmpty;
    return kEmpty;
  }
  const std::string* s_;
};

class NamePool {
 public:
  // The one Name for this text in this pool.
  Name intern(std::string_view s) {
    auto it = index_.find(s);
    if (it != index_.end()) return Name(it->second);
    const std::string* stored = &strings_.emplace_back(s);
    index_.emplace(std::string_view(*stored), stored);
    return Name(stored);
  }
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // a deque never moves what it holds
  std::unordered_map<std::string_view, const std::string*> index_;
};

}  // namespace laptime::trace

template <>
struct std::hash<laptime::trace::Name> {
  size_t operator()(const laptime::trace::Name& n) const { return std::hash<std::string>()(n.str()); }
};
