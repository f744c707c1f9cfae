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

add_library(grader_references_portable OBJECT EXCLUDE_FROM_ALL ${GRADER_REFERENCE_SOURCES})
set_target_properties(grader_references_portable PROPERTIES CUDA_ARCHITECTURES "${GRADER_HANDOUT_ARCHITECTURES}")

set(handout_references_object ${CMAKE_BINARY_DIR}/handout-references/grader_references.o)
# Line information inside the fatbin is compressed, out of reach of any strip: flags that add it
# (-G, -lineinfo, in CMAKE_CUDA_FLAGS or the build type's) make the handout refuse to assemble.
string(TOUPPER "${CMAKE_BUILD_TYPE}" build_type)
set(handout_cuda_flags "${CMAKE_CUDA_FLAGS} ${CMAKE_CUDA_FLAGS_${build_type}}")
# --strip-debug: the host side's DWARF (a -g build type), which names the reference's files.
add_custom_command(OUTPUT ${handout_references_object}
  COMMAND ${CMAKE_LINKER} -r --strip-debug -o ${handout_references_object} $<TARGET_OBJECTS:grader_references_portable>
  DEPENDS grader_references_portable $<TARGET_OBJECTS:grader_references_portable>
  COMMAND_EXPAND_LISTS
  COMMENT "Combining the references for the handout into one object"
  VERBATIM)

# Always run: copying is quick, and a stale handout is worse than a second copy.
add_custom_target(handout
  COMMAND ${CMAKE_COMMAND} -D SOURCE_DIR=${PROJECT_SOURCE_DIR} -D OUTPUT_DIR=${GRADER_HANDOUT_DIR}
          -D REFERENCES_OBJECT=${handout_references_object} -D GRADER_VERSION=${PROJECT_VERSION}
          -D CUDA_VERSION=${CMAKE_CUDA_COMPILER_VERSION} "-D ARCHITECTURES=${GRADER_HANDOUT_ARCHITECTURES}"
          "-D CUDA_FLAGS=${handout_cuda_flags}"
          -P ${CMAKE_CURRENT_LIST_DIR}/assemble.cmake
  DEPENDS ${handout_references_object}
  COMMENT "Assembling the students' handout in ${GRADER_HANDOUT_DIR}"
  VERBATIM)
