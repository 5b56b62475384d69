; gcm_vaes512.asm - AES-GCM kernels with VAES + VPCLMULQDQ on zmm (_vaes512).
;
; Math. GHASH runs as POLYVAL on byte-reversed blocks (RFC 8452 appendix A,
; see src/gcm/gcm_internal.h): with Y' = bswap(Y) and X' = bswap(X),
;     Y' <- dot(Y' ^ X', H'),   dot(a, b) = a * b * x^-128 mod
;     P = x^128 + x^127 + x^126 + x^121 + 1.
; n <= 36 blocks are aggregated:
;     Y' <- dot(Y' ^ X'_0, H'^n) ^ dot(X'_1, H'^(n-1)) ^ ... ^ dot(X'_{n-1}, H'^1)
; with the products summed unreduced and reduced once. The main loops and
; the one-shot tails use Karatsuba (3 carry-less products per block: lo, hi
; and (lo ^ hi)(Hlo ^ Hhi), the middle sum corrected by ^ lo ^ hi at the
; end, with htabk holding Hlo ^ Hhi; in the loops two zmm at a time, paired
; with vpternlogq); the streaming tails use 4 (lo, hi, two middle). The
; reduction (per 128-bit lane, then the lanes summed) is two Montgomery
; folds:
;     fold(t) = swap64(t) ^ clmul(t.lo, 0xC200000000000000),
;     result  = hi ^ fold(fold(lo)).
; AES-CTR: the counter block is kept byte-reversed, so that its 32-bit
; big-endian counter is dword 0 of each 128-bit lane; vpaddd then wraps it
; modulo 2^32 exactly as GCM requires.
;
; Shape. The main loops do 32 blocks (8 zmm, 512 bytes) per iteration: 8
; independent AES streams hide the vaesenc latency, and the GHASH of 32
; blocks (encryption: the previous 32 ciphertext blocks, read back from the
; output; decryption: the current input) is interleaved with the AES rounds,
; with one reduction per iteration. The last AES round takes (last key ^
; input), so the keystream XOR is free. The one-shot loop (12-byte IV: the
; counter is public) makes its counter blocks with one byte reversal per 32
; blocks while byte 15 cannot carry (CTR8_ANY); the streaming entry points
; serve any IV, whose counter may come from GHASH_H(IV) and be secret, so
; they never branch on it (CTR8; measured: within 1% at 16 KiB).
; Streaming tails (< 512 bytes) run one zmm (4 blocks) at a time with byte
; masks (AVX512BW) for the partial block.
; The one-shot entry points (12-byte IV) run the last 1..512 bytes (all of
; a short message) through CORE, one unrolled variant per zmm count m = 0..8
; (a public branch on the length picks it): every counter block and J0 go
; through the AES rounds together, round-major, the rounds keyed from
; memory (rk512, right-aligned so that one unrolled sequence serves every
; key size); the GHASH of those blocks and of the length block (in the lane
; after the last data block when there is one) is aggregated under one
; reduction, with the AAD products too for short messages (data <= 512
; bytes, ceil(aad/16) + ceil(len/16) + 1 <= 36). Decryption interleaves that
; GHASH with the rounds; encryption after the main loop interleaves the
; GHASH of the last 32 ciphertext blocks instead. Longer messages hash the
; AAD first, then run the main loop while more than 512 bytes remain.
;
; Key object offsets (struct mbc_gcm_key in gcm_internal.h):
;     0    the type tag (struct mbc_key_tag, 8 bytes; not read here)
;     16   round keys, 16 bytes each
;     256  htab[i] = H'^(36 - i), i = 0..35, then 4 zero blocks (HTAB below
;          is the entry of H'^32)
;     912  rounds (uint32: 10, 12, 14)
;     1024 rk512: the round keys right-aligned, each repeated 4 times (64
;          bytes per slot; slot 14 - rounds + r = round key r)
;     1984 htabk[i]: qword 0 = lo ^ hi of htab[i], qword 1 = 0 (Karatsuba)
;
; C prototypes (System V AMD64):
;   void mbc_gcm_ghash_vaes512(const struct mbc_gcm_key *key, uint8_t xi[16],
;                              const uint8_t *in, size_t len);
;   void mbc_gcm_enc_vaes512(const struct mbc_gcm_key *key, uint8_t ctr[16],
;                            uint8_t xi[16], const uint8_t *in, uint8_t *out,
;                            size_t len);
;   void mbc_gcm_dec_vaes512(same as enc);
;   mbc_err mbc_gcm_seal12_vaes512(const struct mbc_gcm_key *key,
;       uint8_t *out, uint8_t *tag, size_t tag_len, const uint8_t *iv,
;       size_t iv_len, const uint8_t *aad, size_t aad_len, const uint8_t *in,
;       size_t in_len);
;   mbc_err mbc_gcm_open12_vaes512(same, const uint8_t *tag).
; Semantics as struct mbc_gcm_impl (gcm_seal12_fn, gcm_open12_fn). Needs
; AVX512F/BW/VL, VAES, VPCLMULQDQ, BMI2.
;
; Register use: arguments rdi, rsi, rdx, rcx, r8, r9 (and 4 on the stack for
; seal12/open12); scratch rax, rcx, rdx, rsi, rdi (open12 on a failed tag:
; rep stosb), r8, r9, r10, r11, k1-k3. No callee-saved GPR is touched. Stack:
; seal12/open12 store their register arguments in the 32 bytes of the red
; zone below the return address (pointers and lengths, no secret). Vector:
; main loops: zmm0-7 AES states, zmm8 GHASH accumulator Y', zmm9 counters,
; zmm10-12 GHASH lo/hi/mid sums, zmm13-14 temporaries, zmm15 byte-reversed
; GHASH input, zmm16-30 round keys (broadcast; AES-256: round key 1 from
; memory and zmm17 a GHASH temporary, else zmm30 is), zmm31 byte-reverse
; mask; one-shot tails: see TAIL_PREP. On return every vector register the
; call wrote and k1-k3 are zeroed (zero idioms: vzeroall would not reach
; zmm16-31; short one-shot messages clear the registers they used, every
; other path zmm0-31), then vzeroupper; so no key, keystream, hash value or
; data is left in a register (tests/test_gcm_abi.c checks this and the
; callee-saved registers).

