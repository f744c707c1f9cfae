// The host-call allowlist: what an honest launcher calls, in one place (docs/security.md, "What a
// submission may call"). Every function or object a submission's object uses from elsewhere (nm's
// U, w and v lines) is classified by its name:
//   allowed     the CUDA runtime's launch, memory, copy, memset, symbol, stream, event, graph, error,
//               device and query calls; nvcc's own registration and launch helpers; printing
//               (printf, puts, fprintf to stdout/stderr, iostreams); host math; the C library's
//               memory and string functions, time queries, exit and assert; the C++ library's
//               containers, strings, algorithms, exceptions, locks and their runtime support
//               (operator new/delete, __cxa_*, std::__throw_*, type information);
//   refused     code loaded or linked at run time, functions looked up by hand, memory protection,
//               files and descriptors, threads and processes, signal handlers and timers, raw
//               system calls, and the grader's own runner (each class with a message a student
//               understands);
//   named       anything else: not refused (an honest launcher may need a call this list lacks)
//               but reported for course staff.
#include <algorithm>
#include <array>
#include <set>
#include <string_view>

#include "grading/build.hpp"
#include "symbol_names.hpp"

namespace grading {
namespace {

bool starts_with(std::string_view text, std::string_view prefix)
{
    return text.substr(0, prefix.size()) == prefix;
}

template <std::size_t N>
bool starts_with_any(std::string_view text, const std::array<std::string_view, N>& prefixes)
{
    return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view p) { return starts_with(text, p); });
}

// A demangled name whose qualified name starts with one of `prefixes`, after a template's
// return type if it has one ("void std::thread::..." as well as "std::thread::...").
template <std::size_t N>
bool qualified_by_any(std::string_view demangled, const std::array<std::string_view, N>& prefixes)
{
    if (starts_with_any(demangled, prefixes)) return true;
    const std::size_t space = demangled.find(' ');
    const std::size_t open = demangled.find('(');
    return space != std::string_view::npos && (open == std::string_view::npos || space < open) &&
           starts_with_any(demangled.substr(space + 1), prefixes);
}

// The CUDA runtime's calls an honest launcher makes, by prefix (cudaMalloc covers cudaMallocAsync,
// cudaMallocHost, cudaMallocPitch, ...).
constexpr std::array<std::string_view, 31> cuda_runtime_prefixes = {
    "cudaMalloc", "cudaFree", "cudaMemcpy", "cudaMemset", "cudaMemGetInfo", "cudaMemPrefetch", "cudaMemAdvise",
    "cudaMemPool", "cudaHost", "cudaStream", "cudaEvent", "cudaGraph", "cudaLaunchKernel",
    "cudaLaunchCooperativeKernel", "cudaLaunchHostFunc", "cudaFunc", "cudaOccupancy", "cudaGetLastError",
    "cudaPeekAtLastError", "cudaGetError", "cudaGetDevice", "cudaSetDevice", "cudaChooseDevice", "cudaDeviceSynchronize",
    "cudaDeviceGet", "cudaDeviceSet", "cudaDeviceReset", "cudaGetSymbol", "cudaPointerGetAttributes",
    "cudaCreateTextureObject", "cudaDestroyTextureObject"};
const std::set<std::string, std::less<>> cuda_runtime_calls = {
    "cudaRuntimeGetVersion", "cudaDriverGetVersion", "cudaThreadSynchronize", "cudaProfilerStart", "cudaProfilerStop",
    "cudaCreateChannelDesc", "cudaGetFuncBySymbol", "cudaGetKernel", "cudaDeviceCanAccessPeer",
    "cudaConfigureCall", "cudaSetupArgument", "cudaLaunch", "cudaCreateSurfaceObject", "cudaDestroySurfaceObject"};
