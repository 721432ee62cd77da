# Sourced by scripts/check_aarch64.sh and `scripts/check_wheel.sh --target aarch64`: the aarch64
# cross toolchain, from Debian's archive (its multiarch part for the arm64 standard library).
#
# Rust for aarch64 is Debian's `rustc-web` compiler (/usr/bin/rustc, /usr/bin/cargo from
# `cargo-web`, clippy from `rust-web-clippy`) with `libstd-rust-web-dev:arm64`, the standard library built for aarch64 by the
# same compiler; rustup's toolchain on this machine has no aarch64 standard library and no
# network to fetch one. C code and the final link use `gcc-aarch64-linux-gnu` (with the cross
# sysroot of `libc6-dev-arm64-cross`); the binaries run under `qemu-user-static` with the
# multiarch C library, `libc6:arm64` (/lib/ld-linux-aarch64.so.1, /lib/aarch64-linux-gnu). Not
# with `qemu -L /usr/aarch64-linux-gnu`: that takes the cross sysroot's ld.so, which then loads
# the multiarch libc.so.6 of another build, and the first pthread_create spins forever.
#
# aarch64_setup installs what is missing (root: it runs dpkg and apt-get), exports RUSTC and
# RUSTDOC (Debian's) and sets AARCH64_CARGO, AARCH64_LINKER and AARCH64_RUNNER. It does not
# export the linker: maturin --zig links with zig (glibc 2.28 symbols), and cargo would take an
# exported CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER over it.

AARCH64_TRIPLE=aarch64-unknown-linux-gnu

aarch64_setup() {
  local packages=(rustc-web cargo-web rust-web-clippy libstd-rust-web-dev:arm64
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libc6:arm64 libgcc-s1:arm64)
  local missing=() p
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
      echo "aarch64: installing ${missing[*]} needs root (dpkg, apt-get)" >&2
      return 1
    fi
    echo "== apt-get install ${missing[*]}"
    dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
  # The arm64 standard library must come from the very compiler that links against it.
  local rustc_v std_v
  rustc_v=$(dpkg-query -W -f='${Version}' rustc-web)
  std_v=$(dpkg-query -W -f='${Version}' libstd-rust-web-dev:arm64)
  if [ "$rustc_v" != "$std_v" ]; then
    echo "aarch64: rustc-web $rustc_v but libstd-rust-web-dev:arm64 $std_v; apt-get install both at one version" >&2
    return 1
  fi
  export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
  AARCH64_CARGO=/usr/bin/cargo
  AARCH64_LINKER=aarch64-linux-gnu-gcc
  AARCH64_RUNNER=qemu-aarch64-static
  echo "aarch64: $("$RUSTC" --version), $("$AARCH64_CARGO" --version), $(qemu-aarch64-static --version | head -n 1)"
}

# aarch64_python DIR: an aarch64 CPython that runs under qemu-user, for importing the aarch64
# wheel's module (scripts/check_wheel.sh --target aarch64). Debian's python3.11 for arm64 cannot
# be installed beside the amd64 one (it is not Multi-Arch: same), so its packages are downloaded
# (`apt-get download`, from the configured Debian archive) and unpacked into DIR, with the
# libraries it loads that the arm64 multiarch set does not have; the C library is libc6:arm64's
# (aarch64_setup). Sets AARCH64_PYTHON to the command that runs it (an array: env, qemu, python).
aarch64_python() {
  local dir="$1" version=3.11
  local packages=("python$version-minimal:arm64" "libpython$version-minimal:arm64"
    "libpython$version-stdlib:arm64" libexpat1:arm64 libffi8:arm64 zlib1g:arm64)
  if [ ! -x "$dir/root/usr/bin/python$version" ]; then
    mkdir -p "$dir/debs"
    (cd "$dir/debs" && apt-get download "${packages[@]}") || return 1
    local deb
    for deb in "$dir"/debs/*.deb; do dpkg -x "$deb" "$dir/root"; done
  fi
  AARCH64_PYTHON=(env "PYTHONHOME=$dir/root/usr"
    "LD_LIBRARY_PATH=$dir/root/lib/aarch64-linux-gnu:$dir/root/usr/lib/aarch64-linux-gnu"
    qemu-aarch64-static "$dir/root/usr/bin/python$version")
  echo "aarch64 CPython: $("${AARCH64_PYTHON[@]}" -c 'import platform, sys; print(sys.version.split()[0], platform.machine())')"
}
