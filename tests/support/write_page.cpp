// write_page DOCUMENT.json TITLE OUT.html: the report page for a JSON document laptime wrote
// (trace/write/html_page.h), for the pages of reports made elsewhere: `laptime lab` runs on a
// GPU, and its committed reports are drawn from their JSON as the command draws its own.
#include <cstdio>
#include <fstream>
#include <sstream>

#include "trace/model/error.h"
#include "trace/write/html_page.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: write_page DOCUMENT.json TITLE OUT.html\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "write_page: cannot read %s\n", argv[1]);
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  try {
    laptime::trace::write_html(argv[3], text.str(), argv[2]);
  } catch (const laptime::trace::TraceError& e) {
    std::fprintf(stderr, "write_page: %s\n", e.what());
    return 1;
  }
  return 0;
}