default rel

; RK: the round keys; HTAB and HTABK point at the entries of H'^32 (the
; table starts 4 entries earlier, with H'^36); RK512 at the right-aligned
; round keys.
%define RK 16
%define HTAB (256 + 64)
%define ROUNDS 912
%define RK512 1024
%define HTABK (1984 + 64)
%define NPOW 36
; KEYREG_MIN: from this zmm count on, CORE loads each round key once into
; zmm25 (below it, memory operands: fewer instructions)
%define KEYREG_MIN 4

; GT: the extra GHASH temporary of GHK2; K1MEM: round key 1 is taken from
; memory (rk512/rk) instead of zmm17. SET_GT nr picks them: AES-256 needs
; zmm16-30 for keys, so there GT is zmm17 and key 1 comes from memory.
%define GT zmm30
%define K1MEM 0

%macro SET_GT 1
%if %1 == 14
%define GT zmm17
%define K1MEM 1
%else
%define GT zmm30
%define K1MEM 0
%endif
%endmacro

; The one-shot arguments, at rsi = rsp - 32 once ONESHOT_ENTRY has put the
; register arguments below the return address (red zone); the stack
; arguments follow it.
%define OS_OUT 0
%define OS_TAG 8
%define OS_TAG_LEN 16
%define OS_IV 24
%define OS_AAD 40
%define OS_AAD_LEN 48
%define OS_IN 56
%define OS_LEN 64

section .rodata align=64
BSWAP:   db 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0
J0ONE:   dq 0, 0x0100000000000000
align 64
ADD0123: dq 0, 0, 1, 0, 2, 0, 3, 0
ADD1234: dq 1, 0, 2, 0, 3, 0, 4, 0
INC4:    dq 4, 0, 4, 0, 4, 0, 4, 0
INC32:   dq 32, 0, 32, 0, 32, 0, 32, 0
; ADDK + 64 * (k - 1) (k = 1..7): 4k added to the counter dword of each lane
%assign j 1
ADDK:
%rep 7
    times 4 dq 4 * j, 0
%assign j j + 1
%endrep
POLY4:   times 4 dq 1, 0xC200000000000000
; MASKTAB: the masks of TAIL_PREP. MASKTAB + 8 (q - 1), q = 1..64: the q
; low bits (k1: the input bytes of a last zmm holding q bytes); MASKTAB +
; 512 + 8 (q - 1): the same bytes once each block is byte-reversed (k3: the
; whole blocks, then the last q % 16 bytes of the partial one); MASKTAB +
; 1024 + 2 (n % 4): the qwords of lane n % 4, none for 0 (k2).
align 64
MASKTAB:
%assign q 1
%rep 64
%if q == 64
    dq -1
%else
    dq (1 << q) - 1
%endif
%assign q q + 1
%endrep
%assign q 1
%rep 64
%assign f q >> 4
%assign r q & 15
%if f == 4
    dq -1
%elif r == 0
    dq (1 << (16 * f)) - 1
%else
    dq ((1 << (16 * f)) - 1) | (((0xFFFF << (16 - r)) & 0xFFFF) << (16 * f))
%endif
%assign q q + 1
%endrep
    dw 0, 0x0C, 0x30, 0xC0
; BEINC + 64 * j (j = 1..7): 4j added to byte 15 of each big-endian block
%assign j 1
BEINC:
%rep 7
    times 4 dq 0, (4 * j) << 56
%assign j j + 1
%endrep

section .text

; ---------------------------------------------------------------- GHASH

; GH_NEXT data, hmem: accumulates data * hmem into zmm10/11/12.
%macro GH_NEXT 2
    vpclmulqdq  zmm13, %1, %2, 0x00
    vpclmulqdq  zmm14, %1, %2, 0x11
    vpxorq      zmm10, zmm10, zmm13
    vpxorq      zmm11, zmm11, zmm14
    vpclmulqdq  zmm13, %1, %2, 0x01
    vpclmulqdq  zmm14, %1, %2, 0x10
    vpternlogq  zmm12, zmm13, zmm14, 0x96
%endmacro

; GHK_REG data, hptr: Karatsuba products of the zmm data with the htab
; entries at hptr (and htabk at the same index) into the sums.
%macro GHK_REG 2
    vpshufd     zmm14, %1, 0x4E
    vpxorq      zmm14, zmm14, %1
    vpclmulqdq  zmm13, %1, [%2], 0x00
    vpxorq      zmm10, zmm10, zmm13
    vpclmulqdq  zmm13, %1, [%2], 0x11
    vpxorq      zmm11, zmm11, zmm13
    vpclmulqdq  zmm13, zmm14, [%2 + HTABK - HTAB], 0x00
    vpxorq      zmm12, zmm12, zmm13
%endmacro

; GHK2 init, srcA, jA, srcB, jB, yB: two zmm of blocks (A, B) with
; Karatsuba, their products paired with vpternlogq; init: A starts the sums;
; yB: Y' is folded into B.
%macro GHK2 6
    vmovdqu64   zmm15, %2
    vmovdqu64   zmm14, %4
    vpshufb     zmm15, zmm15, zmm31
    vpshufb     zmm14, zmm14, zmm31
%if %6
    vpxorq      zmm14, zmm14, zmm8
%endif
%if %1
    vpclmulqdq  zmm10, zmm15, [rdi + HTAB + 64 * %3], 0x00
    vpclmulqdq  GT, zmm14, [rdi + HTAB + 64 * %5], 0x00
    vpxorq      zmm10, zmm10, GT
    vpclmulqdq  zmm11, zmm15, [rdi + HTAB + 64 * %3], 0x11
    vpclmulqdq  GT, zmm14, [rdi + HTAB + 64 * %5], 0x11
    vpxorq      zmm11, zmm11, GT
