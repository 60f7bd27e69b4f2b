#pragma once

#include <memory>
#include <string>
#include <vector>

#include "simulator/workload/step.hpp"

namespace weft {

// A piece of a model, in the manner of torch.nn.Module: it knows its shapes and, for one rank's
// shard of one microbatch, emits its steps (forward op, input-gradient op, weight-gradient op,
// saved activations, parameters).
class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  // Appends this module's steps; their names are "<prefix><module name>.<step>".
  virtual void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const = 0;

 protected:
  std::string step_name(const std::string& prefix, const std::string& step) const {
    return prefix + name_ + (step.empty() ? "" : "." + step);
  }

 private:
  std::string name_;
};

// Modules run one after another, as torch.nn.Sequential.
class Sequential : public Module {
 public:
  explicit Sequential(std::string name) : Module(std::move(name)) {}

  template <class M, class... Args>
  M& add(Args&&... args) {
    auto module = std::make_unique<M>(std::forward<Args>(args)...);
    M& added = *module;
    children_.push_back(std::move(module));
    return added;
  }

  void emit(const ShardContext& context, const std::string& prefix, std::vector<Step>& steps) const override {
    const std::string inner = inner_prefix(prefix);
    for (const auto& child : children_) child->emit(context, inner, steps);
  }

 protected:
  // What the names of this module's steps start with, under `prefix`.
  std::string inner_prefix(const std::string& prefix) const { return name().empty() ? prefix : prefix + name() + "."; }

 private:
  std::vector<std::unique_ptr<Module>> children_;
};

}  // namespace weft
