# What every build of the grader needs after project(): the language settings, where executables
# and the runner object go, and the libraries `grade` is built with. Included by the repository's
# CMakeLists.txt and by the students' handout (student_template/), so both build the same grader.

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_STANDARD 17)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_RUNTIME_LIBRARY Static)

# Executables in bin/, the runner archives in lib/: `grade` finds lib/ next to its own bin/.
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
set(CMAKE_ARCHIVE_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
# The runner and harness_core as one object (harness/runner/CMakeLists.txt), linked with every submission.
set(GRADER_RUNNER_OBJECT ${CMAKE_ARCHIVE_OUTPUT_DIRECTORY}/grader_runner.o)

find_package(CUDAToolkit REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 2.1 CONFIG REQUIRED)
# Header-only JSON Schema validator behind grading/json_schema.hpp. Debian ships a config package without a
# version file, so no version is asked for; its target also turns on the exceptions json_schema.cpp catches.
find_package(valijson CONFIG QUIET)
if(NOT valijson_FOUND)
  message(FATAL_ERROR "valijson not found: install the Debian package libvalijson-dev")
endif()

# The architecture grade builds submissions for by default (--arch): the first of
# CMAKE_CUDA_ARCHITECTURES, without its -real/-virtual suffix.
list(GET CMAKE_CUDA_ARCHITECTURES 0 GRADER_FIRST_ARCH)
string(REGEX REPLACE "-.*$" "" GRADER_FIRST_ARCH "${GRADER_FIRST_ARCH}")
if(NOT GRADER_FIRST_ARCH MATCHES "^[0-9]+[a-z]?$")
  message(FATAL_ERROR "CMAKE_CUDA_ARCHITECTURES must start with an architecture number such as 90 (grade builds "
                      "submissions for it), not '${CMAKE_CUDA_ARCHITECTURES}'")
endif()
