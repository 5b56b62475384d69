#!/usr/bin/env bash
# tools/emu/run_avx512.sh - runs test binaries on an emulated AVX-512 CPU.
#
#   tools/emu/run_avx512.sh [options] BUILD_DIR CMD [CMD...]
#
# For checking the ifma and vaes512 code paths on a machine without AVX-512
# (for correctness, not speed). Bochs 2.7 (Debian 12) emulates a Tiger Lake
# CPU with AVX512F/DQ/BW/VL, IFMA, VBMI, VAES and VPCLMULQDQ on zmm; QEMU's TCG
# has no AVX-512. The script boots a small Linux kernel under Bochs from an
# isolinux CD image whose initramfs holds a static busybox, the programs named
# by the commands with every shared library ldd lists, the Wycheproof vector
# files they name, and an init script that runs the commands one after the
# other and powers the emulator off. The guest's serial console is streamed
# here as it runs.
#
# Each CMD is one shell command line run by the guest's busybox sh in a copy
# of BUILD_DIR; it may start with VAR=value words, and its program is a path
# relative to BUILD_DIR (or absolute), e.g.
#   tools/emu/run_avx512.sh build tests/test_mb52 \
#       "MBC_TEST_FILTER='*/vaes512' tests/test_gcm" "tests/test_cpu --foo"
# Every command gets CMOCKA_MESSAGE_OUTPUT=TAP, OPENSSL_ia32cap=:0 (OpenSSL's
# baseline code: its leaf-7 code miscomputes under Bochs), LD_BIND_NOW=1
# (the loader's lazy-binding trampoline faulted under Bochs), MBC_TEST_QUICK=1 (iteration
# counts / 16) and MBC_VECTORS_DIR pointing at the copied vectors;
# MBC_TEST_FILTER (a cmocka pattern, tests/test_util.h) picks cases.
# Before the commands, tools/emu/cpuprobe.c runs: it checks CPUID, XCR0 and
# the results of vpmadd52luq/huq, vaesenc and vpclmulqdq on zmm against C, and
# that the library selects ifma (RSA) and vaes512 (GCM); it is a command too.
#
# Exit status: 0 when every command (the probe included) exited 0 and the
# emulator finished; 1 when one failed or crashed, the kernel panicked, the
# emulator stopped early or ran out of time; 2 for a usage error.
#
# Options:
#   --timeout S   wall-clock limit for the emulator, seconds (default 3600)
#   --cpu MODEL   Bochs CPU model (default tigerlake; corei7_icelake_u works too)
#   --ips N       emulated instructions per emulated second (default 10000000:
#                 the guest's timer ticks and the firmware's waits are counted
#                 in these, so it sets overhead, not speed)
#   --no-probe    skip the CPU probe
#   --keep        keep the work directory (bochsrc, bochs.log, serial.log)
#
# First use installs the Debian 12 packages it needs (bochs, bochs-term,
# busybox-static, isolinux, xorriso, and a kernel toolchain) and builds the
# guest kernel once from Debian's linux-source-6.1 with tools/emu/kernel.config
# (a few minutes on 2 cores; nothing is installed as the host's kernel). It is
# kept in $MBC_EMU_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/mbcrypto-emu),
# rebuilt when kernel.config or the source version changes.
# Environment: MBC_VECTORS_DIR (default ../shared/vectors beside the source
# tree), MBC_EMU_CACHE, MBC_JOBS (kernel build jobs, default nproc).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

timeout_s=3600
cpu_model=tigerlake
ips=10000000
probe=1
keep=0
usage() {
    sed -n '3,4p' "${BASH_SOURCE[0]}" | sed 's/^# *//' >&2
    echo "options: --timeout S --cpu MODEL --ips N --no-probe --keep (see the header)" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case "$1" in
    --timeout) timeout_s=${2:?}; shift 2 ;;
    --cpu) cpu_model=${2:?}; shift 2 ;;
    --ips) ips=${2:?}; shift 2 ;;
    --no-probe) probe=0; shift ;;
    --keep) keep=1; shift ;;
    -h | --help) usage ;;
    --*) echo "run_avx512.sh: unknown option $1" >&2; usage ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || usage
