# Sourced by a device session's script (tools/gpu_session.sh, or a call that runs ctest or grade
# by itself): a GPU machine without some Debian packages (bubblewrap, libcli11-dev, libvalijson-dev)
# gets them from the .debs carried in .debs/ (apt-get download NAME there; git-ignored). They are
# unpacked on every call: a carried .debs replaces the folder the previous call unpacked into.
# CMake finds the headers' package files through CMAKE_PREFIX_PATH; bwrap goes on the PATH where
# there is none.
if ls .debs/*.deb > /dev/null 2>&1; then
  mkdir -p .debs/root && for deb in .debs/*.deb; do dpkg -x "$deb" .debs/root; done
  export CMAKE_PREFIX_PATH="$PWD/.debs/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  if ! command -v bwrap > /dev/null; then
    export PATH="$PWD/.debs/root/usr/bin:$PATH" LD_LIBRARY_PATH="$PWD/.debs/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
export PATH=/usr/local/cuda/bin:$PATH