// What nvcc's generated code calls: the registration of the file's own kernels and variables (whose
// callers object_scan.cpp checks) and the kernel launch.
const std::set<std::string, std::less<>> nvcc_generated = {
    "__cudaRegisterFatBinary", "__cudaRegisterFatBinaryEnd", "__cudaUnregisterFatBinary", "__cudaRegisterFunction",
    "__cudaRegisterVar", "__cudaRegisterManagedVar", "__cudaRegisterHostVar", "__cudaRegisterTexture",
    "__cudaRegisterSurface", "__cudaInitModule", "__cudaPushCallConfiguration", "__cudaPopCallConfiguration",
    "__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "__cudaGetKernel", "__cudaLaunch"};

// Printing, the C library's memory, string, conversion and time functions, exit and assert, and
// what the compiler emits for C++ (exceptions, guards, stack protection, thread-local storage).
const std::set<std::string, std::less<>> c_library_calls = {
    // printing to the runner's output
    "printf", "puts", "putchar", "fprintf", "fputs", "fputc", "putc", "_IO_putc", "fflush", "fwrite", "vprintf",
    "vfprintf", "snprintf", "sprintf", "vsnprintf", "vsprintf", "perror", "stdout", "stderr", "__printf_chk",
    "__fprintf_chk", "__sprintf_chk", "__snprintf_chk", "__vfprintf_chk", "__vsnprintf_chk", "__vsprintf_chk",
    "__vprintf_chk", "__sprintf_chk", "strerror", "localeconv",
    // memory and strings
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memalign", "memcpy", "memmove",
    "memset", "memcmp", "memchr", "memmem", "strlen", "strnlen", "strcmp", "strncmp", "strcpy", "strncpy", "strcat",
    "strncat", "strchr", "strrchr", "strstr", "strdup", "strndup", "strtol", "strtoul", "strtoll", "strtoull", "strtod",
    "strtof", "strtold", "atoi", "atol", "atoll", "atof", "sscanf", "__isoc99_sscanf", "__isoc23_sscanf",
    "__isoc23_strtol", "__isoc23_strtoul", "__isoc23_strtoll", "__isoc23_strtoull", "qsort", "bsearch", "rand",
    "srand", "rand_r", "tolower", "toupper", "__ctype_b_loc", "__ctype_tolower_loc", "__ctype_toupper_loc",
    "__memcpy_chk", "__memmove_chk", "__memset_chk", "__strcpy_chk", "__strncpy_chk", "__strcat_chk",
    "__strncat_chk", "__errno_location",
    // time queries
    "time", "clock", "clock_gettime", "gettimeofday",
    // ending, assertions, exit handlers (nvcc registers its own with atexit)
    "exit", "_exit", "abort", "quick_exit", "atexit", "__assert_fail", "__stack_chk_fail", "__stack_chk_guard",
    // what g++ emits
    "__dso_handle", "_GLOBAL_OFFSET_TABLE_", "__tls_get_addr", "__libc_single_threaded", "__gxx_personality_v0",
    "_Unwind_Resume", "__cxa_finalize",
    // locks, condition variables, once and thread-local keys (std::mutex, std::call_once, ...)
    "pthread_once", "pthread_key_create", "pthread_key_delete", "pthread_getspecific", "pthread_setspecific",
    "pthread_self", "pthread_equal"};
constexpr std::array<std::string_view, 5> pthread_sync_prefixes = {"pthread_mutex_", "pthread_cond_",
                                                                  "pthread_rwlock_", "pthread_spin_",
                                                                  "pthread_mutexattr_"};

// Host math (libm), with its float and long double variants and glibc's internal names.
const std::set<std::string, std::less<>> math_functions = {
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
    "exp", "exp2", "exp10", "expm1", "log", "log2", "log10", "log1p", "pow", "sqrt", "cbrt", "hypot", "fabs",
    "floor", "ceil", "round", "lround", "llround", "trunc", "rint", "lrint", "llrint", "nearbyint", "fmod",
    "remainder", "remquo", "fmin", "fmax", "fdim", "fma", "frexp", "ldexp", "modf", "scalbn", "scalbln", "ilogb",
    "logb", "nextafter", "nexttoward", "copysign", "erf", "erfc", "tgamma", "lgamma", "sincos", "abs", "labs",
    "llabs", "div", "ldiv", "lldiv", "nan"};

bool is_math_function(std::string_view name)
{
    if (starts_with(name, "__") &&
        (name.find("_finite") != std::string_view::npos || starts_with(name, "__isnan") ||
         starts_with(name, "__isinf") || starts_with(name, "__finite") || starts_with(name, "__fpclassify") ||
         starts_with(name, "__signbit")))
        return true;
    if (math_functions.count(name)) return true;
    if (!name.empty() && (name.back() == 'f' || name.back() == 'l'))
        return math_functions.count(name.substr(0, name.size() - 1)) > 0;
    return false;
}

// A mangled name in std:: (St, and the abbreviations Sa Sb Ss Si So Sd), __gnu_cxx:: or
// __cxxabiv1::, whatever a template's demangled form starts with (its return type).
bool is_std_mangled(std::string_view raw)
{
    for (std::string_view prefix : {"_ZN", "_ZNK", "_ZTV", "_ZTI", "_ZTS", "_ZTT", "_ZTVN", "_ZTIN", "_ZTSN"})
        if (starts_with(raw, prefix)) {
            const std::string_view rest = raw.substr(prefix.size());
            for (std::string_view ns : {"St", "Sa", "Sb", "Ss", "Si", "So", "Sd", "9__gnu_cxx", "10__cxxabiv1"})
                if (starts_with(rest, ns)) return true;
        }
    return starts_with(raw, "_ZSt");
}

// The C++ library, by demangled name: everything in std::, __gnu_cxx:: and __cxxabiv1:: except
// what opens files or starts threads (below).
bool is_cpp_library(std::string_view demangled)
{
    for (std::string_view prefix : {"vtable for ", "VTT for ", "typeinfo for ", "typeinfo name for ",
                                    "construction vtable for ", "guard variable for "})
        if (starts_with(demangled, prefix)) {
            demangled.remove_prefix(prefix.size());
            // the type information of a built-in type (int, char const*, ...) is the C++ runtime's
            if (demangled.find("::") == std::string_view::npos) return true;
            break;
        }
    if (starts_with(demangled, "std::") || starts_with(demangled, "__gnu_cxx::") ||
        starts_with(demangled, "__cxxabiv1::"))
        return true;
    for (std::string_view op : {"operator new(", "operator new[](", "operator delete(", "operator delete[]("})
        if (starts_with(demangled, op)) return true;
    return false;
}

constexpr std::array<std::string_view, 9> cpp_files = {
    "std::basic_filebuf",  "std::basic_ifstream", "std::basic_ofstream", "std::basic_fstream", "std::__basic_file",
    "std::filesystem::",   "std::__cxx11::basic_filebuf", "std::experimental::filesystem", "std::random_device"};
constexpr std::array<std::string_view, 3> cpp_threads = {"std::thread", "std::jthread", "std::__future_base"};

// The refused classes, by exact C name or prefix.
const std::set<std::string, std::less<>> loads_code_calls = {
    "dlopen", "dlmopen", "__libc_dlopen_mode", "cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion",
    "cudaGetExportTable", "cuGetExportTable", "cuGetProcAddress", "cuGetProcAddress_v2"};
constexpr std::array<std::string_view, 9> loads_code_prefixes = {"cuModule", "cuLibrary", "cudaLibrary", "cuLink",
                                                                 "nvrtc", "nvJitLink", "nvPTXCompiler", "nvFatbin",
                                                                 "cuKernelGet"};
const std::set<std::string, std::less<>> finds_symbols_calls = {
    "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo", "dlerror", "dlclose", "dl_iterate_phdr", "_dl_find_object",
    "__libc_dlsym", "__libc_dlclose", "getauxval", "_r_debug", "_dl_debug_state", "_DYNAMIC", "__ehdr_start",
    "__executable_start", "_etext", "etext", "__etext", "_edata", "edata", "_end", "end", "__data_start",
    "data_start", "__bss_start", "__init_array_start", "__init_array_end", "__fini_array_start",
    "__fini_array_end", "__preinit_array_start", "__preinit_array_end", "_init", "_fini"};
const std::set<std::string, std::less<>> memory_protection_calls = {
    "mprotect", "pkey_mprotect", "pkey_alloc", "pkey_free", "pkey_set", "pkey_get", "mmap", "mmap64", "munmap",
    "mremap", "remap_file_pages", "__mmap", "__mprotect"};
const std::set<std::string, std::less<>> file_calls = {
    "open", "open64", "openat", "openat64", "creat", "creat64", "__open_2", "__open64_2", "__openat_2",
    "__openat64_2", "fopen", "fopen64", "freopen", "freopen64", "fdopen", "tmpfile", "tmpfile64", "opendir",
    "fdopendir", "readdir", "readdir64", "scandir", "closedir", "socket", "socketpair", "connect", "bind", "listen",
    "accept", "accept4", "getsockopt", "setsockopt", "getpeername", "getsockname", "shutdown", "pipe", "pipe2",
    "dup", "dup2", "dup3", "ioctl", "fcntl", "fcntl64", "read", "write", "pread", "pwrite", "pread64", "pwrite64",
    "readv", "writev", "preadv", "pwritev", "send", "sendto", "sendmsg", "sendmmsg", "recv", "recvfrom",
    "recvmsg", "recvmmsg", "close", "close_range", "lseek", "lseek64", "fread", "fgets", "fgetc", "getc",
    "fscanf", "__isoc99_fscanf", "__isoc23_fscanf", "getline", "getdelim", "fclose", "fseek", "ftell", "rewind",
    "stat", "stat64", "lstat", "lstat64", "fstat", "fstat64", "fstatat", "statx", "__xstat", "__lxstat",
    "__fxstat", "access", "faccessat", "readlink", "readlinkat", "realpath", "symlink", "symlinkat", "link",
    "linkat", "unlink", "unlinkat", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir", "remove",
    "chdir", "fchdir", "getcwd", "chmod", "fchmod", "chown", "fchown", "lchown", "truncate", "ftruncate",
    "fsync", "fdatasync", "sync", "fallocate", "posix_fallocate", "memfd_create", "shm_open", "shm_unlink",
    "shmget", "shmat", "shmdt", "shmctl", "mkfifo", "mknod", "mkstemp", "mkstemp64", "mkdtemp", "eventfd",
    "signalfd", "timerfd_create", "inotify_init", "inotify_init1", "inotify_add_watch", "epoll_create",
    "epoll_create1", "epoll_ctl", "epoll_wait", "poll", "ppoll", "select", "pselect", "splice", "sendfile",
    "sendfile64", "tee", "vmsplice", "copy_file_range", "getdents", "getdents64", "mount", "umount", "chroot",
    "io_uring_setup", "io_uring_enter", "userfaultfd", "perf_event_open", "bpf", "__read_chk", "__pread_chk",
    "__fread_chk", "__fgets_chk", "__readlink_chk", "__getcwd_chk", "__realpath_chk"};
const std::set<std::string, std::less<>> process_calls = {
    "fork", "vfork", "_Fork", "__fork", "clone", "clone3", "__clone", "execv", "execve", "execvp", "execvpe",
    "execl", "execlp", "execle", "fexecve", "execveat", "system", "popen", "pclose", "posix_spawn", "posix_spawnp",
    "pthread_create", "thrd_create", "kill", "killpg", "tgkill", "tkill", "sigqueue", "ptrace", "process_vm_readv",
    "process_vm_writev", "pidfd_open", "pidfd_send_signal", "pidfd_getfd", "waitpid", "wait", "wait3", "wait4",
    "waitid", "setsid", "setpgid", "unshare", "setns", "daemon"};
const std::set<std::string, std::less<>> raw_system_calls = {"syscall", "__syscall", "syscall6"};
// Code that runs outside the launcher's calls, when the kernel or a timer says so: a signal handler
// runs after a batch and before the grader stops the runner, and queues copies the idle windows
// beside a slow batch count as the machine's (red team 15, floods_link_into_idle_windows), or fills
// the reference's turns. No launcher needs one.
const std::set<std::string, std::less<>> asynchronous_code_calls = {
    "sigaction", "__sigaction", "__libc_sigaction", "signal", "sigset", "bsd_signal", "sysv_signal", "__sysv_signal",
    "ssignal", "sigvec", "setitimer", "alarm", "ualarm", "timer_create", "timer_settime"};

struct Verdict {
    HostCallKind kind;
    std::string reason;  // the message after "calls `name`, "
};

Verdict verdict_of(std::string_view raw, std::string_view demangled)
{
    using K = HostCallKind;
    // Refused classes first, so that a prefix of the allowlist (cudaGet...) never covers a loader.
    if (loads_code_calls.count(raw) || starts_with_any(raw, loads_code_prefixes))
        return {K::loads_code,
                "which loads or compiles code at run time: every kernel and function must be compiled from the "
                "submitted file"};
    if (finds_symbols_calls.count(raw))
        return {K::finds_symbols,
                "which looks up functions or the program's own image by hand at run time: call functions by name "
                "in the source"};
    if (memory_protection_calls.count(raw) || starts_with(raw, "pkey_"))
        return {K::protects_memory,
                "which maps memory or changes its protection: allocate with cudaMalloc, new or std::vector"};
    if (file_calls.count(raw) || qualified_by_any(demangled, cpp_files))
        return {K::opens_files,
                "which opens or uses a file or a file descriptor: a launcher works only on its arguments (print "
                "with printf or std::cout)"};
    if (process_calls.count(raw) || starts_with(raw, "exec") || starts_with(raw, "posix_spawn") ||
        starts_with(raw, "pthread_attr") || qualified_by_any(demangled, cpp_threads))
        return {K::starts_threads,
                "which starts or signals a thread or a process: a launcher runs on the thread that calls it"};
    if (raw_system_calls.count(raw)) return {K::raw_system_call, "which makes a system call directly"};
    if (asynchronous_code_calls.count(raw))
        return {K::starts_threads,
                "which installs a signal handler or a timer, code that runs outside the launcher's own calls: a "
                "launcher runs only while it is called"};

    if (nvcc_generated.count(raw) || cuda_runtime_calls.count(raw) || starts_with_any(raw, cuda_runtime_prefixes))
        return {K::allowed, {}};
    if (c_library_calls.count(raw) || starts_with_any(raw, pthread_sync_prefixes) || starts_with(raw, "__cxa_") ||
        is_math_function(raw) || is_cpp_library(demangled) || is_std_mangled(raw))
        return {K::allowed, {}};
    return {K::unknown, "which is not among the calls of honest launchers (named for course staff, not refused)"};
}

// A demangled name as a message shows it: without its parameter list when that is long
// ("std::thread::_M_start_thread(std::unique_ptr<...>, void (*)())" -> "std::thread::_M_start_thread").
std::string short_name(const std::string& demangled)
{
    if (demangled.size() <= 48) return demangled;
    int depth = 0;
    for (std::size_t k = 0; k < demangled.size(); ++k) {
        const char c = demangled[k];
        if (c == '<') ++depth;
        if (c == '>') --depth;
        if (c == '(' && depth == 0 && k > 0 && demangled.compare(0, 8, "operator") != 0) return demangled.substr(0, k);
    }
    return demangled;
}

}  // namespace

