; gcm_vaes512.asm - AES-GCM kernels with VAES + VPCLMULQDQ on zmm (_vaes512).
;
; Math. GHASH runs as POLYVAL on byte-reversed blocks (RFC 8452 appendix A,
; see src/gcm/gcm_internal.h): with Y' = bswap(Y) and X' = bswap(X),
;     Y' <- dot(Y' ^ X', H'),   dot(a, b) = a * b * x^-128 mod
;     P = x^128 + x^127 + x^126 + x^121 + 1.
; n <= 32 blocks are aggregated:
;     Y' <- dot(Y' ^ X'_0, H'^n) ^ dot(X'_1, H'^(n-1)) ^ ... ^ dot(X'_{n-1}, H'^1)
; with the products summed unreduced and reduced once. The main loops and
; the short path use Karatsuba (3 carry-less products per block: lo, hi and
; (lo ^ hi)(Hlo ^ Hhi), the middle sum corrected by ^ lo ^ hi at the end,
; with htabk holding Hlo ^ Hhi; in the loops two zmm at a time, paired with
; vpternlogq); the general tails use 4 (lo, hi, two middle). The
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
; input), so the keystream XOR is free. Counter blocks are made with one
; byte reversal per 32 blocks while byte 15 cannot carry (CTR8_ANY). Tails
; (< 512 bytes) run one zmm (4 blocks) at a time with byte masks (AVX512BW)
; for the partial block. The
; one-shot entry points (12-byte IV) also compute E(J0), GHASH the AAD, fold
; the length block into the last aggregated GHASH and write (seal) or check
; (open) the tag. Short one-shot messages (AAD blocks + data blocks + 1 <=
; 32) take a separate path: one reduction for everything, AES keys used as
; memory operands (rk512), E(J0) in xmm4.
;
; Key object offsets (struct mbc_gcm_key in gcm_internal.h):
;     0    round keys, 16 bytes each
;     256  htab[i] = H'^(32 - i), i = 0..31, then 4 zero blocks
;     848  rounds (uint32: 10, 12, 14)
;     960  the round keys again, each repeated 4 times (64 bytes per round)
;     1920 htabk[i]: qword 0 = lo ^ hi of htab[i], qword 1 = 0 (Karatsuba)
; struct gcm_oneshot (gcm_internal.h): in 0, out 8, len 16, aad 24,
; aad_len 32, iv 40 (12 bytes), tag 48 (sealing: 16 bytes written; opening:
; the expected tag, read), tag_len 56 (opening: 1..16).
;
; C prototypes (System V AMD64):
;   void mbc_gcm_ghash_vaes512(const struct mbc_gcm_key *key, uint8_t xi[16],
;                              const uint8_t *in, size_t len);
;   void mbc_gcm_enc_vaes512(const struct mbc_gcm_key *key, uint8_t ctr[16],
;                            uint8_t xi[16], const uint8_t *in, uint8_t *out,
;                            size_t len);
;   void mbc_gcm_dec_vaes512(same as enc);
;   void mbc_gcm_seal12_vaes512(const struct mbc_gcm_key *key,
;                               const struct gcm_oneshot *a);
;   int mbc_gcm_open12_vaes512(same as seal12): 1 if the tag verifies, else 0.
; Semantics as struct mbc_gcm_impl. Needs AVX512F/BW/VL, VAES, VPCLMULQDQ,
; BMI2.
;
; Register use: arguments rdi, rsi (and rdx, rcx, r8, r9 for enc/dec/ghash);
; scratch rax, rcx, rdx, r8, r9, r10, r11, k1, k2. No callee-saved GPR is
; touched; no stack except 16 bytes of the red zone (E(J0) in the general
; one-shot path, wiped before return). Vector: zmm0-7 AES states (tails and
; short path: zmm0-1, zmm3 length block, xmm4 E(J0)), zmm8 GHASH
; accumulator Y', zmm9 counters, zmm10-12 GHASH lo/hi/mid sums, zmm13-14
; temporaries, zmm15 byte-reversed GHASH input, zmm16-30 round keys
; (broadcast; AES-256: round key 1 from memory and zmm17 a GHASH temporary,
; else zmm30 is), zmm31 byte-reverse mask. On return every vector register
; the call wrote and k1, k2 are zeroed (zero idioms: the general paths clear
; zmm0-31, since vzeroall would not reach zmm16-31; the short path the ones
; it used), then vzeroupper; so no key, keystream, hash value or data is
; left in a register (tests/test_gcm_abi.c checks this and the callee-saved
; registers).

