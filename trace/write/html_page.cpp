#include "trace/write/html_page.h"

#include "trace/model/category.h"
#include "trace/model/text.h"
#include "trace/write/html_assets.h"
#include "trace/write/timeline_svg.h"

namespace laptime::trace {

namespace {

// The categories' colours, as the SVG timeline draws them (timeline_svg.h's category_color): one
// palette for both pictures.
std::string category_style() {
  std::string css;
  for (int c = 0; c < kCategoryCount; ++c) {
    const Category cat = static_cast<Category>(c);
    const std::string name = category_name(cat), color = category_color(cat);
    css += "[data-cat=\"" + name + "\"] { fill: " + color + "; background: " + color + "; }\n";
  }
  return css;
}

}  // namespace

std::string html_page(const std::string& json_document, const std::string& title) {
  std::string page;
  page.reserve(json_document.size() + 128 * 1024);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"color-scheme\" content=\"light dark\">\n";
  // Nothing from outside: no script, style, image or font is fetched, whatever the data holds.
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
      "style-src 'unsafe-inline'\">\n";
  page += "<title>" + html_escape(title) + "</title>\n<style>\n";
  page += kPageCss;
  page += category_style();
  page +=
      "</style>\n</head>\n<body>\n<noscript>This report draws itself with JavaScript; its data is the JSON "
      "document below.</noscript>\n<main id=\"laptime-page\"></main>\n";
  page += "<script type=\"application/json\" id=\"laptime-data\">\n";
  page += script_json(json_document);
  page += "</script>\n<script>\n";
  page += kPageJs;
  page += "laptimePage(document.getElementById(\"laptime-data\"), " + js_string(title) + ");\n</script>\n";
  page += "</body>\n</html>\n";
  return page;
}

void write_html(const std::string& path, const std::string& json_document, const std::string& title) {
  write_output(path, "the HTML report", html_page(json_document, title));
}

}  // namespace laptime::trace