build=$(cd "$1" && pwd)
shift
cmds=("$@")

log() { echo "emu: $*" >&2; }
die() { echo "emu: error: $*" >&2; exit 1; }

# ---- packages ---------------------------------------------------------------
packages=(bochs bochsbios vgabios bochs-term busybox-static isolinux syslinux-common xorriso
          build-essential bc flex bison libelf-dev lz4)
install_packages() {
    local missing=() p
    for p in "${packages[@]}"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
            missing+=("$p")
        fi
    done
    [ ${#missing[@]} -eq 0 ] && return
    log "installing: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" != 0 ] && sudo=sudo
    $sudo apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
        "${missing[@]}" >&2
}
install_packages

# ---- guest kernel (built once, cached) ----------------------------------------
cache=${MBC_EMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mbcrypto-emu}
mkdir -p "$cache"
src_pkg=linux-source-6.1
src_ver=$(apt-cache policy "$src_pkg" 2>/dev/null | awk '/Candidate:/ {print $2}')
if [ -z "$src_ver" ] || [ "$src_ver" = "(none)" ]; then
    # apt lists not loaded yet: reuse any cached kernel, else update once.
    src_ver=$(ls -d "$cache"/kernel-*/ 2>/dev/null | tail -1 | sed 's|.*/kernel-\([^-]*\)-.*|\1|')
    if [ -z "$src_ver" ]; then
        apt-get update -q >&2
        src_ver=$(apt-cache policy "$src_pkg" | awk '/Candidate:/ {print $2}')
    fi
fi
cfg_hash=$(grep -E '^(# )?CONFIG_' "$here/kernel.config" | sha256sum | cut -c1-12)
kdir=$cache/kernel-$src_ver-$cfg_hash
build_kernel() {
    local work=$cache/linux-build.$$
    rm -rf "$work"
    mkdir -p "$work"
    log "building the guest kernel from $src_pkg $src_ver (once; kept in $kdir)"
    (cd "$work" && apt-get download "$src_pkg=$src_ver" >&2) ||
        die "apt-get download $src_pkg=$src_ver failed"
    dpkg-deb --fsys-tarfile "$work"/"$src_pkg"_*.deb |
        tar -xO "./usr/src/$src_pkg.tar.xz" | tar -xJ -C "$work"
    local tree=$work/$src_pkg
    make -C "$tree" -s ARCH=x86_64 allnoconfig KCONFIG_ALLCONFIG="$here/kernel.config" >&2
    # Every option the fragment sets must have survived its dependencies.
    local want
    while read -r want; do
        grep -qx "$want" "$tree/.config" || die "kernel option lost: $want"
    done < <(grep -E '^CONFIG_[A-Z0-9_]+=' "$here/kernel.config")
    make -C "$tree" -s ARCH=x86_64 -j "${MBC_JOBS:-$(nproc)}" bzImage >&2
    mkdir -p "$kdir.tmp"
    cp "$tree/arch/x86/boot/bzImage" "$tree/usr/gen_init_cpio" "$tree/.config" "$kdir.tmp/"
    rm -rf "$kdir" && mv "$kdir.tmp" "$kdir"
    rm -rf "$work"
}
[ -f "$kdir/bzImage" ] && [ -x "$kdir/gen_init_cpio" ] || build_kernel

# ---- the image ----------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/mbc-emu.XXXXXX")
bochs_pid=""
cleanup() {
    if [ -n "$bochs_pid" ]; then
        kill -KILL "$bochs_pid" 2>/dev/null || true
    fi
    if [ "$keep" = 1 ]; then
        log "work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

list=$work/initramfs.list # gen_init_cpio's input
declare -A seen_dir=()
add_dir() { # add_dir /a/b/c: every missing parent too
    local d=$1
    [ -z "$d" ] || [ "$d" = / ] || [ -n "${seen_dir[$d]:-}" ] && return
    add_dir "$(dirname "$d")"
    seen_dir[$d]=1
    echo "dir $d 0755 0 0" >> "$list"
}
declare -A seen_file=()
add_file() { # add_file GUEST_PATH HOST_PATH MODE
    [ -n "${seen_file[$1]:-}" ] && return
    seen_file[$1]=1
    add_dir "$(dirname "$1")"
    echo "file $1 $2 $3 0 0" >> "$list"
}
add_program() { # add_program GUEST_PATH HOST_PATH: the program and its libraries
    local lib real
    add_file "$1" "$2" 0755
    # ldd prints "name => /path (addr)" and "/lib64/ld-linux-x86-64.so.2 (addr)".
    while read -r lib; do
        real=$(readlink -f "$lib")
        add_file "$lib" "$real" 0755
    done < <(ldd "$2" 2>/dev/null | grep -o '/[^ ]*' || true)
}

: > "$list"
for d in /bin /dev /proc /sys /tmp /b /vectors/wycheproof; do add_dir "$d"; done # guest paths
echo "nod /dev/console 0600 0 0 c 5 1" >> "$list"
echo "nod /dev/null 0666 0 0 c 1 3" >> "$list"
add_file /bin/busybox /bin/busybox 0755
for a in sh mount cat echo sleep; do echo "slink /bin/$a busybox 0777 0 0" >> "$list"; done

cc_static() { # cc_static OUT SRC [flags...]
    local out=$1 src=$2
    shift 2
    gcc -std=c11 -O2 -Wall -Wextra -Werror -static -o "$out" "$src" "$@"
}
if [ "$probe" = 1 ]; then
    [ -f "$build/libmbcrypto.a" ] || die "$build/libmbcrypto.a missing: build the library first"
    cc_static "$work/cpuprobe" "$here/cpuprobe.c" -I"$top/include" "$build/libmbcrypto.a"
    add_file /bin/cpuprobe "$work/cpuprobe" 0755
    cmds=("cpuprobe" "${cmds[@]}")
fi

vectors=${MBC_VECTORS_DIR:-$top/../shared/vectors}
declare -A want_vec=()
for c in "${cmds[@]}"; do
    read -ra words <<< "$c"
    prog=""
    for w in "${words[@]}"; do
        case "$w" in
        *=*) continue ;;
        *) prog=$w; break ;;
        esac
    done
    [ -n "$prog" ] || die "no program in command: $c"
    [ "$prog" = cpuprobe ] && continue
    case "$prog" in
    /*) host=$prog ;;
    *) host=$build/$prog ;;
    esac
    [ -x "$host" ] || die "not an executable: $host (command: $c)"
    case "$prog" in
    /*) add_program "$prog" "$host" ;;
    *) add_program "/b/$prog" "$host" ;;
    esac
    # The vector files a program opens are named in its strings, whole or
    # by a prefix it scans the directory for (e.g. "ecdsa_secp256r1_").
    while read -r v; do want_vec[$v]=1; done < <(grep -aoE '[a-z0-9_]+_test\.json' "$host" | sort -u)
    while read -r v; do want_vec[$v]=1; done < <(grep -aoE '[a-z0-9_]{12,}' "$host" | sort -u |
        python3 -c '
import os, sys
names = [n for n in os.listdir(sys.argv[1]) if n.endswith("_test.json")]
for p in set(sys.stdin.read().split()):
    for n in names:
        if n.startswith(p) and n != p:
            print(n)' "$vectors/wycheproof" | sort -u)
done
for v in "${!want_vec[@]}"; do
    [ -f "$vectors/wycheproof/$v" ] || die "vector file missing: $vectors/wycheproof/$v"
    add_file "/vectors/wycheproof/$v" "$vectors/wycheproof/$v" 0644
done

# The init script: mounts, then each command between markers the host reads.
init=$work/init
{
    echo '#!/bin/sh'
    echo 'export PATH=/bin HOME=/tmp CMOCKA_MESSAGE_OUTPUT=TAP MBC_TEST_QUICK=1 MBC_VECTORS_DIR=/vectors' # guest paths
    # OpenSSL, the tests' oracle, picks its BMI2/ADX/AVX2 code from CPUID
    # leaf 7, and some of it computes wrong results under Bochs 2.7 (X25519
    # and P-256 did; mbcrypto's ifma and c results agreed with each other).
    # ':0' clears OpenSSL's leaf-7 capability word: its baseline code.
    echo 'export OPENSSL_ia32cap=:0'
    # The dynamic loader resolves symbols lazily through a trampoline that
    # saves the vector state (xsavec); under Bochs that faulted (#GP in
    # ld-linux) when the first call of a symbol came with AVX-512 state in
    # use. Binding everything at start avoids the trampoline.
    echo 'export LD_BIND_NOW=1'
    echo 'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev'
    echo 'mount -t tmpfs tmp /tmp; cd /b' # guest paths
    echo 'echo "@@emu boot $(cat /proc/uptime)"'
    i=0
    for c in "${cmds[@]}"; do
        i=$((i + 1))
        echo "echo \"@@emu begin $i \$(cat /proc/uptime)\""
        echo "( $c ) </dev/null 2>&1"
        echo "echo \"@@emu end $i rc=\$? \$(cat /proc/uptime)\""
    done
    # The host stops the emulator when it reads this line (should it not,
    # init's exit panics the kernel, whose reboot ends Bochs: no triple-fault
    # reset).
    echo 'echo "@@emu done"'
    echo 'while :; do sleep 60; done'
} > "$init"
add_file /init "$init" 0755

"$kdir/gen_init_cpio" "$list" > "$work/initrd.cpio"
iso=$work/iso
mkdir -p "$iso/isolinux"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$iso/isolinux/"
cp "$kdir/bzImage" "$iso/bzImage"
cp "$work/initrd.cpio" "$iso/initrd"
# The kernel command line works around Bochs 2.7's Ice Lake / Tiger Lake
# models; clearcpuid= hides features from the kernel only (user space still
# sees every CPUID bit):
# - 321,323,515 (XSAVEC, XSAVES, PKU): Bochs announces PKRU in CPUID leaf 0xD
#   with size and offset 0 and gives the standard XSAVE size for the compacted
#   format; Linux finds the layout inconsistent and turns XSAVE (so AVX and
#   AVX-512) off. With neither, the standard layout checks out (XCR0 = 0xe7).
# - 514,534,580,528,539,540 (UMIP, RDPID, FSRM, LA57, MOVDIRI, MOVDIR64B) and
#   split_lock_detect=off: without them Linux hangs right after the mount
#   caches are set up on these models (Skylake-X boots either way); which one
#   matters was not narrowed down.
cat > "$iso/isolinux/isolinux.cfg" <<EOF
default linux
prompt 0
timeout 0
label linux
  kernel /bzImage
  initrd /initrd
  append console=ttyS0 quiet clearcpuid=321,323,515,514,534,580,528,539,540 split_lock_detect=off mitigations=off panic=-1 tsc=reliable
EOF
xorriso -as mkisofs -quiet -o "$work/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
    -no-emul-boot -boot-load-size 4 -boot-info-table "$iso" 2>/dev/null
initrd_mb=$(( ($(stat -c %s "$work/initrd.cpio") + 1048575) / 1048576 ))
megs=$(( (initrd_mb * 2 + 160 + 31) / 32 * 32 ))
log "image: initramfs ${initrd_mb} MiB, ${#cmds[@]} commands, guest memory ${megs} MiB, cpu $cpu_model"

# ---- Bochs ----------------------------------------------------------------------
cat > "$work/bochsrc" <<EOF
display_library: term
megs: $megs
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/vgabios/vgabios.bin
vga: extension=none, update_freq=1
cpu: model=$cpu_model, count=1, ips=$ips, reset_on_triple_fault=0
clock: sync=none, time0=local
ata0-master: type=cdrom, path=$work/boot.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$work/serial.log
speaker: enabled=0
sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy
mouse: enabled=0
log: $work/bochs.log
panic: action=fatal
error: action=report
info: action=ignore
debug: action=ignore
EOF
# The Debian build has the internal debugger: "c" starts the run at once.
printf 'c\nquit\n' > "$work/debugger.rc"
: > "$work/serial.log"

start=$(date +%s.%N)
(cd "$work" && exec bochs-bin -q -f bochsrc -rc debugger.rc </dev/null >"$work/bochs.out" 2>&1) &
bochs_pid=$!

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
declare -A rc_of=() t_begin=() up_begin=()
booted="" done_seen=0 panic=0 timed_out=0 pending=""
deadline=$(($(date +%s) + timeout_s))
while true; do
    # A read that times out keeps its partial line in $line: carry it over.
    if IFS= read -r -t 5 line; then r=0; else r=$?; fi
    if [ "$r" != 0 ]; then
        [ "$r" -gt 128 ] || break # end of file: the emulator exited
        pending+=$line
        if [ "$(date +%s)" -ge "$deadline" ] && [ "$timed_out" = 0 ]; then
            timed_out=1 # Bochs ignores SIGTERM
            kill -KILL "$bochs_pid" 2>/dev/null || true
        fi
        continue
    fi
    line=$pending${line%$'\r'}
    pending=""
    case "$line" in
    "@@emu boot "*)
        booted=$(now)
        log "booted in $(secs "$start" "$booted") s (guest uptime ${line#@@emu boot })"
        ;;
    "@@emu begin "*)
        read -r _ _ n up _ <<< "$line"
        t_begin[$n]=$(now)
        up_begin[$n]=$up
        log "[$n] ${cmds[$((n - 1))]}"
        ;;
    "@@emu end "*)
        read -r _ _ n rc up _ <<< "$line"
        rc=${rc#rc=}
        rc_of[$n]=$rc
        log "[$n] exit $rc after $(secs "${t_begin[$n]}" "$(now)") s" \
            "($(secs "${up_begin[$n]}" "$up") s emulated)"
        ;;
    "@@emu done")
        done_seen=1
        kill -KILL "$bochs_pid" 2>/dev/null || true
        ;;
    *"Kernel panic"* | *"Attempted to kill init"*)
        echo "$line"
        panic=1
        kill -KILL "$bochs_pid" 2>/dev/null || true
        ;;
    *)
        echo "$line"
        ;;
    esac
done < <(tail -n +1 -f --pid="$bochs_pid" "$work/serial.log")
bstatus=0
wait "$bochs_pid" || bstatus=$?
bochs_pid=""
log "emulator ran $(secs "$start" "$(now)") s"

status=0
if [ -z "$booted" ]; then
    log "the guest did not boot; end of the emulator's output:"
    tail -5 "$work/bochs.out" >&2
    status=1
fi
if [ "$panic" = 1 ]; then
    log "the guest kernel panicked"
    status=1
fi
i=0
for c in "${cmds[@]}"; do
    i=$((i + 1))
    r=${rc_of[$i]:-}
    if [ -z "$r" ]; then
        log "FAIL [$i] $c: did not finish"
        status=1
    elif [ "$r" != 0 ]; then
        log "FAIL [$i] $c: exit $r"
        status=1
    else
        log "ok   [$i] $c"
    fi
done
if [ "$done_seen" != 1 ] && [ "$status" = 0 ]; then
    status=1
fi
if [ "$timed_out" = 1 ]; then
    log "the emulator was stopped at the time limit (${timeout_s} s)"
    status=1
elif [ "$done_seen" != 1 ] && [ "$panic" = 0 ]; then
    log "the emulator stopped early (status $bstatus); end of its log:"
    grep -v 'RDMSR\|WRMSR' "$work/bochs.log" | tail -5 >&2
fi
exit $status
