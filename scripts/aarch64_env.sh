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