default rel

%define HTAB 256
%define ROUNDS 848
%define RK512 960
%define HTABK 1920

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

%define OS_IN 0
%define OS_OUT 8
%define OS_LEN 16
%define OS_AAD 24
%define OS_AAD_LEN 32
%define OS_IV 40
%define OS_TAG 48
%define OS_TAG_LEN 56

section .rodata align=64
BSWAP:   db 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0
J0ONE:   dq 0, 0x0100000000000000
align 64
ADD0123: dq 0, 0, 1, 0, 2, 0, 3, 0
ADD1234: dq 1, 0, 2, 0, 3, 0, 4, 0
INC4:    dq 4, 0, 4, 0, 4, 0, 4, 0
INC32:   dq 32, 0, 32, 0, 32, 0, 32, 0
POLY4:   times 4 dq 1, 0xC200000000000000
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
    vbroadcasti32x4 zmm %+ kr, [rdi + 16 * i]
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

; AES1X nr, xreg: all rounds of one xmm (EVEX forms: keys in xmm16+).
%macro AES1X 2
    vpxorq      %2, %2, xmm16
%assign r 1
%rep %1 - 1
%assign kr 16 + r
%if r == 1 && K1MEM
    vaesenc     %2, %2, [rdi + 16]
%else
    vaesenc     %2, %2, xmm %+ kr
%endif
%assign r r + 1
%endrep
%assign kr 16 + %1
    vaesenclast %2, %2, xmm %+ kr
%endmacro

; CLEAR_REGS: zeroes zmm0-31 (zero idioms) and k1, k2.
%macro CLEAR_REGS 0
%assign i 0
%rep 32
    vpxord      zmm %+ i, zmm %+ i, zmm %+ i
%assign i i + 1
%endrep
    kxorq       k1, k1, k1
    kxorq       k2, k2, k2
%endmacro

; ---------------------------------------------------------------- tails

; TAIL_SETUP final: for r9 = 0..511 remaining bytes, nb = ceil(r9/16):
; r10 = &htab[32 - nb - final] (the length block takes H'^1 when final);
; sums cleared; zmm2 = Y' (folded into the first block hashed).
%macro TAIL_SETUP 1
    lea         rax, [r9 + 15]
    shr         rax, 4
    mov         r10d, 32 - %1
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
    TAIL_SETUP 0
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

; CRYPT_BODY nr, enc, final: CTR + GHASH of r9 bytes rcx -> r8 with the
; counters of zmm9 and Y' in xmm8. final (one-shot, rsi = struct
; gcm_oneshot): fold the length block into the last aggregation; xmm8 is
; then S' (the tag before byte reversal and E(J0)).
%macro CRYPT_BODY 3
    cmp         r9, 512
    jb          %%tail
%if %2
    CTR8_ANY
    AES8_PLAIN %1
    add         rcx, 512
    add         r8, 512
    sub         r9, 512
%%loop:
    cmp         r9, 512
    jb          %%loop_done
    CTR8_ANY
    AES8_STITCHED %1, r8 - 512
    add         rcx, 512
    add         r8, 512
    sub         r9, 512
    jmp         %%loop
%%loop_done:
    GH32 r8 - 512
%else
%%loop:
    cmp         r9, 512
    jb          %%tail
    CTR8_ANY
    AES8_STITCHED %1, rcx
    add         rcx, 512
    add         r8, 512
    sub         r9, 512
    jmp         %%loop
%endif
%%tail:
%if %3
    ; 32 tail blocks plus the length block exceed the 32 powers: reduce the
    ; tail on its own first.
    cmp         r9, 496
    jbe         %%fused
    TAIL_SETUP 0
    CRYPT_TAIL %1, %2
    GH_REDUCE
%%fused:
    TAIL_SETUP 1
    test        r9, r9
    jz          %%len_block
    CRYPT_TAIL %1, %2
