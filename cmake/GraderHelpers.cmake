# Helper functions so that each test is one line in its CMakeLists.txt.

# grader_add_test_program(NAME)
# The one doctest program of a folder of tests/unit/ (as the product's folders): its files come from
# the folder's grader_add_unit_test entries, and the definitions and dependencies they need are set on
# it once, after this call. A unity build (GRADER_UNITY_TESTS): one folder's files compiled in one
# translation unit share doctest's and nlohmann::json's template instantiations, less than half the
# CPU of one compile per file (24.4 to 10.8 s on six of grading/'s files, session 17), which CI's two
# cores feel. All of a program's files in ONE translation unit (UNITY_BUILD_BATCH_SIZE 0): two files'
# anonymous-namespace helpers of one name clash at once, in every build, not only once a new file puts
# them in one batch of 8; and it is quicker (the eight programs without ccache on two cores: 28-32 s
# instead of 35-36 s, 53 s of CPU instead of 62 s; the largest, unit_grading, 15 s and 0.8 GiB).
option(GRADER_UNITY_TESTS "Compile each folder's test files as one translation unit (quicker clean builds; OFF: one per file, quicker to rebuild after editing one)" ON)
function(grader_add_test_program NAME)
  add_executable(${NAME})
  target_link_libraries(${NAME} PRIVATE grader_doctest_main doctest::doctest)
  target_precompile_headers(${NAME} REUSE_FROM grader_test_pch)  # tests/CMakeLists.txt
  set_target_properties(${NAME} PROPERTIES UNITY_BUILD ${GRADER_UNITY_TESTS} UNITY_BUILD_BATCH_SIZE 0)
endfunction()

# grader_add_unit_test(NAME PROGRAM program SOURCES a.cpp b.cpp [LIBS x y] [TIMEOUT seconds] [END_TO_END]
#                      [PARTS a:b c:])
# A CTest entry (label host; END_TO_END: also end_to_end, for tests that run `grade` itself or the real
# nvcc many times) that runs the test cases of SOURCES, which join PROGRAM (grader_add_test_program).
# Each entry runs its own files' cases only (doctest's --source-file), in a process of its own; the
# shared main fails a run that matched no case (doctest_main.cpp), so a wrong filter cannot pass for
# an empty test.
function(grader_add_unit_test NAME)
  cmake_parse_arguments(ARG "END_TO_END" "TIMEOUT;PROGRAM" "SOURCES;LIBS;PARTS" ${ARGN})
  if(NOT ARG_PROGRAM OR NOT TARGET ${ARG_PROGRAM})
    message(FATAL_ERROR "grader_add_unit_test(${NAME}): PROGRAM must name the folder's test program, made "
                        "first by grader_add_test_program")
  endif()
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 120)
  endif()
  target_sources(${ARG_PROGRAM} PRIVATE ${ARG_SOURCES})
  target_link_libraries(${ARG_PROGRAM} PRIVATE ${ARG_LIBS})
  # The entry's own test cases: doctest matches each case's file (its __FILE__, the full path, in a
  # unity build too) against these patterns.
  set(patterns "")
  foreach(source ${ARG_SOURCES})
    get_filename_component(file_name ${source} NAME)
    list(APPEND patterns "*/${file_name}")
  endforeach()
  list(JOIN patterns "," patterns)
  set(run ${ARG_PROGRAM} --source-file=${patterns})
  # PARTS "1:11" "12:": one CTest entry per range of the entry's test cases (doctest's --first and
  # --last, counted among the cases of its files), so that a long one's cases share the machine's cores.
  set(tests "")
  if(ARG_PARTS)
    set(part 0)
    foreach(range ${ARG_PARTS})
      math(EXPR part "${part} + 1")
      string(REPLACE ":" ";" bounds "${range}")
      list(GET bounds 0 first)
      list(GET bounds 1 last)
      set(range_args --first=${first})
      if(NOT last STREQUAL "")
        list(APPEND range_args --last=${last})
      endif()
      add_test(NAME ${NAME}_part${part} COMMAND ${run} ${range_args})
      list(APPEND tests ${NAME}_part${part})
    endforeach()
  else()
    add_test(NAME ${NAME} COMMAND ${run})
    set(tests ${NAME})
  endif()
  if(ARG_END_TO_END)
    # `grade` run whole, many times: the test presets run these once, the others three times.
    set_tests_properties(${tests} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "host;end_to_end")
  else()
    set_tests_properties(${tests} PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "host")
  endif()
endfunction()

# grader_add_gpu_test(NAME COMMAND cmd args... [TIMEOUT seconds])
# A test that needs a CUDA GPU. Its program must print why and exit 77 when there is none;
# CTest then reports it as skipped (the test preset runs verbose, so the reason is printed).
# Where configure found no GPU (GRADER_GPU_FOUND, GraderArchitecture.cmake) the test is
# registered disabled, so CTest lists it as "Not Run (Disabled)" instead of counting it among the
# tests passed, and one test, gpu_tests_not_run, says why and is reported skipped: it keeps a
# run of the gpu label from finding no test at all (the presets' noTestsAction).
function(grader_add_gpu_test NAME)
  cmake_parse_arguments(ARG "" "TIMEOUT" "COMMAND" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 600)
  endif()
  add_test(NAME ${NAME} COMMAND ${ARG_COMMAND})
  set_tests_properties(${NAME} PROPERTIES TIMEOUT ${ARG_TIMEOUT} SKIP_RETURN_CODE 77 LABELS "gpu")
  if(NOT GRADER_GPU_FOUND)
    set_tests_properties(${NAME} PROPERTIES DISABLED TRUE)
    get_property(said GLOBAL PROPERTY GRADER_GPU_TESTS_NOT_RUN_SAID)
    if(NOT said)
      set_property(GLOBAL PROPERTY GRADER_GPU_TESTS_NOT_RUN_SAID TRUE)
      string(CONCAT why "No GPU when this build was configured (nvidia-smi saw none): every test labelled gpu is "
                        "disabled, and listed as Not Run. On a machine with a GPU, configure again (cmake --preset "
                        "default) to run them.")
      add_test(NAME gpu_tests_not_run COMMAND ${CMAKE_COMMAND} -E echo "${why}")
      set_tests_properties(gpu_tests_not_run PROPERTIES LABELS "gpu" SKIP_REGULAR_EXPRESSION "No GPU")
    endif()
  endif()
endfunction()

# grader_add_family(FOLDER)
# An exercise family under harness/families/FOLDER: FOLDER_family.cpp (cases, inputs) joins
# harness_core, FOLDER_checks.cpp (golden results, CPU version, diagnosis) joins harness_checking.
function(grader_add_family FOLDER)
  target_sources(harness_core PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${FOLDER}/${FOLDER}_family.cpp)
  target_sources(harness_checking PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/${FOLDER}/${FOLDER}_checks.cpp)
endfunction()