%else
    vpclmulqdq  zmm13, zmm15, [rdi + HTAB + 64 * %3], 0x00
    vpclmulqdq  GT, zmm14, [rdi + HTAB + 64 * %5], 0x00
    vpternlogq  zmm10, zmm13, GT, 0x96
    vpclmulqdq  zmm13, zmm15, [rdi + HTAB + 64 * %3], 0x11
    vpclmulqdq  GT, zmm14, [rdi + HTAB + 64 * %5], 0x11
    vpternlogq  zmm11, zmm13, GT, 0x96
%endif
    vpshufd     zmm13, zmm15, 0x4E
    vpxorq      zmm15, zmm15, zmm13
    vpshufd     zmm13, zmm14, 0x4E
    vpxorq      zmm14, zmm14, zmm13
%if %1
    vpclmulqdq  zmm12, zmm15, [rdi + HTABK + 64 * %3], 0x00
    vpclmulqdq  GT, zmm14, [rdi + HTABK + 64 * %5], 0x00
    vpxorq      zmm12, zmm12, GT
%else
    vpclmulqdq  zmm13, zmm15, [rdi + HTABK + 64 * %3], 0x00
    vpclmulqdq  GT, zmm14, [rdi + HTABK + 64 * %5], 0x00
    vpternlogq  zmm12, zmm13, GT, 0x96
%endif
%endmacro

; GH_KFIX: Karatsuba middle sum -> true middle sum (^ lo ^ hi).
%macro GH_KFIX 0
    vpternlogq  zmm12, zmm10, zmm11, 0x96
%endmacro

; GH_ZRED_A/B: xmm8 = the reduced sum: the middle products are split into
; lo/hi, each of the 4 lanes is reduced on its own (the reduction is linear:
; fewer instructions than summing the lanes first), then the 4 reduced
; lanes are summed.
%macro GH_ZRED_A 0
    vpslldq     zmm13, zmm12, 8
    vpsrldq     zmm12, zmm12, 8
    vpxorq      zmm10, zmm10, zmm13
    vpxorq      zmm11, zmm11, zmm12
    vpclmulqdq  zmm13, zmm10, [POLY4], 0x10
    vpshufd     zmm10, zmm10, 0x4E
    vpxorq      zmm10, zmm10, zmm13
%endmacro

%macro GH_ZRED_B 0
    vpclmulqdq  zmm13, zmm10, [POLY4], 0x10
    vpshufd     zmm10, zmm10, 0x4E
    vpternlogq  zmm10, zmm13, zmm11, 0x96
    vextracti64x4 ymm13, zmm10, 1
    vpxorq      ymm10, ymm10, ymm13
    vextracti32x4 xmm13, ymm10, 1
    vpxorq      xmm8, xmm10, xmm13
%endmacro

%macro GH_REDUCE 0
    GH_ZRED_A
    GH_ZRED_B
%endmacro

; GH32 base: Y' = GHASH of the 32 blocks at base (Y' folded into the first).
%macro GH32 1
    GHK2 1, [%1 + 64], 1, [%1 + 128], 2, 0
    GHK2 0, [%1 + 192], 3, [%1 + 256], 4, 0
    GHK2 0, [%1 + 320], 5, [%1 + 384], 6, 0
    GHK2 0, [%1 + 448], 7, [%1], 0, 1
    GH_KFIX
    GH_REDUCE
%endmacro

; ---------------------------------------------------------------- AES

; LOAD_RK nr: zmm16.. = round keys 0..nr, each broadcast to 4 lanes.
%macro LOAD_RK 1
%assign i 0
%rep %1 + 1
%assign kr 16 + i
    vbroadcasti32x4 zmm %+ kr, [rdi + RK + 16 * i]
%assign i i + 1
%endrep
%endmacro

; CTR8: zmm0-7 = the next 32 counter blocks; zmm9 advances by 32.
%macro CTR8 0
%assign j 0
%rep 8
    vpshufb     zmm %+ j, zmm9, zmm31
    vpaddd      zmm9, zmm9, [INC4]
%assign j j + 1
%endrep
%endmacro

; CTR8_ANY: CTR8, but while the low byte of the first counter is <= 224
; (a branch on the counter: only where it is public, the 12-byte-IV one-shot)
; (no carry out of byte 15 within 32 blocks, 7 iterations in 8) the blocks
; are made in big-endian form with one byte reversal and seven additions to
; byte 15, which saves seven shuffles and the dependent additions.
%macro CTR8_ANY 0
    vmovd       eax, xmm9
    cmp         al, 224
    ja          %%slow
    vpshufb     zmm0, zmm9, zmm31
%assign j 1
%rep 7
    vpaddd      zmm %+ j, zmm0, [BEINC + 64 * (j - 1)]
%assign j j + 1
%endrep
    vpaddd      zmm9, zmm9, [INC32]
    jmp         %%done
%%slow:
    CTR8
%%done:
%endmacro

; ROUND8 r: AES round r on zmm0-7 (r = 0: AddRoundKey).
%macro ROUND8 1
%assign kr 16 + %1
%assign j 0
%rep 8
%if %1 == 0
    vpxorq      zmm %+ j, zmm %+ j, zmm %+ kr
%elif %1 == 1 && K1MEM
    vaesenc     zmm %+ j, zmm %+ j, [rdi + RK512 + 64]
%else
    vaesenc     zmm %+ j, zmm %+ j, zmm %+ kr
%endif
%assign j j + 1
%endrep
%endmacro

