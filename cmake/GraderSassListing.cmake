# cmake -D CUOBJDUMP=... -D OBJECT=... -D OUTPUT=... -P GraderSassListing.cmake
# Writes `cuobjdump -sass OBJECT` to OUTPUT (the reference's SASS, which grade compares with each
# submission's when it fingerprints its kernels: grading/src/build/similarity.cpp).
execute_process(COMMAND ${CUOBJDUMP} -sass ${OBJECT} OUTPUT_FILE ${OUTPUT}.tmp RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  file(REMOVE ${OUTPUT}.tmp)
  message(FATAL_ERROR "${CUOBJDUMP} -sass ${OBJECT} failed (${status})")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
