#!/usr/bin/env bash
# The compiler launcher (C++ and CUDA) of the handout's clean copy (check_handout.sh): an object whose compile
# is the main build's, the same compiler, the same flags and the same preprocessed text (paths
# aside), is the main build's object, copied; any other is compiled. An object is a function of
# those three, so the copy's grader is the one compiling the copy would give, and CI's two cores
# compile the grader once, not twice. What the copy alone proves stays proved: every file a compile
# reads is found in the copy (it is preprocessed there, from the copy's own include paths), and
# the copy's programs link and run.
#   reuse_objects.sh REPOSITORY BUILD_DIR COPY LOG COMPILER ARGS...
# REPOSITORY and BUILD_DIR: the main build's; COPY: the handout's copy (its build tree COPY/build);
# LOG: one line per object, "reused OBJECT" or "compiled OBJECT: why".
set -euo pipefail
repo=$1 build=$2 copy=$3 log=$4
shift 4
compiler=$1
args=("$@")
object="" source=""
for ((k = 0; k + 1 < ${#args[@]}; k++)); do
  case "${args[k]}" in
    -o) object=${args[k + 1]} ;;
    -c) source=${args[k + 1]} ;;
  esac
done
work=""
compile() {
  echo "compiled $object: $1" >> "$log"
  shift
  [ -z "$work" ] || rm -rf "$work"
  exec "$@"
}
# The copy's grader/X is the repository's X; its build tree's grader/X the main build's X (in a
# command, relative to the build tree too).
copy_paths() { sed -e "s#$copy/build/grader/#@BUILD/#g" -e "s#$copy/grader/#@SOURCE/#g" "$@"; }
main_paths() { sed -e "s#$build/#@BUILD/#g" -e "s#$repo/#@SOURCE/#g" "$@"; }

[ -n "$object" ] && [ -n "$source" ] || { echo "compiled ${object:-?}: not a compile" >> "$log"; exec "$@"; }
case "$object" in
  grader/*) main_object=${object#grader/} ;;
  *) compile "not the grader's" "$@" ;;
esac
[ -f "$build/$main_object" ] || compile "the main build has no $main_object" "$@"
main_command=$(ninja -C "$build" -t commands "$main_object" 2> /dev/null | tail -n 1) ||
  compile "the main build does not build $main_object" "$@"
# The main build's command after its compiler (a launcher such as ccache may come before it).
main_flags=${main_command#*"$compiler "}
[ "$main_flags" != "$main_command" ] || compile "the main build compiles $main_object with another compiler" "$@"
words() { tr -s ' ' | sed 's/^ //'; }  # empty variables leave two spaces in a command
[ "$(printf '%s\n' "$main_flags" | main_paths | words)" = "$(printf '%s\n' "${args[*]:1}" | copy_paths | sed 's# grader/# #g' | words)" ] ||
  compile "its flags are not the main build's" "$@"

work=$(mktemp -d)
# A command's flags without its output and depfile: the preprocessor's.
preprocessor_flags() {
  local words=("$@") k
  for ((k = 0; k < ${#words[@]}; k++)); do
    case "${words[k]}" in
      -o | -MT | -MF) k=$((k + 1)) ;;
      -MD | -c) ;;
      *) printf '%s\n' "${words[k]}" ;;
    esac
  done
}
mapfile -t copy_args < <(preprocessor_flags "${args[@]:1}")
read -r -a main_words <<< "$main_flags"
mapfile -t main_args < <(preprocessor_flags "${main_words[@]}")
# The copy's depfile, as its compile would write it. nvcc's -E is its host pass's text, which is
# what ccache compares for nvcc too.
depfile=""
for ((k = 0; k + 1 < ${#args[@]}; k++)); do [ "${args[k]}" != -MF ] || depfile=${args[k + 1]}; done
if [ -n "$depfile" ]; then
  "$compiler" "${copy_args[@]}" -M -MT "$object" -o "$depfile" || compile "the copy's dependencies are not found" "$@"
fi
"$compiler" "${copy_args[@]}" -E -o "$work/copy.i" || compile "the copy does not preprocess" "$@"
(cd "$build" && "$compiler" "${main_args[@]}" -E -o "$work/main.i") || compile "the main build's source does not preprocess" "$@"
cmp -s <(copy_paths "$work/copy.i") <(main_paths "$work/main.i") || compile "its preprocessed text is not the main build's" "$@"
cp "$build/$main_object" "$object"
rm -rf "$work"
echo "reused $object" >> "$log"