HostCallKind classify_host_call(const std::string& name)
{
    const std::string raw = detail::unversioned_name(name);
    return verdict_of(raw, detail::demangled_name(raw)).kind;
}

const char* to_text(HostCallKind kind)
{
    switch (kind) {
        case HostCallKind::allowed: return "allowed";
        case HostCallKind::loads_code: return "loads code at run time";
        case HostCallKind::finds_symbols: return "looks up functions by hand";
        case HostCallKind::protects_memory: return "maps or protects memory";
        case HostCallKind::opens_files: return "opens files or descriptors";
        case HostCallKind::starts_threads: return "starts threads or processes";
        case HostCallKind::raw_system_call: return "makes raw system calls";
        case HostCallKind::grader_internal: return "uses the grader's runner";
        case HostCallKind::unknown: return "not on the list of honest calls";
    }
    return "?";
}

HostCallCheck check_host_calls(const std::vector<Symbol>& submission, const ForbiddenSymbols& forbidden,
                               bool reads_a_library)
{
    HostCallCheck check;
    std::set<std::string> seen;
    for (const auto& s : submission) {
        if (!detail::is_reference(s.type)) continue;
        const std::string raw = detail::unversioned_name(s.name);
        if (raw.empty() || !seen.insert(raw).second) continue;
        const std::string shown = detail::demangled_name(raw);
        Verdict v = verdict_of(raw, shown);
        // CUB's and Thrust's headers may open the driver with the dynamic loader themselves: such a
        // file is library use, which the rubric prices; its loader calls are named, not refused.
        if (reads_a_library && (v.kind == HostCallKind::loads_code || v.kind == HostCallKind::finds_symbols) &&
            (starts_with(raw, "dl") || raw == "cudaGetDriverEntryPoint" || raw == "cudaGetDriverEntryPointByVersion"))
            v = {HostCallKind::unknown, "which the library the file reads calls (named for course staff)"};
        // The grader's own code, which no submission has reason to reach (the libraries' symbols
        // the runner also carries are allowed above).
        if (v.kind == HostCallKind::unknown && !reads_a_library) {
            const auto defined = forbidden.defined.find(raw);
            if (defined != forbidden.defined.end() && defined->second.owner == "the grader's runner")
                v = {HostCallKind::grader_internal,
                     "which belongs to the grader's runner: a submission uses only its own code and the libraries"};
        }
        if (v.kind == HostCallKind::allowed) continue;
        HostCall call{raw, shown, v.kind, "calls `" + short_name(shown) + "`, " + v.reason};
        (v.kind == HostCallKind::unknown ? check.named : check.refused).push_back(std::move(call));
    }
    return check;
}

std::string loads_code_at_run_time(const std::vector<Symbol>& submission, bool reads_a_library)
{
    for (const auto& call : check_host_calls(submission, ForbiddenSymbols{}, reads_a_library).refused)
        if (call.kind == HostCallKind::loads_code || call.kind == HostCallKind::finds_symbols) return call.message;
    return {};
}

}  // namespace grading