; LAST8 nr: last round of zmm0-7 with (last key ^ input at rcx), stored at r8.
%macro LAST8 1
%assign kr 16 + %1
%assign j 0
%rep 8
    vpxorq      zmm14, zmm %+ kr, [rcx + 64 * j]
    vaesenclast zmm %+ j, zmm %+ j, zmm14
    vmovdqu64   [r8 + 64 * j], zmm %+ j
%assign j j + 1
%endrep
%endmacro

; AES8_STITCHED nr, src: 32 blocks of AES-CTR interleaved with the GHASH of
; the 32 blocks at src (Y' in xmm8 folded in, result in xmm8).
; The block that carries Y' (block 0) is multiplied last, so that the
; previous iteration's reduction is off the critical path for as long as
; possible.
%macro AES8_STITCHED 2
    ROUND8 0
    ROUND8 1
    ROUND8 2
    GHK2 1, [%2 + 64], 1, [%2 + 128], 2, 0
    ROUND8 3
    ROUND8 4
    GHK2 0, [%2 + 192], 3, [%2 + 256], 4, 0
    ROUND8 5
    ROUND8 6
    GHK2 0, [%2 + 320], 5, [%2 + 384], 6, 0
    ROUND8 7
    ROUND8 8
    GHK2 0, [%2 + 448], 7, [%2], 0, 1
    ROUND8 9
    GH_KFIX
    GH_ZRED_A
%assign r 10
%rep %1 - 10
    ROUND8 r
%assign r r + 1
%endrep
    GH_ZRED_B
    LAST8 %1
%endmacro

; AES8_PLAIN nr: 32 blocks of AES-CTR, no GHASH.
%macro AES8_PLAIN 1
%assign r 0
%rep %1
    ROUND8 r
%assign r r + 1
%endrep
    LAST8 %1
%endmacro

; AES1 nr, reg: all rounds of one zmm.
%macro AES1 2
    vpxorq      %2, %2, zmm16
%assign r 1
%rep %1 - 1
%assign kr 16 + r
%if r == 1 && K1MEM
    vaesenc     %2, %2, [rdi + RK512 + 64]
%else
    vaesenc     %2, %2, zmm %+ kr
%endif
%assign r r + 1
%endrep
%assign kr 16 + %1
    vaesenclast %2, %2, zmm %+ kr
%endmacro

; CLEAR_REGS: zeroes zmm0-31 (zero idioms) and k1-k3.
%macro CLEAR_REGS 0
%assign i 0
%rep 32
    vpxord      zmm %+ i, zmm %+ i, zmm %+ i
%assign i i + 1
%endrep
    kxorw       k1, k1, k1
    kxorw       k2, k2, k2
    kxorw       k3, k3, k3
%endmacro

; ---------------------------------------------------------------- tails

; TAIL_SETUP: for r9 = 0..511 remaining bytes, nb = ceil(r9/16):
; r10 = &htab(H'^nb); sums cleared; zmm2 = Y' (folded into the first block
; hashed).
%macro TAIL_SETUP 0
    lea         rax, [r9 + 15]
    shr         rax, 4
    mov         r10d, 32
    sub         r10, rax
    shl         r10, 4
    lea         r10, [rdi + HTAB + r10]
    vpxorq      zmm10, zmm10, zmm10
    vpxorq      zmm11, zmm11, zmm11
    vpxorq      zmm12, zmm12, zmm12
    vmovdqa64   zmm2, zmm8
%endmacro

; TAIL_MASK: rax = min(r9, 64), k1 = that many low bytes.
%macro TAIL_MASK 0
    mov         eax, 64
    cmp         r9, rax
    cmovb       rax, r9
    mov         r11, -1
    bzhi        r11, r11, rax
    kmovq       k1, r11
%endmacro

; CRYPT_TAIL nr, enc: r9 (> 0) bytes at rcx -> r8, 4 blocks per step, the
; GHASH products summed (reduction left to the caller). TAIL_SETUP first.
%macro CRYPT_TAIL 2
%%loop:
    TAIL_MASK
    vpshufb     zmm0, zmm9, zmm31
    vpaddd      zmm9, zmm9, [INC4]
    AES1 %1, zmm0
    vmovdqu8    zmm1{k1}{z}, [rcx]
    vpxorq      zmm0, zmm0, zmm1
    vmovdqu8    [r8]{k1}, zmm0
%if %2
    vmovdqu8    zmm0{k1}{z}, zmm0
    vpshufb     zmm1, zmm0, zmm31
%else
    vpshufb     zmm1, zmm1, zmm31
%endif
    vpxorq      zmm1, zmm1, zmm2
    vpxorq      zmm2, zmm2, zmm2
    GH_NEXT     zmm1, [r10]
    add         rcx, 64
    add         r8, 64
    add         r10, 64
    sub         r9, rax
    jnz         %%loop
%endmacro

; GHASH_BODY: Y' (xmm8) <- GHASH of r9 bytes at rcx (zero-padded).
%macro GHASH_BODY 0
%%loop:
    cmp         r9, 512
    jb          %%tail
    GH32 rcx
    add         rcx, 512
    sub         r9, 512
    jmp         %%loop
%%tail:
    test        r9, r9
    jz          %%done
    TAIL_SETUP
%%tail_loop:
    TAIL_MASK
    vmovdqu8    zmm1{k1}{z}, [rcx]
    vpshufb     zmm1, zmm1, zmm31
    vpxorq      zmm1, zmm1, zmm2
    vpxorq      zmm2, zmm2, zmm2
    GH_NEXT     zmm1, [r10]
    add         rcx, 64
    add         r10, 64
    sub         r9, rax
    jnz         %%tail_loop
    GH_REDUCE
%%done:
%endmacro

; STEP512 ctr, aes...: one 512-byte step of a main loop: the counter blocks
; (ctr: CTR8, or CTR8_ANY where the counter is public), the AES step given by
; the remaining arguments, and the pointers and length advanced.
%macro STEP512 2+
    %1
    %2
    add         rcx, 512
    add         r8, 512
    sub         r9, 512
%endmacro

; CRYPT_BODY nr, enc: CTR + GHASH of r9 bytes rcx -> r8 with the counters
; of zmm9 and Y' in xmm8 (streaming: no length block, no tag).
%macro CRYPT_BODY 2
    cmp         r9, 512
    jb          %%tail
%if %2
    STEP512 CTR8, AES8_PLAIN %1
%%loop:
    cmp         r9, 512
    jb          %%loop_done
    STEP512 CTR8, AES8_STITCHED %1, r8 - 512
    jmp         %%loop
%%loop_done:
    GH32 r8 - 512
%else
%%loop:
    cmp         r9, 512
    jb          %%tail
    STEP512 CTR8, AES8_STITCHED %1, rcx
    jmp         %%loop
%endif
%%tail:
    test        r9, r9
    jz          %%done
    TAIL_SETUP
    CRYPT_TAIL %1, %2
    GH_REDUCE
%%done:
%endmacro

; ---------------------------------------------------------------- one-shot

; The one-shot entry points (12-byte IV) handle the last up to 512 bytes of
; data (all of it for short messages) with CORE: every counter block of the
; remaining data (up to 8 zmm) and J0 run through the AES rounds together,
; round-major; the GHASH of the remaining blocks and of the length block is
; aggregated (with the AAD blocks too, for short messages) under a single
; reduction. The length block sits in the lane after the last data block
; when that lane exists (n % 4 != 0, n = data blocks), else it takes one
; product of its own. AES keys are memory operands from the right-aligned
; rk512, so that one unrolled round sequence serves every key size: AES-256
; enters it at slot 0, AES-192 at slot 2, AES-128 at slot 4.
;
; Register use of TAIL_PREP and CORE: zmm0-7 AES states (then ciphertext),
; zmm8 Y' (folded into the first block), zmm9 counters (byte-reversed, lane l
; = counter + l), zmm10-12 GHASH sums, zmm13-15 temporaries (zmm15: GHK2),
; zmm16-23 input blocks, zmm24 the length block in its lane (or zero),
; zmm25 round key (m >= KEYREG_MIN), zmm26 GHASH input, zmm27 the length
; block in lane 0, zmm28 GT, xmm29 J0 then E(J0), zmm30 temporary, zmm31
; byte reversal; k1 input bytes of the last zmm, k2 the qwords of the length
; block's lane, k3 the bytes of the last zmm's GHASH input (k1 reversed
; within each block).

; TAIL_PREP: for r9 = 0..512 remaining data bytes (n = ceil(r9/16) blocks,
; m = ceil(r9/64) zmm) and rsi = the one-shot arguments (OS_*): rdx = &htab(H'^(n+1)),
; k1, k2, k3, zmm24 and zmm27 as above, eax = m. Uses rax, rdx, r10, r11.
%macro TAIL_PREP 0
    ; length block, byte-reversed: hi = AAD bits, lo = data bits
    mov         rax, [rsi + OS_LEN]
    shl         rax, 3
    mov         r10, [rsi + OS_AAD_LEN]
    shl         r10, 3
    vmovq       xmm13, rax
    vpinsrq     xmm13, xmm13, r10, 1
    vmovdqa64   xmm27, xmm13
    lea         r10, [MASKTAB]
    ; k2 = qwords of lane n % 4 (none when n % 4 == 0), zmm24 = L there
    lea         rdx, [r9 + 15]
    shr         rdx, 4
    mov         eax, edx
    and         eax, 3
    kmovw       k2, [r10 + 1024 + 2 * rax]
    vshufi64x2  zmm24{k2}{z}, zmm27, zmm27, 0
    ; rdx = &H'^(n+1) = HTAB + 16 (31 - n)
    neg         rdx
    shl         rdx, 4
    lea         rdx, [rdi + rdx + HTAB + 16 * 31]
    ; k1, k3 for q = ((r9 - 1) mod 64) + 1 bytes in the last zmm
    lea         eax, [r9 - 1]
    and         eax, 63
    kmovq       k1, [r10 + 8 * rax]
    kmovq       k3, [r10 + 512 + 8 * rax]
    lea         rax, [r9 + 63]
    shr         eax, 6
%endmacro

; CORE_KEYOP insn, m, slot: insn (vpxorq: AddRoundKey; vaesenc: one AES
; round) on zmm0..m-1 and xmm29 with the key of the given rk512 slot: a
; memory operand when m < KEYREG_MIN, else loaded once into zmm25 (a memory
; operand per zmm would make the loads, 2 zmm per cycle, the bottleneck for
; large m). CORE_WHITEN m, slot / CORE_ROUND m, slot name its two uses.
%macro CORE_KEYOP 3
%if %2 < KEYREG_MIN
%assign k 0
%rep %2
    %1          zmm%[k], zmm%[k], [rdi + RK512 + 64 * %3]
%assign k k + 1
%endrep
    %1          xmm29, xmm29, [rdi + RK512 + 64 * %3]
%else
    vmovdqa64   zmm25, [rdi + RK512 + 64 * %3]
%assign k 0
%rep %2
    %1          zmm%[k], zmm%[k], zmm25
%assign k k + 1
%endrep
    %1          xmm29, xmm29, xmm25
%endif
%endmacro

%define CORE_WHITEN CORE_KEYOP vpxorq,
%define CORE_ROUND CORE_KEYOP vaesenc,

; CORE_GH enc, m, k: the Karatsuba products of data zmm k (ciphertext:
; zmm k when encrypting, zmm 16+k when decrypting) with the powers at
; rdx + 64 k, summed into zmm10-12. The last zmm takes the length block
; in its lane (zmm24) and only the bytes of k3; zmm 0 takes Y'.
%macro CORE_GH 3
%if %1
%assign src %3
%else
%assign src 16 + (%3)
%endif
%if %3 == %2 - 1
    vmovdqa64   zmm26, zmm24
    vpshufb     zmm26{k3}, zmm%[src], zmm31
%else
    vpshufb     zmm26, zmm%[src], zmm31
%endif
%if %3 == 0
    vpxorq      zmm26, zmm26, zmm8
%endif
    vpshufd     zmm30, zmm26, 0x4E
    vpxorq      zmm30, zmm30, zmm26
    vpclmulqdq  zmm13, zmm26, [rdx + 64 * (%3)], 0x00
    vpxorq      zmm10, zmm10, zmm13
    vpclmulqdq  zmm13, zmm26, [rdx + 64 * (%3)], 0x11
    vpxorq      zmm11, zmm11, zmm13
    vpclmulqdq  zmm13, zmm30, [rdx + HTABK - HTAB + 64 * (%3)], 0x00
    vpxorq      zmm12, zmm12, zmm13
%endmacro

; CORE enc, m, stitch: CTR of the last r9 bytes (m = ceil(r9/64) zmm) rcx
; -> r8 and E(J0) (xmm29 = J0 in, E(J0) out); GHASH of those blocks and the
; length block into zmm10-12 (which may hold earlier products: the AAD of a
; short message), Y' folded into the first block; one reduction: xmm8 = the
; full tag. stitch (encryption after the main loop): the GHASH of the 32
; ciphertext blocks at r8 - 512 (Y' folded in, reduced to the new Y') runs
; in the AES rounds first. Decryption runs its GHASH in the AES rounds.
%macro CORE 3
%define GT zmm28
    ; counter blocks
%assign k 0
%rep %2
%if k == 0
    vpshufb     zmm0, zmm9, zmm31
%else
    vpaddd      zmm%[k], zmm9, [ADDK + 64 * (k - 1)]
    vpshufb     zmm%[k], zmm%[k], zmm31
%endif
%assign k k + 1
%endrep
    ; input blocks; encryption: ^ last round key (the last round then
    ; gives the ciphertext)
%if %1 && %2 >= KEYREG_MIN
    vmovdqa64   zmm25, [rdi + RK512 + 64 * 14]
%endif
%assign k 0
%rep %2
%assign d 16 + k
%if k == %2 - 1
    vmovdqu8    zmm%[d]{k1}{z}, [rcx + 64 * k]
%else
    vmovdqu64   zmm%[d], [rcx + 64 * k]
%endif
%if %1 && %2 >= KEYREG_MIN
    vpxorq      zmm%[d], zmm%[d], zmm25
%elif %1
    vpxorq      zmm%[d], zmm%[d], [rdi + RK512 + 64 * 14]
%endif
%assign k k + 1
%endrep
    ; AES rounds, entered by key size
    cmp         dword [rdi + ROUNDS], 12
    jb          %%w10
    je          %%w12
    CORE_WHITEN %2, 0
    CORE_ROUND  %2, 1
    CORE_ROUND  %2, 2
    jmp         %%r3
%%w12:
    CORE_WHITEN %2, 2
%%r3:
    CORE_ROUND  %2, 3
    CORE_ROUND  %2, 4
    jmp         %%r5
%%w10:
    CORE_WHITEN %2, 4
%%r5:
%assign s 5
%rep 9
    CORE_ROUND  %2, s
%if %3
%if s == 5
    GHK2 1, [r8 - 512 + 64], 1, [r8 - 512 + 128], 2, 0
%elif s == 7
    GHK2 0, [r8 - 512 + 192], 3, [r8 - 512 + 256], 4, 0
%elif s == 9
    GHK2 0, [r8 - 512 + 320], 5, [r8 - 512 + 384], 6, 0
%elif s == 11
    GHK2 0, [r8 - 512 + 448], 7, [r8 - 512], 0, 1
%elif s == 12
    GH_KFIX
    GH_ZRED_A
%elif s == 13
    GH_ZRED_B
%endif
%elif %1 == 0
%if s - 5 < %2
    CORE_GH 0, %2, s - 5
%endif
%endif
%assign s s + 1
%endrep
    ; last round, store
%if %1 == 0 && %2 >= KEYREG_MIN
    vmovdqa64   zmm25, [rdi + RK512 + 64 * 14]
%endif
%assign k 0
%rep %2
%assign d 16 + k
%if %1
    vaesenclast zmm%[k], zmm%[k], zmm%[d]
%elif %2 >= KEYREG_MIN
    vpxorq      zmm30, zmm%[d], zmm25
    vaesenclast zmm%[k], zmm%[k], zmm30
%else
    vpxorq      zmm30, zmm%[d], [rdi + RK512 + 64 * 14]
    vaesenclast zmm%[k], zmm%[k], zmm30
%endif
%if k == %2 - 1
    vmovdqu8    [r8 + 64 * k]{k1}, zmm%[k]
%else
    vmovdqu64   [r8 + 64 * k], zmm%[k]
%endif
%assign k k + 1
%endrep
    vaesenclast xmm29, xmm29, [rdi + RK512 + 64 * 14]
%if %3
    vpxorq      xmm10, xmm10, xmm10
    vpxorq      xmm11, xmm11, xmm11
    vpxorq      xmm12, xmm12, xmm12
%endif
%if %1
    ; GHASH of the ciphertext; the zmm carrying Y' last
%if %2 > 0
%assign k 1
%rep %2 - 1
    CORE_GH 1, %2, k
%assign k k + 1
%endrep
    CORE_GH 1, %2, 0
%endif
%endif
    ; the length block on its own when no lane was left for it
    kortestw    k2, k2
    jnz         %%no_extra
%if %2 == 0
    vpxorq      zmm27, zmm27, zmm8
%endif
    vpshufd     zmm30, zmm27, 0x4E
    vpxorq      zmm30, zmm30, zmm27
    vpclmulqdq  zmm13, zmm27, [rdx + 64 * %2], 0x00
    vpxorq      zmm10, zmm10, zmm13
    vpclmulqdq  zmm13, zmm27, [rdx + 64 * %2], 0x11
    vpxorq      zmm11, zmm11, zmm13
    vpclmulqdq  zmm13, zmm30, [rdx + HTABK - HTAB + 64 * %2], 0x00
    vpxorq      zmm12, zmm12, zmm13
%%no_extra:
    GH_KFIX
    GH_REDUCE
    ; tag = E(J0) ^ bswap(S')
    vpshufb     xmm8, xmm8, xmm31
    vpxorq      xmm8, xmm8, xmm29
%define GT zmm30
%endmacro

; CLEAR_SHORT m: zeroes what the short path with CORE m wrote: zmm0..m-1
; (and zmm1: FINISH_TAG), zmm8-14, zmm16..16+m-1, zmm24, (25), 26, 27,
; 29-31, k1-k3.
%macro CLEAR_SHORT 1
%assign k 0
%rep 10
%if k < %1 || k == 1 || k >= 8
    vpxord      xmm%[k], xmm%[k], xmm%[k]
%endif
%assign k k + 1
%endrep
%assign k 10
%rep 5
    vpxord      xmm%[k], xmm%[k], xmm%[k]
%assign k k + 1
%endrep
%assign k 16
%rep %1
    vpxord      xmm%[k], xmm%[k], xmm%[k]
%assign k k + 1
%endrep
    vpxord      xmm24, xmm24, xmm24
%if %1 >= KEYREG_MIN
    vpxord      xmm25, xmm25, xmm25
%endif
    vpxord      xmm26, xmm26, xmm26
    vpxord      xmm27, xmm27, xmm27
    vpxord      xmm29, xmm29, xmm29
    vpxord      xmm30, xmm30, xmm30
    vpxord      xmm31, xmm31, xmm31
    kxorw       k1, k1, k1
    kxorw       k2, k2, k2
    kxorw       k3, k3, k3
%endmacro

; CORE_SET enc, stitch, fin: CORE for m = eax (0..8; stitch: 1..8), then
; fin = 0: on to the code after it; fin = 1 (short path): the tag, the
; registers cleared (CLEAR_SHORT), return.
%macro CORE_SET 3
    cmp         eax, 4
    jae         %%hi
    cmp         eax, 2
    jae         %%m23
    test        eax, eax
    jnz         %%m1
    jmp         %%m0
%%m23:
    je          %%m2
    jmp         %%m3
%%hi:
    cmp         eax, 6
    jae         %%hi2
    cmp         eax, 4
    je          %%m4
    jmp         %%m5
%%hi2:
    je          %%m6
    cmp         eax, 8
    jb          %%m7
    jmp         %%m8
%assign mm 0
%rep 9
%%m %+ mm:
%if mm > 0 || %2 == 0
    CORE        %1, mm, %2
%if %3
    FINISH_TAG  %1
    CLEAR_SHORT mm
    vzeroupper
    ret
%else
    jmp         %%out
%endif
%endif
%assign mm mm + 1
%endrep
%%out:
%endmacro

; FINISH_TAG enc: xmm8 is the full tag. Sealing: stored at tag (16 bytes);
; eax = MBC_OK. Opening: compared in constant time with the tag_len bytes at
; tag (masked byte compare; the computed tag is never stored); eax = MBC_OK,
; or MBC_ERR_AUTH (12) with out wiped: only the verdict decides that branch.
%macro FINISH_TAG 1
    mov         rax, [rsi + OS_TAG]
%if %1
    vmovdqu     [rax], xmm8
    xor         eax, eax
%else
    mov         rcx, [rsi + OS_TAG_LEN]
    mov         r11, -1
    bzhi        r11, r11, rcx
    kmovq       k1, r11
    vmovdqu8    xmm1{k1}{z}, [rax]
    vpcmpeqb    k2{k1}, xmm8, xmm1
    kmovq       rdx, k2
    xor         eax, eax
    cmp         rdx, r11
    je          %%ok
    mov         rdi, [rsi + OS_OUT]
    mov         rcx, [rsi + OS_LEN]
    rep stosb
    mov         eax, 12
%%ok:
%endif
%endmacro

; ROUNDS_SWITCH macro: expands macro(nr, ...) for the key's round count.
%macro ROUNDS_SWITCH 1-*
    mov         eax, [rdi + ROUNDS]
    cmp         eax, 12
    jb          %%r10
    je          %%r12
    %1 14, %2
    jmp         %%out
%%r12:
    %1 12, %2
    jmp         %%out
%%r10:
    %1 10, %2
%%out:
%endmacro

; CRYPT_NR nr, enc: enc/dec body for nr rounds (streaming).
%macro CRYPT_NR 2
    SET_GT %1
    LOAD_RK %1
    CRYPT_BODY %1, %2
    SET_GT 0
%endmacro

; CRYPT_ENTRY enc: mbc_gcm_enc/dec_vaes512(key, ctr, xi, in, out, len).
%macro CRYPT_ENTRY 1
    vbroadcasti32x4 zmm31, [BSWAP]
    vmovdqu     xmm8, [rdx]
    vbroadcasti32x4 zmm9, [rsi]
    vpshufb     zmm9, zmm9, zmm31
    vpaddd      zmm9, zmm9, [ADD0123]
    ; ctr += ceil(len / 16), 32-bit big-endian, modulo 2^32
    lea         rax, [r9 + 15]
    shr         rax, 4
    mov         r10d, [rsi + 12]
    bswap       r10d
    add         r10d, eax
    bswap       r10d
    mov         [rsi + 12], r10d
    ROUNDS_SWITCH CRYPT_NR, %1
    vmovdqu     [rdx], xmm8
    CLEAR_REGS
    vzeroupper                  ; zeroing idioms leave the upper state dirty:
                                ; without it the caller's SSE code stalls
    ret
%endmacro

; MAIN_LOOP nr, enc: the 32-block loop of the one-shot general path; leaves
; r9 = 1..512 bytes for CORE (0..512 if r9 <= 512 on entry). Encryption:
; the GHASH of the last 32 blocks is left to CORE (stitch) when the loop ran.
%macro MAIN_LOOP 2
    SET_GT %1
    LOAD_RK %1
%if %2
    cmp         r9, 512
    jbe         %%done
    STEP512 CTR8_ANY, AES8_PLAIN %1
%%loop:
    cmp         r9, 512
    jbe         %%done
    STEP512 CTR8_ANY, AES8_STITCHED %1, r8 - 512
    jmp         %%loop
%else
%%loop:
    cmp         r9, 512
    jb          %%done
    STEP512 CTR8_ANY, AES8_STITCHED %1, rcx
    jmp         %%loop
%endif
%%done:
    SET_GT 0
%endmacro

; J0_SETUP: xmm29 = J0 = IV || 0^31 || 1 (plain loads: a masked load right
; after the previous call's tag store, often in the same cache line, would
; wait for that store to retire).
%macro J0_SETUP 0
    mov         rax, [rsi + OS_IV]
    vmovq       xmm13, [rax]
    vpinsrd     xmm13, xmm13, [rax + 8], 2
    vpord       xmm29, xmm13, [J0ONE]
%endmacro

; ONESHOT_ENTRY enc: mbc_gcm_seal12/open12_vaes512(key, a). Short messages
; (data <= 512 bytes, ceil(aad/16) + ceil(len/16) + 1 <= NPOW): the AAD
; products and CORE under one reduction. Otherwise: the AAD GHASH (reduced),
; the 32-block main loop, then CORE for the rest.
%macro ONESHOT_ENTRY 1
    mov         [rsp - 32], rsi
    mov         [rsp - 24], rdx
    mov         [rsp - 16], rcx
    mov         [rsp - 8], r8
    lea         rsi, [rsp - 32]
    vbroadcasti32x4 zmm31, [BSWAP]
    J0_SETUP
    vpshufb     xmm9, xmm29, xmm31
    vshufi64x2  zmm9, zmm9, zmm9, 0
    vpaddd      zmm9, zmm9, [ADD1234]
    vpxorq      xmm8, xmm8, xmm8
    vpxorq      xmm10, xmm10, xmm10
    vpxorq      xmm11, xmm11, xmm11
    vpxorq      xmm12, xmm12, xmm12
    mov         r9, [rsi + OS_LEN]
    mov         rax, [rsi + OS_AAD_LEN]
    cmp         r9, 512
    ja          %%general
    cmp         rax, 16 * NPOW
    ja          %%general
    lea         r10, [rax + 15]
    shr         r10, 4
    lea         r11, [r9 + 15]
    shr         r11, 4
    lea         r10, [r10 + r11 + 1]
    cmp         r10, NPOW
    ja          %%general
    ; AAD: Karatsuba products with H'^(a+n+1).. (r10 = that htab entry)
    test        rax, rax
    jz          %%data
    shl         r10, 4
    neg         r10
    lea         r10, [rdi + r10 + HTAB + 16 * 32]
    mov         rcx, [rsi + OS_AAD]
%%aad_loop:
    mov         r11d, 64
    cmp         rax, r11
    cmovb       r11, rax
    mov         rdx, -1
    bzhi        rdx, rdx, r11
    kmovq       k1, rdx
    vmovdqu8    zmm26{k1}{z}, [rcx]
    vpshufb     zmm26, zmm26, zmm31
    GHK_REG     zmm26, r10
    add         rcx, 64
    add         r10, 64
    sub         rax, r11
    jnz         %%aad_loop
%%data:
    mov         rcx, [rsi + OS_IN]
    mov         r8, [rsi + OS_OUT]
%%tails:
    TAIL_PREP
    CORE_SET    %1, 0, 1
%%general:
    mov         rcx, [rsi + OS_AAD]
    mov         r9, rax
    GHASH_BODY
    mov         rcx, [rsi + OS_IN]
    mov         r8, [rsi + OS_OUT]
    mov         r9, [rsi + OS_LEN]
    ROUNDS_SWITCH MAIN_LOOP, %1
    J0_SETUP
%if %1
    cmp         qword [rsi + OS_LEN], 512
    ja          %%stitched
%endif
    ; on to the short path's tails, which clear only what they use: clear
    ; the rest here (round keys, AES states; Y', counters and the byte
    ; reversal stay)
%assign k 0
%rep 31
%if k != 8 && k != 9 && k != 29
    vpxord      xmm%[k], xmm%[k], xmm%[k]
%endif
%assign k k + 1
%endrep
    jmp         %%tails
%if %1
%%stitched:
    TAIL_PREP
    CORE_SET    1, 1, 0
    FINISH_TAG  1
    CLEAR_REGS
    vzeroupper
    ret
%endif
%endmacro

global mbc_gcm_enc_vaes512:function hidden
mbc_gcm_enc_vaes512:
    CRYPT_ENTRY 1

global mbc_gcm_dec_vaes512:function hidden
mbc_gcm_dec_vaes512:
    CRYPT_ENTRY 0

global mbc_gcm_seal12_vaes512:function hidden
mbc_gcm_seal12_vaes512:
    ONESHOT_ENTRY 1

global mbc_gcm_open12_vaes512:function hidden
mbc_gcm_open12_vaes512:
    ONESHOT_ENTRY 0

; mbc_gcm_ghash_vaes512(key = rdi, xi = rsi, in = rdx, len = rcx)
global mbc_gcm_ghash_vaes512:function hidden
mbc_gcm_ghash_vaes512:
    vbroadcasti32x4 zmm31, [BSWAP]
    vmovdqu     xmm8, [rsi]
    mov         r9, rcx
    mov         rcx, rdx
    GHASH_BODY
    vmovdqu     [rsi], xmm8
    CLEAR_REGS
    vzeroupper
    ret

section .note.GNU-stack noalloc noexec nowrite progbits
