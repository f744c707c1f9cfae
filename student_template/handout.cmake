# `cmake --build build --target handout`: what a student receives, assembled in build/handout/
# (student_template/README.md says what is in it). Included by the repository's CMakeLists.txt;
# the rest of student_template/ is the handout's own top level and is copied, not built, here.
#
# The references go in compiled form only: one relocatable object with machine code for every GPU
# architecture in GRADER_HANDOUT_ARCHITECTURES and PTX for later ones, built without line
# information, so no reference source or line of it reaches a student. Everything else in the
# handout is a copy of a file of this repository (tests/package/check_handout.sh proves both).

set(GRADER_HANDOUT_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;100-real;120-real;75-virtual"
    CACHE STRING "GPU architectures the handout's compiled references carry (the -virtual entry adds PTX)")
set(GRADER_HANDOUT_DIR ${CMAKE_BINARY_DIR}/handout)

# Line information inside the fatbin is compressed, out of reach of any strip: flags that add it
# (-G, -lineinfo, in CMAKE_CUDA_FLAGS or the build type's) make the handout refuse to assemble.
string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
set(handout_cuda_flags "${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${build_type}}")

# A handout assembled in OUTPUT_DIR by TARGET, its references compiled for ARCHITECTURES.
function(grader_add_handout target output_dir architectures)
  add_library(${target}_references OBJECT EXCLUDE_FROM_ALL ${GRADER_REFERENCE_SOURCES})
  set_target_properties(${target}_references PROPERTIES CUDA_ARCHITECTURES "${architectures}")
  set(references_object ${CMAKE_BINARY_DIR}/${target}-references/grader_references.o)
  # --strip-debug: the host side's DWARF (a -g build type), which names the reference's files.
  add_custom_command(OUTPUT ${references_object}
    COMMAND ${CMAKE_LINKER} -r --strip-debug -o ${references_object} $<TARGET_OBJECTS:${target}_references>
    DEPENDS ${target}_references $<TARGET_OBJECTS:${target}_references>
    COMMAND_EXPAND_LISTS
    COMMENT "Combining the references for ${target} into one object"
    VERBATIM)
  # Always run: copying is quick, and a stale handout is worse than a second copy.
  add_custom_target(${target}
    COMMAND ${CMAKE_COMMAND} -D SOURCE_DIR=${PROJECT_SOURCE_DIR} -D OUTPUT_DIR=${output_dir}
            -D REFERENCES_OBJECT=${references_object} -D GRADER_VERSION=${PROJECT_VERSION}
            -D CUDA_VERSION=${CMAKE_CUDA_COMPILER_VERSION} "-D ARCHITECTURES=${architectures}"
            "-D CUDA_FLAGS=${handout_cuda_flags}"
            -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/assemble.cmake
    DEPENDS ${references_object}
    COMMENT "Assembling the students' handout in ${output_dir}"
    VERBATIM)
endfunction()

# What a student receives.
grader_add_handout(handout ${GRADER_HANDOUT_DIR} "${GRADER_HANDOUT_ARCHITECTURES}")

# The same handout with its references compiled for the list's first real architecture and its
# virtual ones only, for tests/package/check_handout.sh, which checks what assembly does and that
# a clean copy builds: the references' compile is the larger part of the handout's, and its
# machine code for each architecture is nvcc's business. That test checks that `handout` compiles
# them for every architecture of GRADER_HANDOUT_ARCHITECTURES, from the rules of this build.
set(handout_test_architectures "")
foreach(architecture ${GRADER_HANDOUT_ARCHITECTURES})
  if(architecture MATCHES "-virtual$" OR (architecture MATCHES "-real$" AND NOT handout_test_architectures MATCHES "-real"))
    list(APPEND handout_test_architectures ${architecture})
  endif()
endforeach()
grader_add_handout(handout_for_tests ${CMAKE_BINARY_DIR}/handout-for-tests "${handout_test_architectures}")