%%len_block:
    ; length block, byte-reversed: hi = AAD bits, lo = data bits
    mov         rax, [rsi + OS_LEN]
    shl         rax, 3
    vmovq       xmm3, rax
    mov         rax, [rsi + OS_AAD_LEN]
    shl         rax, 3
    vpinsrq     xmm3, xmm3, rax, 1
    vpxorq      zmm3, zmm3, zmm2
    GH_NEXT     zmm3, [rdi + HTAB + 16 * 31]
    GH_REDUCE
%else
    test        r9, r9
    jz          %%done
    TAIL_SETUP 0
    CRYPT_TAIL %1, %2
    GH_REDUCE
%endif
%%done:
%endmacro

; ---------------------------------------------------------------- entries

; FINISH_TAG enc: xmm8 is the full tag. Sealing: stored at a->tag (16
; bytes). Opening: compared in constant time with the a->tag_len bytes at
; a->tag (masked byte compare, no branch on the result); eax = 1 if equal,
; else 0. The computed tag is never stored when opening.
%macro FINISH_TAG 1
    mov         rax, [rsi + OS_TAG]
%if %1
    vmovdqu     [rax], xmm8
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
    sete        al
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

; CRYPT_NR nr, enc: enc/dec body for nr rounds.
%macro CRYPT_NR 2
    SET_GT %1
    LOAD_RK %1
    CRYPT_BODY %1, %2, 0
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
    ret
%endmacro

