# Writes OUT: the kernel-file templates of `laptime lab KERNEL --template` (every .cu and .cuh in
# DIR, kernels/lab/templates/) as one C++ table of raw strings, so the binary carries them
# (try_template.cpp).
file(GLOB FILES ${DIR}/*.cu ${DIR}/*.cuh)
list(SORT FILES)
set(text "// Generated from kernels/lab/templates/ by kernels/lab/embed_templates.cmake: edit those files.\n")
string(APPEND text "#include <map>\n#include <string>\n\nnamespace laptime::lab {\n\n")
string(APPEND text "const std::map<std::string, std::string>& template_parts() {\n")
string(APPEND text "  static const std::map<std::string, std::string> parts{\n")
foreach(file IN LISTS FILES)
  if(file STREQUAL "")
    continue()
  endif()
  get_filename_component(name ${file} NAME_WE)
  file(READ ${file} body)
  string(APPEND text "      {\"${name}\", R\"laptime_template(${body})laptime_template\"},\n")
endforeach()
string(APPEND text "  };\n  return parts;\n}\n\n}  // namespace laptime::lab\n")
file(WRITE ${OUT}.new "${text}")
# Replaced only when it changed, so an unchanged template rebuilds nothing.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.new ${OUT})
