# Third-party dependencies, all from Debian packages (hack/install-deps.sh installs them).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(OpenSSL REQUIRED)
find_package(CURL REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(RapidJSON QUIET)
find_package(Catch2 2 REQUIRED)
find_package(prometheus-cpp QUIET)

# Debian's cpp-httplib is a compiled library that ships only a pkg-config file; its Cflags carry
# the CPPHTTPLIB_*_SUPPORT defines that must match the library's class layouts.
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
add_library(trainer_deps_httplib INTERFACE)
target_link_libraries(trainer_deps_httplib INTERFACE PkgConfig::HTTPLIB OpenSSL::SSL OpenSSL::Crypto)
add_library(deps::httplib ALIAS trainer_deps_httplib)

add_library(trainer_deps_rapidjson INTERFACE)
if(TARGET RapidJSON)
  target_link_libraries(trainer_deps_rapidjson INTERFACE RapidJSON)
elseif(RapidJSON_INCLUDE_DIRS)
  target_include_directories(trainer_deps_rapidjson SYSTEM INTERFACE ${RapidJSON_INCLUDE_DIRS})
endif()
# Values the SAX reader and writer rely on; std::string support for convenience.
target_compile_definitions(trainer_deps_rapidjson INTERFACE RAPIDJSON_HAS_STDSTRING=1)
# SSE2 (every x86-64 has it): json::Parse scans strings and whitespace 16 bytes at a time. Its
# aligned loads may reach past the end of the text within the same 16 bytes; json::Parse pads the
# text, so sanitizer and fuzz builds run the same scanners as a release.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  target_compile_definitions(trainer_deps_rapidjson INTERFACE RAPIDJSON_SSE2)
endif()
add_library(deps::rapidjson ALIAS trainer_deps_rapidjson)

if(NOT TARGET yaml-cpp::yaml-cpp)
  add_library(yaml-cpp::yaml-cpp ALIAS yaml-cpp)
endif()

if(prometheus-cpp_FOUND)
  set(TRAINER_HAVE_PROMETHEUS ON)
endif()
