// ATTACK: the file contains no scan of its own: it includes the hidden reference solution,
//      reference/scan_kogge_stone.cu, through a path assembled by macros (stringized, so that no
//      "reference/..." string appears in the source), probed with __has_include at every depth
//      from the submission's directory (in this repository it sits four levels below the root) and
//      at the repository's absolute path. If none is found, the launcher is a stub that writes
//      nothing.
// EXPECTED VERDICT: 0 points either way: where the compiler can reach the reference, its dependency
//      list shows a file outside the submission, the CUDA toolkit and the system, and the exercise
//      is an invalid_submission; inside the sandbox the reference is out of sight, the stub is
//      compiled and every case fails (graded, 0 points).

#include <cuda_runtime.h>

#define ADV_STRINGIZE(x) #x
#define ADV_PATH(x) ADV_STRINGIZE(x)
#define ADV_DIRECTORY reference
#define ADV_FILE scan_kogge_stone.cu

#if __has_include(ADV_PATH(../../../../ADV_DIRECTORY/ADV_FILE))
#include ADV_PATH(../../../../ADV_DIRECTORY/ADV_FILE)
#define ADV_INCLUDED_REFERENCE
#elif __has_include(ADV_PATH(../ADV_DIRECTORY/ADV_FILE))
#include ADV_PATH(../ADV_DIRECTORY/ADV_FILE)
#define ADV_INCLUDED_REFERENCE
#elif __has_include(ADV_PATH(../../ADV_DIRECTORY/ADV_FILE))
#include ADV_PATH(../../ADV_DIRECTORY/ADV_FILE)
#define ADV_INCLUDED_REFERENCE
#elif __has_include(ADV_PATH(../../../ADV_DIRECTORY/ADV_FILE))
#include ADV_PATH(../../../ADV_DIRECTORY/ADV_FILE)
#define ADV_INCLUDED_REFERENCE
#elif __has_include(ADV_PATH(../../../../../ADV_DIRECTORY/ADV_FILE))
#include ADV_PATH(../../../../../ADV_DIRECTORY/ADV_FILE)
#define ADV_INCLUDED_REFERENCE
#elif __has_include(ADV_PATH(../../../../../../ADV_DIRECTORY/ADV_FILE))
#include ADV_PATH(../../../../../../ADV_DIRECTORY/ADV_FILE)
#define ADV_INCLUDED_REFERENCE
#elif __has_include(ADV_PATH(/work/main/ADV_DIRECTORY/ADV_FILE))
#include ADV_PATH(/work/main/ADV_DIRECTORY/ADV_FILE)
#define ADV_INCLUDED_REFERENCE
#endif

#ifndef ADV_INCLUDED_REFERENCE
void scan_kogge_stone(const float* in, float* out, int n)
{
    (void)in, (void)out, (void)n;
}
#endif
