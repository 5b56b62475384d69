/*
 * wipe.h - what an entry point that handled secrets scrubs before it returns
 * (src/wipe.c): its dead stack (the frames of the calls it made) and the
 * registers those calls left secrets in.
 *
 * Why: locals that hold secrets are wiped where they live (mbc_memzero), but
 * the compiler also spills and copies values the source never names (a
 * digit of p in a saved register, a round key in a vector spill slot), and
 * glibc's memcpy/memset leave the bytes they moved in ymm (AVX2) or
 * ymm16-31 (EVEX) registers. Those copies can only be reached from the
 * outside: the entry point wraps its work in a noinline function, then
 * calls mbc_wipe_secrets(bytes), whose frame starts where the work's frame
 * started, so that zeroing its own bytes-long local array zeroes the dead
 * frames of the work; then it zeroes the vector registers and the scratch
 * GPRs and returns (nothing secret runs after it).
 *
 * The sizes are measured, per entry point, by tests/test_wipe.c (the stack
 * bytes the work writes below the entry point's frame, with the scrub off),
 * which checks that each scrub reaches deeper than its work did; they carry
 * a margin of 1.6x or more for other compilers and flags. The hot AES-GCM
 * calls (12-byte IV, aesni or vaes512) scrub no stack: their locals that
 * hold secrets are wiped by name and the test proves nothing else is left;
 * they only clear registers (about 3 ns a call here).
 */
#ifndef MBC_SRC_WIPE_H
#define MBC_SRC_WIPE_H

#include <stddef.h>

/*
 * Stack scrub sizes in bytes, with the deepest write of the work each
 * covers as measured here (x86-64, Zen 3; gcc 12 -O3 / clang 14 -O2):
 *  - mbc_rsa_priv_key_new: 7160 with gcc since the CRT consistency checks
 *    (6696 / 6440 before them; any size; its bignum arrays);
 *  - mbc_rsa_private_crt_mb8 (and everything that calls it): 41400 / 41096
 *    for the 8-lane portable kernels at every size, 24232 for the 2-lane
 *    ones (the wide Montgomery square keeps 17 columns of 8 lanes). The
 *    IFMA kernels could not run here; their static frames (gcc
 *    -fstack-usage: crt_kern 10.4 KB, win_exp 5.5 KB, ams_40 22.8 KB) add up
 *    to the same depth, and the test checks it on an IFMA machine;
 *  - AES-GCM: key creation 1152, one-shot and streaming calls up to 1616
 *    (portable implementation; aesni: 1104 and about 700);
 *  - X25519 (every call goes through the 8-lane call): derive 5808, public
 *    key and keygen 6480 (8-lane portable kernel; 3952 / 4624 for the
 *    1-lane one); on IFMA (gcc 12, run under the Bochs emulator) the zmm
 *    public-key kernel wrote 14240 bytes deep, more than the 12288 scrubbed
 *    before (test_wipe caught it). Without the scrub, digits of the shared
 *    secret stay about 5.3 KB deep. Built at -O2 (debugoptimized, as Debian
 *    builds packages; gcc 12, native IFMA, Xeon family 6 model 207) the zmm
 *    public-key kernel wrote 32680 bytes deep (the release build: 21160,
 *    13872 since);
 *    with the uncarried products of the ladder and the table additions
 *    (whose wider sums gcc keeps on the stack) it wrote 41360 at -O2, past
 *    the 40 KiB scrubbed then (test_wipe of the CI's -O2 build caught it),
 *    so the scrub is 48 KiB, a margin over the deepest build; that build
 *    runs test_wipe to keep it so. A call whose requests all ran on
    the single-request kernels (the 1-lane portable ones, the scalar adx
    ones: 3.8 KB derive, 4.4 KB public key, through the glue) scrubs 12 KiB
    (MBC_WIPE_X25519_ONE), the implementation says when (x25519_kern.h):
    the ymm lone-request kernel of an IFMA build without the scalar tier
    keeps the 48 KiB.
 *  - EC (key creation, signatures, ECDH, key generation, P-256 and P-384):
 *    30304 for the 8-lane portable kernels (the batch plan; their squaring
 *    keeps 2k columns of 8-word lanes), 21432 one by one on the one-lane
 *    ones. The IFMA kernels' static frames (gcc -fstack-usage: fe_inv 8.3 KB,
 *    verify 7.3 KB, sign 4.7 KB, mul_var and the point formulas 3 to 4 KB)
 *    add up to less. A call whose requests all ran on the scalar adx
 *    kernels (ec_adx.c: the lone verifications and ECDHs of the ifma row,
 *    every request of the adx row) scrubs 12 KiB (MBC_WIPE_EC_ONE, the
 *    implementation's one_scrub of the operation, ec_kern.h; the ifma row's
 *    lone keygen and signing run spread and scrub 48 KiB): test_wipe checks the depth at
 *    lanes 0x01 and 0x23. The 48 KiB memset cost about 1.5k of the 31-33k
 *    TSC cycles of a lone P-256 key generation (Xeon family 6 model 167)
 *    and pushed the caller's working set out of the 48 KiB L1.
 */
#define MBC_WIPE_RSA_KEY_NEW 12288
#define MBC_WIPE_RSA_PRIVATE 65536
#define MBC_WIPE_GCM 4096
#define MBC_WIPE_X25519 49152
#define MBC_WIPE_X25519_ONE 12288
#define MBC_WIPE_EC 49152
#define MBC_WIPE_EC_ONE 12288

/*
 * mbc_wipe_secrets: zeroes stack_bytes bytes of stack below its caller's
 * frame (none for 0), then calls mbc_wipe_regs. Call it last, from the
 * entry point itself (not from a function it calls), after the noinline
 * function that did the work has returned.
 */
void mbc_wipe_secrets(size_t stack_bytes);

/*
 * mbc_wipe_regs: zeroes the vector registers as the CPU has them: with
 * AVX-512 zmm0-31 and k0-k7 (vzeroall would leave zmm16-31 and k0-7), with
 * AVX ymm0-15, else xmm0-15; then the scratch GPRs rcx, rdx, rsi, rdi,
 * r8-r11 (rax too). About 20 to 40 zero idioms.
 */
void mbc_wipe_regs(void);

#endif /* MBC_SRC_WIPE_H */
