#pragma once

#include <string>
#include <vector>

namespace weft {

// An aligned plain-text table: a header row, then rows of cells. Text columns are left-aligned
// and numeric ones right-aligned, as chosen per column.
class TextTable {
 public:
  enum class Align { left, right };

  void add_column(std::string header, Align align);
  void add_row(std::vector<std::string> cells);
  // Rows separated by newlines, columns by two spaces, each line prefixed by `indent`.
  std::string render(const std::string& indent = "") const;

 private:
  std::vector<std::string> headers_;
  std::vector<Align> aligns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace weft
