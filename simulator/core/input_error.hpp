#pragma once

#include <stdexcept>
#include <string>

namespace weft {

// Bad input from the user (a scenario, a flag, a file): the message names the place and what was
// expected. The CLI turns it into exit code 2; every other exception is an internal error.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace weft