; ONESHOT_NR nr, enc: the one-shot body for nr rounds (rsi = struct gcm_oneshot).
%macro ONESHOT_NR 2
    SET_GT %1
    LOAD_RK %1
    ; E(J0) -> tag buffer; counters from J0 + 1
    mov         eax, 0xFFF
    kmovq       k2, rax
    mov         rax, [rsi + OS_IV]
    vmovdqu8    xmm14{k2}{z}, [rax]
    vpor        xmm14, xmm14, [J0ONE]
    vpshufb     xmm9, xmm14, xmm31
    vshufi64x2  zmm9, zmm9, zmm9, 0
    vpaddd      zmm9, zmm9, [ADD1234]
    AES1X %1, xmm14
    vmovdqu     [rsp - 16], xmm14       ; red zone (leaf function), wiped below
    ; AAD
    vpxorq      xmm8, xmm8, xmm8
    mov         rcx, [rsi + OS_AAD]
    mov         r9, [rsi + OS_AAD_LEN]
    GHASH_BODY
    ; data
    mov         rcx, [rsi + OS_IN]
    mov         r8, [rsi + OS_OUT]
    mov         r9, [rsi + OS_LEN]
    CRYPT_BODY %1, %2, 1
    ; tag = E(J0) ^ bswap(S')
    vpshufb     xmm8, xmm8, xmm31
    vpxorq      xmm8, xmm8, [rsp - 16]
    vpxorq      xmm14, xmm14, xmm14
    vmovdqu     [rsp - 16], xmm14
    FINISH_TAG %2
    SET_GT 0
%endmacro


; ---------------------------------------------------------------- short one-shot

; Short messages (ceil(aad/16) + ceil(len/16) + 1 <= 32 blocks): every
; GHASH input (AAD blocks, data blocks, length block) is aggregated into a
; single reduction, and the AES rounds take their keys from memory (rk512,
; rk), so no key is loaded into or left in a register.

; AES1M nr, zreg: all rounds of one zmm, keys from rk512.
%macro AES1M 2
    vpxorq      %2, %2, [rdi + RK512]
%assign r 1
%rep %1 - 1
    vaesenc     %2, %2, [rdi + RK512 + 64 * r]
%assign r r + 1
%endrep
    vaesenclast %2, %2, [rdi + RK512 + 64 * %1]
%endmacro

; AES1XM nr, xreg: all rounds of one xmm, keys from rk.
%macro AES1XM 2
    vpxor       %2, %2, [rdi]
%assign r 1
%rep %1 - 1
    vaesenc     %2, %2, [rdi + 16 * r]
%assign r r + 1
%endrep
    vaesenclast %2, %2, [rdi + 16 * %1]
%endmacro

; SMALL_NR nr, enc: r10 = htab pointer of the first AAD block's power,
; rdx = that of the first data block; rsi = struct gcm_oneshot.
%macro SMALL_NR 2
    mov         eax, 0xFFF
    kmovq       k2, rax
    mov         rax, [rsi + OS_IV]
    vmovdqu8    xmm4{k2}{z}, [rax]
    vpor        xmm4, xmm4, [J0ONE]
    vpshufb     xmm9, xmm4, xmm31
    vshufi64x2  zmm9, zmm9, zmm9, 0
    vpaddd      zmm9, zmm9, [ADD1234]
    AES1XM %1, xmm4
    vpxorq      zmm10, zmm10, zmm10
    vpxorq      zmm11, zmm11, zmm11
    vpxorq      zmm12, zmm12, zmm12
    mov         rcx, [rsi + OS_AAD]
    mov         r9, [rsi + OS_AAD_LEN]
    test        r9, r9
    jz          %%data
%%aad_loop:
    TAIL_MASK
    vmovdqu8    zmm1{k1}{z}, [rcx]
    vpshufb     zmm1, zmm1, zmm31
    GHK_REG     zmm1, r10
    add         rcx, 64
    add         r10, 64
    sub         r9, rax
    jnz         %%aad_loop
%%data:
    mov         rcx, [rsi + OS_IN]
    mov         r8, [rsi + OS_OUT]
    mov         r9, [rsi + OS_LEN]
    test        r9, r9
    jz          %%len_block
%%data_loop:
    TAIL_MASK
    vpshufb     zmm0, zmm9, zmm31
    vpaddd      zmm9, zmm9, [INC4]
    AES1M %1, zmm0
    vmovdqu8    zmm1{k1}{z}, [rcx]
    vpxorq      zmm0, zmm0, zmm1
    vmovdqu8    [r8]{k1}, zmm0
%if %2
    vmovdqu8    zmm0{k1}{z}, zmm0
    vpshufb     zmm1, zmm0, zmm31
%else
    vpshufb     zmm1, zmm1, zmm31
%endif
    GHK_REG     zmm1, rdx
    add         rcx, 64
    add         r8, 64
    add         rdx, 64
    sub         r9, rax
    jnz         %%data_loop
%%len_block:
    mov         rax, [rsi + OS_LEN]
    shl         rax, 3
    vmovq       xmm3, rax
    mov         rax, [rsi + OS_AAD_LEN]
    shl         rax, 3
    vpinsrq     xmm3, xmm3, rax, 1
    GHK_REG     zmm3, rdi + HTAB + 16 * 31
    GH_KFIX
    GH_REDUCE
    vpshufb     xmm8, xmm8, xmm31
    vpxorq      xmm8, xmm8, xmm4
    FINISH_TAG %2
%endmacro

; CLEAR_SMALL: zeroes the registers SMALL_NR used.
%macro CLEAR_SMALL 0
    vpxord      xmm0, xmm0, xmm0
    vpxord      xmm1, xmm1, xmm1
    vpxord      xmm3, xmm3, xmm3
    vpxord      xmm4, xmm4, xmm4
    vpxord      xmm8, xmm8, xmm8
    vpxord      xmm9, xmm9, xmm9
    vpxord      xmm10, xmm10, xmm10
    vpxord      xmm11, xmm11, xmm11
    vpxord      xmm12, xmm12, xmm12
    vpxord      xmm13, xmm13, xmm13
    vpxord      xmm14, xmm14, xmm14
    vpxord      xmm31, xmm31, xmm31
    kxorq       k1, k1, k1
    kxorq       k2, k2, k2
%endmacro

%macro ONESHOT_ENTRY 1
    vbroadcasti32x4 zmm31, [BSWAP]
    mov         rax, [rsi + OS_AAD_LEN]
    mov         rdx, [rsi + OS_LEN]
    cmp         rax, 496
    ja          %%general
    cmp         rdx, 496
    ja          %%general
    add         rax, 15
    shr         rax, 4
    add         rdx, 15
    shr         rdx, 4
    lea         r11, [rax + rdx + 1]
    cmp         r11, 32
    ja          %%general
    mov         r10d, 32
    sub         r10, r11
    shl         r10, 4
    lea         r10, [rdi + HTAB + r10]
    shl         rax, 4
    lea         rdx, [r10 + rax]
    ROUNDS_SWITCH SMALL_NR, %1
    CLEAR_SMALL
    vzeroupper
    ret
%%general:
    ROUNDS_SWITCH ONESHOT_NR, %1
    CLEAR_REGS
    vzeroupper
    ret
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
