/*
 * mbcrypto.h - the only public header of mbcrypto.
 *
 * mbcrypto runs up to 8 independent public-key operations side by side, one
 * per 64-bit lane of a 512-bit register (AVX-512 IFMA), with a portable C
 * path that computes exactly the same digits on any x86-64 CPU.
 *
 * Conventions used throughout:
 *  - Batch entry points end in _mb8. They take an explicit lane_mask (bit i set
 *    means lane i is active) and return an mbc_status word with a 4-bit code
 *    per lane (see mbc_lane_code()). Inactive lanes report MBC_LANE_EMPTY and
 *    their pointers are never read or written.
 *  - Single-request calls return an mbc_err.
 *  - Big numbers cross the API as big-endian byte strings.
 *  - All buffers are owned by the caller; the library keeps no pointer to
 *    them after a call returns.
 *  - Aliasing in _mb8 calls (and their single-request forms): an output of a
 *    lane may overlap that lane's own inputs (in place: every path reads a
 *    lane's inputs before writing its outputs). A lane whose output overlaps
 *    another output (of any lane, its own included) or an input of another
 *    active lane gets MBC_LANE_BAD_PARAM (MBC_ERR_BAD_PARAM) on every
 *    implementation, and the other lanes are computed as usual.
 */
#ifndef MBCRYPTO_H
#define MBCRYPTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(MBC_BUILDING_LIBRARY)
#define MBC_API __attribute__((visibility("default")))
#else
#define MBC_API
#endif

#define MBC_VERSION_MAJOR 0
#define MBC_VERSION_MINOR 1
#define MBC_VERSION_PATCH 0

/* MBC_LANES: the number of lanes of every _mb8 call. */
#define MBC_LANES 8
/* MBC_LANE_MASK_ALL: a lane_mask with all 8 lanes active. */
#define MBC_LANE_MASK_ALL 0xFFu

/* mbc_version_string: the library version, e.g. "0.1.0". */
MBC_API const char *mbc_version_string(void);

/* ------------------------------------------------------------------------ */
/* Errors and lane status                                                    */
/* ------------------------------------------------------------------------ */

/* mbc_err: the result of a single-request call or of a key constructor. */
typedef enum mbc_err {
    MBC_OK = 0,
    MBC_ERR_NULL_PARAM = 1,     /* a required pointer was NULL */
    MBC_ERR_BAD_PARAM = 2,      /* an argument is malformed: wrong length, input >= modulus */
    MBC_ERR_KEY_SIZE = 3,       /* modulus is not 2048, 3072 or 4096 bits, or a prime is too long */
    MBC_ERR_EVEN_MODULUS = 4,   /* n, p or q is even */
    MBC_ERR_KEY_MISMATCH = 5,   /* p * q != n */
    MBC_ERR_BAD_EXPONENT = 6,   /* e is even, e < 3, or e >= n */
    MBC_ERR_KEY_RANGE = 7,      /* dp >= p, dq >= q or qinv >= p */
    MBC_ERR_NO_MEMORY = 8,      /* an allocation failed */
    MBC_ERR_FAULT = 9,          /* the CRT result failed its check with e; no output released */
    MBC_ERR_UNSUPPORTED = 10,   /* the request is valid but not supported */
    MBC_ERR_SIG_INVALID = 11,   /* a signature or encoding did not verify */
    MBC_ERR_AUTH = 12,          /* (GCM) the tag did not verify; no plaintext released */
    MBC_ERR_TAG_LEN = 13,       /* (GCM) tag length not allowed */
    MBC_ERR_IV_LEN = 14,        /* (GCM) zero-length or overlong IV */
    MBC_ERR_TOO_LONG = 15,      /* (GCM) data or AAD longer than GCM allows */
    MBC_ERR_STATE = 16,         /* (GCM) streaming call out of order or on a finished context */
    MBC_ERR_PENDING = 17,       /* (manager) the job is submitted and not yet complete */
    MBC_ERR_BUSY = 18,          /* (manager) the job is already in a manager */
    MBC_ERR_LOW_ORDER = 19,     /* (X25519) low-order peer point: all-zero shared secret */
    MBC_ERR_KEY_SAME_PRIMES = 20, /* p == q */
    MBC_ERR_KEY_QINV = 21,      /* q * qinv != 1 mod p (e.g. p and q swapped, old qinv kept) */
    MBC_ERR_KEY_DP = 22,        /* e * dp != 1 mod (p - 1): dp, or e, does not belong to p */
    MBC_ERR_KEY_DQ = 23,        /* e * dq != 1 mod (q - 1): dq, or e, does not belong to q */
    MBC_ERR_NOT_ON_CURVE = 24,  /* (EC) the point does not satisfy the curve equation */
    MBC_ERR_POINT_FORMAT = 25,  /* (EC) wrong encoded length, or not 04 (uncompressed) first */
    MBC_ERR_POINT_RANGE = 26,   /* (EC) a coordinate is >= p */
    MBC_ERR_INFINITY = 27       /* (EC) the point at infinity (the one-byte encoding 00) */
} mbc_err;

/* mbc_err_str: a static, human-readable name for err ("MBC_ERR_KEY_MISMATCH"). */
MBC_API const char *mbc_err_str(mbc_err err);

/*
 * mbc_status: 4 bits per lane, lane i in bits 4i..4i+3. The values are codes,
 * not flags: each lane reports the first error it met.
 */
typedef uint32_t mbc_status;

enum mbc_lane_code {
    MBC_LANE_OK = 0,           /* the lane's output was written and is correct */
    MBC_LANE_EMPTY = 1,        /* the lane was not in lane_mask */
    MBC_LANE_NULL_PARAM = 2,   /* a pointer of this lane (or the array holding it) was NULL */
    MBC_LANE_BAD_PARAM = 3,    /* bad argument: input >= modulus, key of another size, bad key */
    MBC_LANE_NOT_ON_CURVE = 4, /* (EC) the point is not on the curve */
    MBC_LANE_LOW_ORDER = 5,    /* (EC/X25519) low-order point */
    MBC_LANE_SIG_INVALID = 6,  /* a signature did not verify */
    MBC_LANE_FAULT = 7,        /* the result failed its self-check; output not released */
    MBC_LANE_UNSUPPORTED = 8,  /* valid request this build or call cannot serve */
    MBC_LANE_NO_MEMORY = 9     /* scratch allocation failed */
};

/* mbc_lane_code: the code of one lane of a status word. (No casts here or in
 * any macro of this header: it must compile as C++ with -Wold-style-cast and
 * -Wuseless-cast; tests/cxx checks it.) */
static inline unsigned mbc_lane_code(mbc_status st, unsigned lane)
{
    return (st >> (4u * lane)) & 0xFu;
}

/* mbc_status_ok_mask: a lane mask with bit i set where lane i is MBC_LANE_OK. */
MBC_API unsigned mbc_status_ok_mask(mbc_status st);

/* mbc_lane_code_str: a static name for a lane code ("MBC_LANE_FAULT"). */
MBC_API const char *mbc_lane_code_str(unsigned code);

/* ------------------------------------------------------------------------ */
/* CPU features and dispatch                                                 */
/* ------------------------------------------------------------------------ */

#define MBC_CPU_SSE2        (1ull << 0)
#define MBC_CPU_SSSE3       (1ull << 1)
#define MBC_CPU_SSE41       (1ull << 2)
#define MBC_CPU_AESNI       (1ull << 3)
#define MBC_CPU_PCLMULQDQ   (1ull << 4)
#define MBC_CPU_AVX         (1ull << 5)
#define MBC_CPU_AVX2        (1ull << 6)
#define MBC_CPU_BMI2        (1ull << 7)
#define MBC_CPU_ADX         (1ull << 8)
#define MBC_CPU_AVX512F     (1ull << 9)
#define MBC_CPU_AVX512DQ    (1ull << 10)
#define MBC_CPU_AVX512BW    (1ull << 11)
#define MBC_CPU_AVX512VL    (1ull << 12)
#define MBC_CPU_AVX512IFMA  (1ull << 13)
#define MBC_CPU_AVX512VBMI  (1ull << 14)
#define MBC_CPU_VAES        (1ull << 15)
#define MBC_CPU_VPCLMULQDQ  (1ull << 16)
#define MBC_CPU_GFNI        (1ull << 17)

/* MBC_CPU_IFMA_PATH: every feature the 8-lane IFMA kernels need. */
#define MBC_CPU_IFMA_PATH \
    (MBC_CPU_AVX512F | MBC_CPU_AVX512BW | MBC_CPU_AVX512VL | MBC_CPU_AVX512IFMA)

/*
 * mbc_cpu_features: the feature word the library dispatches on: what CPUID and
 * XGETBV report (AVX-512 bits only if the OS saves opmask and ZMM state),
 * minus what MBCRYPTO_CPU_MASK and mbc_cpu_restrict() removed.
 *
 * MBCRYPTO_CPU_MASK, read once at first use, is a hexadecimal (0x...) or
 * decimal feature word of features to KEEP; everything else is removed. It
 * can only remove features, so a forced path never executes an instruction
 * the CPU lacks. Example: MBCRYPTO_CPU_MASK=0 forces every portable path.
 * Exactly two forms are accepted: "0x" (or "0X") and one or more hex digits,
 * or decimal digits without a leading zero ("0" itself is fine; 010 is
 * neither octal 8 nor decimal 10), with no sign or space and at most
 * 2^64 - 1. Unset or empty keeps every feature. Any other value keeps none
 * (every portable path, as MBCRYPTO_CPU_MASK=0) and the library says so
 * once on stderr, so that a mistyped mask never leaves every fast path on.
 */
MBC_API uint64_t mbc_cpu_features(void);

/*
 * mbc_cpu_restrict: keep only the features in allowed (intersected with what
 * the CPU has and with MBCRYPTO_CPU_MASK) and re-select every implementation.
 * Calling it again with a larger word restores features, never beyond the
 * CPU's. For tests and benchmarks: must not run concurrently with any other
 * mbcrypto call. Returns the new effective feature word.
 */
MBC_API uint64_t mbc_cpu_restrict(uint64_t allowed);

/* mbc_alg: algorithm families whose implementation can be queried. */
typedef enum mbc_alg {
    MBC_ALG_RSA = 0,
    MBC_ALG_GCM = 1,
    MBC_ALG_EC = 2,
    MBC_ALG_X25519 = 3,
    MBC_ALG_MLKEM = 4
} mbc_alg;

/*
 * mbc_impl_name: the name of the implementation currently selected for alg:
 * for MBC_ALG_RSA, MBC_ALG_EC and MBC_ALG_X25519 "ifma" (AVX-512 IFMA, 8 lanes) or "c"
 * (portable), for MBC_ALG_EC and MBC_ALG_X25519 also "adx" (scalar 64-bit
 * kernels, BMI2 + ADX); for MBC_ALG_GCM "vaes512" (VAES + VPCLMULQDQ on zmm),
 * "aesni" (AES-NI + PCLMULQDQ) or "c" (portable, bitsliced); for
 * MBC_ALG_MLKEM "avx512" (4-way Keccak on AVX-512VL), "avx2" or "c"
 * (portable). NULL for an unknown alg.
 */
MBC_API const char *mbc_impl_name(mbc_alg alg);

/* mbc_tier: the kind of kernel an implementation runs. */
typedef enum mbc_tier {
    MBC_TIER_PORTABLE = 0, /* C for any x86-64 CPU (the oracle of the others) */
    MBC_TIER_VECTOR = 1,   /* SIMD kernels: AVX-512 IFMA, AVX2, AES-NI, VAES */
    MBC_TIER_SCALAR = 2    /* 64-bit scalar kernels with BMI2 + ADX (MULX, ADCX, ADOX) */
} mbc_tier;

/*
 * mbc_impl_info: what an implementation says of itself, so that callers
 * decide by properties, not by comparing names.
 *  name      as mbc_impl_name gives it: for display
 *  tier      its kind of kernel
 *  lanes     the requests one pass of its kernels computes: 8 for the
 *            8-lane kernels (RSA; EC and X25519 on "ifma"); 1 where every
 *            request runs alone (EC and X25519 on "adx" and "c", whose
 *            calls run their requests one by one, and AES-GCM, whose calls
 *            take one message). The OpenSSL provider and ENGINE do not
 *            pause an ASYNC job for a request of one lane: no other
 *            request could share its pass
 *  fast_ops  the operations it was measured to run at least at OpenSSL's
 *            speed, which the OpenSSL provider's and ENGINE's "auto" serve:
 *            bit (1u << op) for each mbc_job_op op of the family, and for
 *            MBC_ALG_GCM bit 0 (sealing and opening)
 */
typedef struct mbc_impl_info {
    const char *name;
    mbc_tier tier;
    unsigned lanes;
    unsigned fast_ops;
} mbc_impl_info;

/* mbc_impl_get_info: the properties of the implementation currently
 * selected for alg (library-owned, never freed; a later mbc_cpu_restrict
 * may select another); NULL for an unknown alg. */
MBC_API const mbc_impl_info *mbc_impl_get_info(mbc_alg alg);

/*
 * mbc_impl_lone: whether the implementation selected for alg was measured
 * to run a lone request of op (an mbc_job_op) at bits (the RSA modulus's
 * size; the curve's: 256 P-256, 384 P-384, 255 X25519) at least at
 * OpenSSL's speed. A lone request is one request alone: a single call, a
 * manager holding one job, and what the OpenSSL provider and ENGINE run
 * outside ASYNC jobs. fast_ops speaks of full batches; under "auto" the
 * provider and the ENGINE hand a request made outside an ASYNC job for an
 * operation this denies to OpenSSL's own implementation. 0 for MBC_ALG_GCM
 * and MBC_ALG_MLKEM (no lone rows) and an unknown alg.
 */
MBC_API int mbc_impl_lone(mbc_alg alg, unsigned op, unsigned bits);

/* ------------------------------------------------------------------------ */
/* RSA                                                                       */
/* ------------------------------------------------------------------------ */

/*
 * Key objects are built once (Montgomery constants are computed then) and may
 * be shared by any number of threads and calls; they are immutable after
 * creation. Supported moduli: exactly 2048, 3072 or 4096 bits.
 *
 * Every key object of the library (RSA private, RSA public, AES-GCM, EC
 * private, EC public)
 * starts with a type tag that each call checks before it reads anything
 * else: a key object of another type where one type is expected (a public
 * key for a private one, a GCM key for an RSA key, an RSA key in a GCM call,
 * a job's key in the lane manager) is refused with MBC_ERR_BAD_PARAM (or
 * MBC_LANE_BAD_PARAM in its lane); the _bits queries return 0 for it, and
 * the _free functions leave it alone (neither wiped nor freed).
 */
typedef struct mbc_rsa_priv_key mbc_rsa_priv_key;
typedef struct mbc_rsa_pub_key mbc_rsa_pub_key;

/*
 * mbc_rsa_priv_components: the CRT private key as big-endian byte strings.
 * Leading zero bytes are allowed in every field. p and q must each be shorter
 * than half the modulus bits (as every standard 2-prime key generator makes
 * them); qinv = q^-1 mod p, dp = d mod (p-1), dq = d mod (q-1).
 */
typedef struct mbc_rsa_priv_components {
    const uint8_t *n;    size_t n_len;
    const uint8_t *e;    size_t e_len;
    const uint8_t *p;    size_t p_len;
    const uint8_t *q;    size_t q_len;
    const uint8_t *dp;   size_t dp_len;
    const uint8_t *dq;   size_t dq_len;
    const uint8_t *qinv; size_t qinv_len;
} mbc_rsa_priv_components;

/*
 * mbc_rsa_priv_key_new: validates c and builds a private key in *key.
 * Checks: modulus size (MBC_ERR_KEY_SIZE), odd n, p, q (MBC_ERR_EVEN_MODULUS),
 * odd 3 <= e < n (MBC_ERR_BAD_EXPONENT), p and q below 2^(bits/2)
 * (MBC_ERR_KEY_SIZE), p * q == n (MBC_ERR_KEY_MISMATCH), dp < p, dq < q,
 * qinv < p (MBC_ERR_KEY_RANGE), then the consistency of the CRT key (a key
 * failing it gives wrong CRT results, which the fault check would turn into
 * MBC_ERR_FAULT at every operation): p != q
 * (MBC_ERR_KEY_SAME_PRIMES), q * qinv == 1 mod p (MBC_ERR_KEY_QINV),
 * e * dp == 1 mod (p - 1) (MBC_ERR_KEY_DP), e * dq == 1 mod (q - 1)
 * (MBC_ERR_KEY_DQ); the first failing check, in this order, names the error.
 * NULL key, c or field: MBC_ERR_NULL_PARAM. The secret checks run in
 * constant time; only their verdicts are revealed.
 * On error *key is set to NULL. The caller frees the key with
 * mbc_rsa_priv_key_free(); c's buffers are not retained.
 */
MBC_API mbc_err mbc_rsa_priv_key_new(mbc_rsa_priv_key **key,
                                     const mbc_rsa_priv_components *c);

/* mbc_rsa_priv_key_free: wipes and frees key. NULL is allowed; a key object
 * of another type is left alone. */
MBC_API void mbc_rsa_priv_key_free(mbc_rsa_priv_key *key);

/* mbc_rsa_priv_key_bits: the modulus size in bits (2048/3072/4096), 0 for
 * NULL or a key object of another type. */
MBC_API unsigned mbc_rsa_priv_key_bits(const mbc_rsa_priv_key *key);

/*
 * mbc_rsa_pub_key_new: builds a public key (n, e) in *key. n must be exactly
 * 2048, 3072 or 4096 bits (MBC_ERR_KEY_SIZE) and odd (MBC_ERR_EVEN_MODULUS);
 * e any odd value with 3 <= e < n (MBC_ERR_BAD_EXPONENT). On error *key is
 * NULL. Free with mbc_rsa_pub_key_free().
 */
MBC_API mbc_err mbc_rsa_pub_key_new(mbc_rsa_pub_key **key,
                                    const uint8_t *n, size_t n_len,
                                    const uint8_t *e, size_t e_len);

/* mbc_rsa_pub_key_free: wipes and frees key. NULL is allowed; a key object of
 * another type is left alone. */
MBC_API void mbc_rsa_pub_key_free(mbc_rsa_pub_key *key);

/* mbc_rsa_pub_key_bits: the modulus size in bits, 0 for NULL or a key object
 * of another type. */
MBC_API unsigned mbc_rsa_pub_key_bits(const mbc_rsa_pub_key *key);

/*
 * mbc_rsa_private_crt_mb8: out[i] = in[i]^d mod n of key[i], with the CRT, for
 * every lane i in lane_mask. Raw RSA: no padding is added or removed.
 *
 * bits (2048, 3072 or 4096) is the size of every lane: in[i] and out[i] are
 * bits/8 bytes, big-endian; a lane whose key has another size is
 * MBC_LANE_BAD_PARAM. Keys may differ from lane to lane. out[i] may equal
 * in[i]. Per-lane codes:
 *   MBC_LANE_EMPTY       lane not in lane_mask (never read or written)
 *   MBC_LANE_NULL_PARAM  out, in or key array NULL, or out[i]/in[i]/key[i] NULL
 *   MBC_LANE_BAD_PARAM   in[i] >= n, wrong key size, key[i] not a private
 *                        key object, unsupported bits, or lane_mask above
 *                        0xFF (then every lane)
 *   MBC_LANE_FAULT       the CRT result failed the check result^e == in
 *   MBC_LANE_NO_MEMORY   scratch could not be allocated
 * Every result is checked with the public exponent before it is reported
 * OK. A lane that is active but not OK gets its bits/8-byte out[i] zeroed
 * (when non-NULL), except when the call itself is malformed (unsupported
 * bits, lane_mask above 0xFF): then nothing is written.
 * Constant time with respect to the private key and the input.
 */
MBC_API mbc_status mbc_rsa_private_crt_mb8(uint8_t *const out[MBC_LANES],
                                           const uint8_t *const in[MBC_LANES],
                                           const mbc_rsa_priv_key *const key[MBC_LANES],
                                           unsigned bits, unsigned lane_mask);

/*
 * mbc_rsa_public_mb8: out[i] = in[i]^e mod n of key[i] for every lane in
 * lane_mask. Same lane rules and codes as mbc_rsa_private_crt_mb8, without
 * MBC_LANE_FAULT. Time depends on e (public), not on the input.
 */
MBC_API mbc_status mbc_rsa_public_mb8(uint8_t *const out[MBC_LANES],
                                      const uint8_t *const in[MBC_LANES],
                                      const mbc_rsa_pub_key *const key[MBC_LANES],
                                      unsigned bits, unsigned lane_mask);

/*
 * mbc_rsa_private_crt: one private operation: out = in^d mod n, with in and
 * out of mbc_rsa_priv_key_bits(key)/8 bytes. Returns MBC_OK,
 * MBC_ERR_NULL_PARAM, MBC_ERR_BAD_PARAM (in >= n: out zeroed; a malformed key
 * object or one of another type: out untouched), MBC_ERR_FAULT (out zeroed)
 * or MBC_ERR_NO_MEMORY.
 */
MBC_API mbc_err mbc_rsa_private_crt(uint8_t *out, const uint8_t *in,
                                    const mbc_rsa_priv_key *key);

/* mbc_rsa_public: one public operation out = in^e mod n; codes as above. */
MBC_API mbc_err mbc_rsa_public(uint8_t *out, const uint8_t *in,
                               const mbc_rsa_pub_key *key);

/* mbc_hash: the digest algorithms known to the PKCS#1 v1.5 helpers. */
typedef enum mbc_hash {
    MBC_HASH_SHA1 = 0,   /* legacy; for verifying old signatures */
    MBC_HASH_SHA224 = 1,
    MBC_HASH_SHA256 = 2,
    MBC_HASH_SHA384 = 3,
    MBC_HASH_SHA512 = 4
} mbc_hash;

/*
 * mbc_rsa_pkcs1_v15_sign_encode: writes the EMSA-PKCS1-v1_5 encoding
 * 00 01 FF..FF 00 DigestInfo(hash) digest into em[0..em_len), ready for
 * mbc_rsa_private_crt*(); em_len is the modulus size in bytes. The caller
 * hashes the message. Errors: MBC_ERR_NULL_PARAM; MBC_ERR_BAD_PARAM for an
 * unknown hash, a digest_len that is not the hash's size, or an em_len too
 * short for at least 8 bytes of FF padding.
 */
MBC_API mbc_err mbc_rsa_pkcs1_v15_sign_encode(uint8_t *em, size_t em_len, mbc_hash hash,
                                              const uint8_t *digest, size_t digest_len);

/*
 * mbc_rsa_pkcs1_v15_verify_encoded: checks that em (the output of the public
 * operation on a signature) is exactly the EMSA-PKCS1-v1_5 encoding of digest
 * with hash. Compares in constant time. Returns MBC_OK, MBC_ERR_SIG_INVALID,
 * the errors of mbc_rsa_pkcs1_v15_sign_encode, or MBC_ERR_BAD_PARAM for an
 * em_len above 512 (4096 bits).
 */
MBC_API mbc_err mbc_rsa_pkcs1_v15_verify_encoded(const uint8_t *em, size_t em_len,
                                                 mbc_hash hash, const uint8_t *digest,
                                                 size_t digest_len);

/* ------------------------------------------------------------------------ */
/* NIST P-256 and P-384: ECDSA, ECDH, key generation                         */
/* ------------------------------------------------------------------------ */

/*
 * Curves y^2 = x^3 - 3x + b of prime order n (FIPS 186-5, SEC 2): P-256
 * (secp256r1) and P-384 (secp384r1). Scalars and coordinates cross the API
 * as fixed-length big-endian byte strings (mbc_ec_scalar_len bytes, leading
 * zeros included); points as the uncompressed encoding 04 || X || Y
 * (mbc_ec_point_len bytes); signatures as r || s (mbc_ec_sig_len bytes).
 *
 * Every operation on a secret (d, the nonce k, the shared point) runs in
 * constant time: fixed signed windows over the full scalar length, full
 * masked table scans, complete point formulas (no exceptional case), no
 * branch or address that depends on a secret. Every signature, shared
 * secret and generated key is released only after the point it came from
 * was checked to be on the curve (MBC_LANE_FAULT / MBC_ERR_FAULT
 * otherwise, output zeroed). The first call on a curve builds its
 * fixed-base table (static memory: 70 KiB for P-256, 160 KiB for P-384; a
 * few milliseconds).
 */
typedef enum mbc_curve { MBC_CURVE_P256 = 1, MBC_CURVE_P384 = 2 } mbc_curve;

/* mbc_ec_scalar_len: bytes of a scalar, a coordinate or an ECDH secret of
 * curve: 32 (P-256), 48 (P-384); 0 for an unknown curve. */
MBC_API size_t mbc_ec_scalar_len(mbc_curve curve);

/* mbc_ec_point_len: bytes of an uncompressed point 04 || X || Y: 65, 97;
 * 0 for an unknown curve. */
MBC_API size_t mbc_ec_point_len(mbc_curve curve);

/* mbc_ec_sig_len: bytes of a signature r || s (each scalar_len bytes,
 * big-endian, fixed length): 64, 96; 0 for an unknown curve. */
MBC_API size_t mbc_ec_sig_len(mbc_curve curve);

/*
 * Key objects are built once and may be shared by any number of threads and
 * calls; they are immutable after creation and wiped when freed.
 */
typedef struct mbc_ec_priv_key mbc_ec_priv_key;
typedef struct mbc_ec_pub_key mbc_ec_pub_key;

/*
 * mbc_ec_priv_key_new: a private key of curve with the scalar d (big-endian,
 * d_len bytes, leading zeros allowed) in *key; its public point Q = d G is
 * computed here (and checked on the curve). Errors: MBC_ERR_NULL_PARAM (key
 * or d NULL), MBC_ERR_BAD_PARAM (unknown curve), MBC_ERR_KEY_RANGE (d == 0
 * or d >= n), MBC_ERR_FAULT (Q failed its check), MBC_ERR_NO_MEMORY; *key is
 * then NULL. Constant time in d (only the range verdict is revealed); d is
 * not retained. Free with mbc_ec_priv_key_free().
 */
MBC_API mbc_err mbc_ec_priv_key_new(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d,
                                    size_t d_len);

/*
 * mbc_ec_priv_key_new_pair: as mbc_ec_priv_key_new, for a d whose public
 * point the caller already has from this library (point, 04 || X || Y, as
 * mbc_ec_keygen or mbc_ec_keygen_mb8 return it): d G is not computed again.
 * The point is validated as by mbc_ec_pub_key_new (MBC_ERR_POINT_FORMAT,
 * MBC_ERR_POINT_RANGE, MBC_ERR_NOT_ON_CURVE; MBC_ERR_NULL_PARAM for NULL)
 * but not compared with d G: signing and ECDH use d alone, and the point is
 * only what mbc_ec_priv_key_public returns, so a point that is not d's
 * gives wrong answers there and nowhere else. For a d of any other origin
 * (an imported key), use mbc_ec_priv_key_new. This saves the fixed-base
 * multiplication of a TLS key share: generated in a batch, then made a key.
 */
MBC_API mbc_err mbc_ec_priv_key_new_pair(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d,
                                         size_t d_len, const uint8_t *point, size_t point_len);

/*
 * mbc_ec_priv_key_generate: a new private key of curve in *key, d uniform in
 * [1, n-1] from the OS generator (getrandom; rejection sampling, no modulo
 * bias). Errors as mbc_ec_priv_key_new, and MBC_ERR_UNSUPPORTED when the OS
 * gives no randomness.
 */
MBC_API mbc_err mbc_ec_priv_key_generate(mbc_ec_priv_key **key, mbc_curve curve);

/* mbc_ec_priv_key_free: wipes and frees key. NULL is allowed; a key object
 * of another type is left alone. */
MBC_API void mbc_ec_priv_key_free(mbc_ec_priv_key *key);

/* mbc_ec_priv_key_curve: the curve of key; 0 for NULL or a pointer that is
 * not a private EC key. */
MBC_API mbc_curve mbc_ec_priv_key_curve(const mbc_ec_priv_key *key);

/*
 * mbc_ec_priv_key_public: writes the key's public point Q as 04 || X || Y,
 * mbc_ec_point_len bytes, to point (point_len bytes, at least that many).
 * Errors: MBC_ERR_NULL_PARAM, MBC_ERR_BAD_PARAM (point_len too short, or key
 * not a private EC key); nothing is written then.
 */
MBC_API mbc_err mbc_ec_priv_key_public(const mbc_ec_priv_key *key, uint8_t *point,
                                       size_t point_len);

/*
 * mbc_ec_pub_key_new: a public key of curve from the uncompressed point
 * (point_len bytes) in *key, validated: MBC_ERR_INFINITY (the one byte 00),
 * MBC_ERR_POINT_FORMAT (point_len not mbc_ec_point_len, or a first byte
 * other than 04: compressed points are not supported), MBC_ERR_POINT_RANGE
 * (X or Y >= p), MBC_ERR_NOT_ON_CURVE; also MBC_ERR_NULL_PARAM,
 * MBC_ERR_BAD_PARAM (unknown curve), MBC_ERR_NO_MEMORY. *key is NULL on
 * error. Free with mbc_ec_pub_key_free().
 */
MBC_API mbc_err mbc_ec_pub_key_new(mbc_ec_pub_key **key, mbc_curve curve, const uint8_t *point,
                                   size_t point_len);

/* mbc_ec_pub_key_free: wipes and frees key. NULL is allowed; a key object
 * of another type is left alone. */
MBC_API void mbc_ec_pub_key_free(mbc_ec_pub_key *key);

/* mbc_ec_pub_key_curve: the curve of key; 0 for NULL or a pointer that is
 * not a public EC key. */
MBC_API mbc_curve mbc_ec_pub_key_curve(const mbc_ec_pub_key *key);

/*
 * mbc_ecdsa_sign_mb8: the ECDSA signature r || s (sig_len bytes) of
 * digest[i] (digest_len[i] bytes, any length, 0 allowed) with key[i] into
 * sig[i], for every lane i in lane_mask; keys may differ from lane to lane,
 * all of curve. The caller hashes the message. The digest is used as FIPS
 * 186-5 says: z is its leftmost min(8 digest_len, bitlen(n)) bits, reduced
 * mod n only inside s = k^-1 (z + r d) mod n. Each lane's nonce k is drawn
 * from the OS (getrandom), uniform in [1, n-1] by rejection sampling; a
 * lane whose r or s came out 0 draws again. Per-lane codes:
 *   MBC_LANE_EMPTY       lane not in lane_mask (never read or written)
 *   MBC_LANE_NULL_PARAM  sig, digest, digest_len or key array NULL;
 *                        sig[i] or key[i] NULL; digest[i] NULL with
 *                        digest_len[i] != 0
 *   MBC_LANE_BAD_PARAM   key[i] of another curve (or not a private EC
 *                        key); unknown curve or lane_mask above 0xFF
 *                        (then every lane)
 *   MBC_LANE_FAULT       R = k G failed its on-curve check
 *   MBC_LANE_UNSUPPORTED the OS gave no randomness: no nonce drawn (never
 *                        a weak one)
 *   MBC_LANE_NO_MEMORY   scratch could not be allocated
 * An active lane that is not OK gets its sig_len-byte sig[i] zeroed (when
 * non-NULL), except when the call itself is malformed (unknown curve,
 * lane_mask above 0xFF): then nothing is written. Constant time with
 * respect to d and k.
 */
MBC_API mbc_status mbc_ecdsa_sign_mb8(uint8_t *const sig[MBC_LANES],
                                      const uint8_t *const digest[MBC_LANES],
                                      const size_t digest_len[MBC_LANES],
                                      const mbc_ec_priv_key *const key[MBC_LANES],
                                      mbc_curve curve, unsigned lane_mask);

/*
 * mbc_ecdsa_sign_k_mb8: as mbc_ecdsa_sign_mb8 with the caller's nonce k[i]
 * (scalar_len bytes, big-endian, 1 <= k < n) in each lane, for known-answer
 * tests and callers with their own nonce scheme (e.g. RFC 6979). k must be
 * secret, unpredictable and never used twice: two signatures with the same
 * k (under one key) give away d by a subtraction and a division, and a k
 * that is only partly unpredictable (a few biased or known bits over many
 * signatures) gives it away by lattice reduction. A NULL k array or k[i]
 * is MBC_LANE_NULL_PARAM; k[i] == 0 or >= n, or a k[i] that makes r or s
 * zero, is MBC_LANE_BAD_PARAM. Other codes as mbc_ecdsa_sign_mb8 (never
 * MBC_LANE_UNSUPPORTED).
 */
MBC_API mbc_status mbc_ecdsa_sign_k_mb8(uint8_t *const sig[MBC_LANES],
                                        const uint8_t *const digest[MBC_LANES],
                                        const size_t digest_len[MBC_LANES],
                                        const mbc_ec_priv_key *const key[MBC_LANES],
                                        const uint8_t *const k[MBC_LANES], mbc_curve curve,
                                        unsigned lane_mask);

/*
 * mbc_ecdsa_verify_mb8: checks, for every lane i in lane_mask, that sig[i]
 * (r || s, sig_len bytes) is a valid signature of digest[i] (digest_len[i]
 * bytes, truncated as for signing) under key[i] (public keys of curve). OK
 * means valid. Codes: MBC_LANE_SIG_INVALID (r or s outside [1, n-1], or
 * the equation fails), MBC_LANE_NULL_PARAM (as signing, with sig for the
 * signature), MBC_LANE_BAD_PARAM (key of another curve, unknown curve,
 * lane_mask above 0xFF), MBC_LANE_EMPTY, MBC_LANE_NO_MEMORY. Nothing is
 * written. Handles only public data and is not required to run in constant
 * time (today it shares the constant-time kernels).
 */
MBC_API mbc_status mbc_ecdsa_verify_mb8(const uint8_t *const sig[MBC_LANES],
                                        const uint8_t *const digest[MBC_LANES],
                                        const size_t digest_len[MBC_LANES],
                                        const mbc_ec_pub_key *const key[MBC_LANES],
                                        mbc_curve curve, unsigned lane_mask);

/*
 * mbc_ecdh_mb8: the shared secret x(d Q) (scalar_len bytes, big-endian) of
 * key[i]'s d and the peer point peer[i] (point_len bytes, 04 || X || Y)
 * into secret[i], for every lane i in lane_mask. Each peer point is
 * validated in its lane: MBC_LANE_BAD_PARAM for a first byte other than 04
 * or a coordinate >= p, MBC_LANE_NOT_ON_CURVE off the curve (no secret is
 * computed from it). Other codes: MBC_LANE_NULL_PARAM (an array or
 * secret[i], peer[i], key[i] NULL), MBC_LANE_BAD_PARAM (key of another
 * curve, unknown curve, lane_mask above 0xFF), MBC_LANE_FAULT (the shared
 * point failed its on-curve check; the point at infinity fails it),
 * MBC_LANE_EMPTY, MBC_LANE_NO_MEMORY. Failed lanes get secret[i] zeroed as
 * for signing. Constant time with respect to d and the peer point (only
 * the validity verdicts are revealed).
 */
MBC_API mbc_status mbc_ecdh_mb8(uint8_t *const secret[MBC_LANES],
                                const uint8_t *const peer[MBC_LANES],
                                const mbc_ec_priv_key *const key[MBC_LANES], mbc_curve curve,
                                unsigned lane_mask);

/*
 * mbc_ec_keygen_mb8: a fresh key pair per lane i in lane_mask: d[i] gets d
 * (scalar_len bytes, uniform in [1, n-1] from the OS, as
 * mbc_ec_priv_key_generate) and point[i] its public point 04 || X || Y
 * (point_len bytes); mbc_ec_priv_key_new(d[i]) rebuilds the key. Codes:
 * MBC_LANE_NULL_PARAM (an array, d[i] or point[i] NULL),
 * MBC_LANE_BAD_PARAM (d[i] and point[i] overlap, or overlap another
 * lane's buffers, see Aliasing above; unknown curve or lane_mask above
 * 0xFF: nothing written), MBC_LANE_FAULT (the point failed its on-curve
 * check), MBC_LANE_UNSUPPORTED (no OS randomness), MBC_LANE_EMPTY,
 * MBC_LANE_NO_MEMORY; failed lanes get both outputs zeroed. Constant time
 * with respect to d.
 */
MBC_API mbc_status mbc_ec_keygen_mb8(uint8_t *const d[MBC_LANES], uint8_t *const point[MBC_LANES],
                                     mbc_curve curve, unsigned lane_mask);

/*
 * Single requests: the same operations for one request, on the curve of
 * the key (mbc_ec_keygen: of curve), with the lengths above. Returns
 * MBC_OK or the mbc_err of the lane code (MBC_ERR_NULL_PARAM,
 * MBC_ERR_BAD_PARAM, MBC_ERR_SIG_INVALID, MBC_ERR_NOT_ON_CURVE,
 * MBC_ERR_FAULT, MBC_ERR_UNSUPPORTED, MBC_ERR_NO_MEMORY); a key that is not
 * an EC key of the right type is MBC_ERR_BAD_PARAM (nothing written).
 * mbc_ecdh validates the peer point (peer_len bytes) as mbc_ec_pub_key_new
 * does: MBC_ERR_INFINITY, MBC_ERR_POINT_FORMAT, MBC_ERR_POINT_RANGE,
 * MBC_ERR_NOT_ON_CURVE. A request refused for a NULL argument or a key
 * of another type leaves its outputs untouched; any other failure zeroes
 * them.
 * mbc_ecdsa_sign_k takes the caller's nonce as mbc_ecdsa_sign_k_mb8 does
 * (MBC_ERR_BAD_PARAM for a k out of range); k NULL draws one, as
 * mbc_ecdsa_sign.
 */
MBC_API mbc_err mbc_ecdsa_sign(uint8_t *sig, const uint8_t *digest, size_t digest_len,
                               const mbc_ec_priv_key *key);
MBC_API mbc_err mbc_ecdsa_sign_k(uint8_t *sig, const uint8_t *digest, size_t digest_len,
                                 const mbc_ec_priv_key *key, const uint8_t *k);
MBC_API mbc_err mbc_ecdsa_verify(const uint8_t *sig, const uint8_t *digest, size_t digest_len,
                                 const mbc_ec_pub_key *key);
MBC_API mbc_err mbc_ecdh(uint8_t *secret, const uint8_t *peer, size_t peer_len,
                         const mbc_ec_priv_key *key);
MBC_API mbc_err mbc_ec_keygen(uint8_t *d, uint8_t *point, mbc_curve curve);

/* ------------------------------------------------------------------------ */
/* AES-GCM                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * mbc_gcm_key: an AES-GCM key object: the expanded AES round keys and the
 * powers of the hash key, built once. It records the implementation that was
 * selected when it was created (mbc_gcm_key_impl()) and uses it for its whole
 * life, even if mbc_cpu_restrict() later changes the selection. Immutable
 * after creation; may be shared by any number of threads.
 */
typedef struct mbc_gcm_key mbc_gcm_key;

/* MBC_GCM_TAG_LEN: the default (and maximal) tag length in bytes. */
#define MBC_GCM_TAG_LEN 16
/* MBC_GCM_MAX_DATA_LEN: the longest plaintext of one GCM message, 2^36 - 32 bytes. */
#define MBC_GCM_MAX_DATA_LEN UINT64_C(68719476704)

/*
 * mbc_gcm_key_new: builds in *key the AES-GCM key for k (k_len 16, 24 or 32
 * bytes: AES-128/192/256). Errors: MBC_ERR_NULL_PARAM (key or k NULL),
 * MBC_ERR_KEY_SIZE (other k_len), MBC_ERR_NO_MEMORY; *key is then NULL.
 * k is not retained. Free with mbc_gcm_key_free().
 */
MBC_API mbc_err mbc_gcm_key_new(mbc_gcm_key **key, const uint8_t *k, size_t k_len);

/* mbc_gcm_key_free: wipes and frees key. NULL is allowed; a key object of
 * another type is left alone. */
MBC_API void mbc_gcm_key_free(mbc_gcm_key *key);

/* mbc_gcm_key_impl: the implementation key uses ("vaes512", "aesni", "c");
 * NULL for NULL or a key object of another type. */
MBC_API const char *mbc_gcm_key_impl(const mbc_gcm_key *key);

/*
 * mbc_gcm_seal: one-shot encryption. out gets in_len bytes of ciphertext and
 * tag gets tag_len bytes of tag (12..16; MBC_GCM_TAG_LEN is the default).
 * iv may have any length >= 1 (12 bytes is the fast path), aad any length.
 * out may equal in (in-place); other overlaps are not allowed.
 * Errors: MBC_ERR_NULL_PARAM (key or tag NULL, or a NULL buffer with a
 * non-zero length), MBC_ERR_BAD_PARAM (key is not a GCM key object: its type
 * tag is checked, nothing else of it is read), MBC_ERR_TAG_LEN, MBC_ERR_IV_LEN (iv_len 0 or >= 2^61),
 * MBC_ERR_TOO_LONG (in_len > MBC_GCM_MAX_DATA_LEN or aad_len >= 2^61).
 * Nothing is written on error.
 */
MBC_API mbc_err mbc_gcm_seal(const mbc_gcm_key *key, uint8_t *out, uint8_t *tag, size_t tag_len,
                             const uint8_t *iv, size_t iv_len, const uint8_t *aad,
                             size_t aad_len, const uint8_t *in, size_t in_len);

/*
 * mbc_gcm_open: one-shot decryption and tag check (constant time). On
 * success out holds in_len bytes of plaintext. If the tag does not verify,
 * returns MBC_ERR_AUTH and out is zeroed (holds no plaintext). tag_len
 * 12..16; other errors as mbc_gcm_seal (out untouched then).
 */
MBC_API mbc_err mbc_gcm_open(const mbc_gcm_key *key, uint8_t *out, const uint8_t *tag,
                             size_t tag_len, const uint8_t *iv, size_t iv_len,
                             const uint8_t *aad, size_t aad_len, const uint8_t *in,
                             size_t in_len);

/*
 * mbc_gcm_seal_short_tag, mbc_gcm_open_short_tag: as mbc_gcm_seal and
 * mbc_gcm_open, but tag_len may also be 4 or 8 (NIST SP 800-38D appendix C:
 * only for protocols that bound the number of forgery attempts).
 */
MBC_API mbc_err mbc_gcm_seal_short_tag(const mbc_gcm_key *key, uint8_t *out, uint8_t *tag,
                                       size_t tag_len, const uint8_t *iv, size_t iv_len,
                                       const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                       size_t in_len);
MBC_API mbc_err mbc_gcm_open_short_tag(const mbc_gcm_key *key, uint8_t *out, const uint8_t *tag,
                                       size_t tag_len, const uint8_t *iv, size_t iv_len,
                                       const uint8_t *aad, size_t aad_len, const uint8_t *in,
                                       size_t in_len);

/*
 * mbc_gcm_ctx: the state of one streaming GCM operation, owned by the caller
 * (stack or heap; no allocation by the library). Opaque: only the functions
 * below may touch it. It keeps a pointer to its key, which must outlive it.
 * Order of calls: mbc_gcm_init, any number of mbc_gcm_aad, any number of
 * mbc_gcm_encrypt (or of mbc_gcm_decrypt, not both), then mbc_gcm_finish
 * (sealing) or mbc_gcm_verify (opening), which wipe the context. Any piece
 * may have any length, including 0. A zero-length data piece does not end
 * the AAD: mbc_gcm_aad may follow it until the first non-empty data piece.
 * The first data call, of any length, fixes the direction: whether a sequence
 * of calls is accepted never depends on the data lengths, so a zero-length
 * mbc_gcm_decrypt followed by mbc_gcm_encrypt or mbc_gcm_finish is
 * MBC_ERR_STATE, as it is after a non-empty one.
 */
typedef struct mbc_gcm_ctx {
    uint64_t opaque[24];
} mbc_gcm_ctx;

/* MBC_GCM_SHORT_TAGS: mbc_gcm_init flag allowing tag lengths 4 and 8. */
#define MBC_GCM_SHORT_TAGS 1u

/*
 * mbc_gcm_init: starts an operation with key and iv (any length >= 1).
 * flags: 0 or MBC_GCM_SHORT_TAGS. Errors: MBC_ERR_NULL_PARAM,
 * MBC_ERR_IV_LEN, MBC_ERR_BAD_PARAM (key not a GCM key object, unknown
 * flag); ctx is then unusable. The later calls use the key checked here.
 */
MBC_API mbc_err mbc_gcm_init(mbc_gcm_ctx *ctx, const mbc_gcm_key *key, const uint8_t *iv,
                             size_t iv_len, unsigned flags);

/* mbc_gcm_aad: adds aad_len bytes of additional data. MBC_ERR_STATE after a
 * non-empty data piece; MBC_ERR_TOO_LONG beyond 2^61 - 1 bytes in all. */
MBC_API mbc_err mbc_gcm_aad(mbc_gcm_ctx *ctx, const uint8_t *aad, size_t aad_len);

/*
 * mbc_gcm_encrypt, mbc_gcm_decrypt: process len bytes, writing len bytes to
 * out at once (out may equal in). MBC_ERR_STATE if the context already had
 * a data call (even of length 0) in the other direction or is finished;
 * MBC_ERR_TOO_LONG beyond MBC_GCM_MAX_DATA_LEN bytes in all. A streaming
 * decryption releases plaintext before the tag is checked: the caller must
 * discard it unless mbc_gcm_verify returns MBC_OK.
 */
MBC_API mbc_err mbc_gcm_encrypt(mbc_gcm_ctx *ctx, uint8_t *out, const uint8_t *in, size_t len);
MBC_API mbc_err mbc_gcm_decrypt(mbc_gcm_ctx *ctx, uint8_t *out, const uint8_t *in, size_t len);

/* mbc_gcm_finish: writes tag_len bytes of tag (12..16, or 4/8 with
 * MBC_GCM_SHORT_TAGS) and wipes ctx. MBC_ERR_STATE after a decrypt call. */
MBC_API mbc_err mbc_gcm_finish(mbc_gcm_ctx *ctx, uint8_t *tag, size_t tag_len);

/* mbc_gcm_verify: checks tag (constant time) and wipes ctx: MBC_OK or
 * MBC_ERR_AUTH; MBC_ERR_STATE after an encrypt call, MBC_ERR_TAG_LEN. */
MBC_API mbc_err mbc_gcm_verify(mbc_gcm_ctx *ctx, const uint8_t *tag, size_t tag_len);

/* ------------------------------------------------------------------------ */
/* X25519 (RFC 7748)                                                         */
/* ------------------------------------------------------------------------ */

/*
 * X25519 values are 32-byte little-endian strings, as in RFC 7748. Scalars
 * are clamped on a copy (bits 0, 1, 2 and 255 cleared, bit 254 set): the
 * caller's bytes are never modified. The top bit of a u-coordinate is
 * ignored, and values of u from p = 2^255 - 19 up to 2^255 - 1 are accepted
 * and reduced mod p. Results are fully reduced. Every call is constant time
 * with respect to the scalars: a Montgomery ladder of 255 steps with masked
 * swaps (derive), masked scans of a fixed table (public key); only the
 * per-lane verdicts and the outputs are derived from them.
 */

/* MBC_X25519_LEN: the bytes of an X25519 scalar, u-coordinate or result. */
#define MBC_X25519_LEN 32

/*
 * mbc_x25519_mb8: out[i] = X25519(scalar[i], u[i]), the shared secret of
 * the private scalar[i] and the peer's public u[i], for every lane i in
 * lane_mask. out[i] may equal scalar[i] or u[i] (buffers of different lanes
 * must not overlap). Per-lane codes:
 *   MBC_LANE_OK          out[i] holds the shared secret
 *   MBC_LANE_EMPTY       lane not in lane_mask (never read or written)
 *   MBC_LANE_NULL_PARAM  out, scalar or u array NULL, or out[i], scalar[i]
 *                        or u[i] NULL
 *   MBC_LANE_LOW_ORDER   the shared secret is all zeros: u[i] is a point of
 *                        small order (RFC 7748 section 6.1); out[i] zeroed
 *   MBC_LANE_BAD_PARAM   lane_mask above 0xFF (then every lane; nothing is
 *                        written)
 * An active lane that is not OK gets its 32-byte out[i] zeroed (when
 * non-NULL). A failing lane never changes another lane's result.
 */
MBC_API mbc_status mbc_x25519_mb8(uint8_t *const out[MBC_LANES],
                                  const uint8_t *const scalar[MBC_LANES],
                                  const uint8_t *const u[MBC_LANES], unsigned lane_mask);

/*
 * mbc_x25519_public_key_mb8: out[i] = X25519(scalar[i], 9), the public key
 * of scalar[i], for every lane i in lane_mask (a fixed-base method: the
 * same bytes as mbc_x25519_mb8 with u = 9, in about a third of its time).
 * Lane codes and buffer rules as mbc_x25519_mb8, without u and without
 * MBC_LANE_LOW_ORDER.
 */
MBC_API mbc_status mbc_x25519_public_key_mb8(uint8_t *const out[MBC_LANES],
                                             const uint8_t *const scalar[MBC_LANES],
                                             unsigned lane_mask);

/*
 * mbc_x25519_keygen_mb8: for every lane i in lane_mask, a new key pair:
 * priv[i] gets 32 random bytes from the operating system (getrandom),
 * stored clamped, and pub[i] its public key. priv[i] and pub[i] must not
 * overlap. Per-lane codes:
 *   MBC_LANE_OK           priv[i] and pub[i] written
 *   MBC_LANE_EMPTY        lane not in lane_mask (never read or written)
 *   MBC_LANE_NULL_PARAM   priv or pub array NULL, or priv[i] or pub[i] NULL
 *   MBC_LANE_BAD_PARAM    priv[i] and pub[i] overlap, or either overlaps another
 *                         lane's (see Aliasing above); lane_mask above 0xFF (then
 *                         every lane; nothing is written)
 *   MBC_LANE_UNSUPPORTED  the operating system gave no randomness (every
 *                         active lane); never weak keys
 * An active lane that is not OK gets priv[i] and pub[i] zeroed (those that
 * are non-NULL).
 */
MBC_API mbc_status mbc_x25519_keygen_mb8(uint8_t *const priv[MBC_LANES],
                                         uint8_t *const pub[MBC_LANES], unsigned lane_mask);

/*
 * mbc_x25519: one shared secret out = X25519(scalar, u). Returns MBC_OK,
 * MBC_ERR_NULL_PARAM (a NULL pointer; nothing written) or MBC_ERR_LOW_ORDER
 * (all-zero result; out zeroed). out may equal scalar or u.
 */
MBC_API mbc_err mbc_x25519(uint8_t out[MBC_X25519_LEN], const uint8_t scalar[MBC_X25519_LEN],
                           const uint8_t u[MBC_X25519_LEN]);

/* mbc_x25519_public_key: out = X25519(scalar, 9). MBC_OK or
 * MBC_ERR_NULL_PARAM. */
MBC_API mbc_err mbc_x25519_public_key(uint8_t out[MBC_X25519_LEN],
                                      const uint8_t scalar[MBC_X25519_LEN]);

/*
 * mbc_x25519_keygen: one key pair as mbc_x25519_keygen_mb8. Returns MBC_OK,
 * MBC_ERR_NULL_PARAM (nothing written), MBC_ERR_BAD_PARAM (priv == pub;
 * both zeroed) or MBC_ERR_UNSUPPORTED (no randomness from the OS; both
 * zeroed).
 */
MBC_API mbc_err mbc_x25519_keygen(uint8_t priv[MBC_X25519_LEN], uint8_t pub[MBC_X25519_LEN]);

/* ------------------------------------------------------------------------ */
/* ML-KEM (FIPS 203)                                                         */
/* ------------------------------------------------------------------------ */

/*
 * ML-KEM-512, -768 and -1024, the module-lattice KEM of FIPS 203 (768 is
 * the one inside TLS 1.3's X25519MLKEM768). Keys and ciphertexts are the
 * byte strings of FIPS 203: the encapsulation key ek, the decapsulation key
 * dk (dk_PKE || ek || H(ek) || z, the "expanded" form), the ciphertext c,
 * the 32-byte shared secret. A key pair comes from a 64-byte seed d || z
 * (FIPS 203 ML-KEM.KeyGen_internal) or from the operating system's
 * randomness. The checks of FIPS 203 section 7 are made: encapsulation
 * refuses an ek whose coefficients are not all below q (the modulus check),
 * decapsulation refuses a dk whose H(ek) does not match its ek (the hash
 * check); a ciphertext that does not decrypt and re-encrypt to itself gives
 * the implicit-rejection secret J(z || c), chosen by a constant-time
 * comparison and masks, not a branch. Constant time with respect to seeds,
 * m, dk and every secret in between; no division on secret data.
 *
 * The _mb8 calls run every valid request of a batch together: the SHAKE
 * streams of all requests (matrix entries, noise) are hashed side by side,
 * four at a time on AVX2. Lane rules as the other _mb8 calls (see
 * Aliasing above): an output may overlap only its own lane's inputs; a
 * lane that is active but not OK gets its outputs zeroed (those that are
 * non-NULL), except when the call itself is malformed (an unknown param,
 * lane_mask above 0xFF: every lane BAD_PARAM, nothing written).
 */

/* mbc_mlkem_param: the parameter set, its value the module rank k. */
typedef enum mbc_mlkem_param {
    MBC_MLKEM_512 = 2,
    MBC_MLKEM_768 = 3,
    MBC_MLKEM_1024 = 4
} mbc_mlkem_param;

/* The sizes in bytes: seed d || z, message m, shared secret. */
#define MBC_MLKEM_SEED_LEN 64
#define MBC_MLKEM_MSG_LEN 32
#define MBC_MLKEM_SS_LEN 32
/* Encapsulation key, decapsulation key and ciphertext of each set. */
#define MBC_MLKEM512_EK_LEN 800
#define MBC_MLKEM512_DK_LEN 1632
#define MBC_MLKEM512_CT_LEN 768
#define MBC_MLKEM768_EK_LEN 1184
#define MBC_MLKEM768_DK_LEN 2400
#define MBC_MLKEM768_CT_LEN 1088
#define MBC_MLKEM1024_EK_LEN 1568
#define MBC_MLKEM1024_DK_LEN 3168
#define MBC_MLKEM1024_CT_LEN 1568

/*
 * mbc_mlkem_keygen_seed_mb8: for every lane i in lane_mask, the key pair
 * of seed[i] (64 bytes, d || z): ek[i] and dk[i], of the param's sizes.
 * Per-lane codes:
 *   MBC_LANE_OK          ek[i] and dk[i] written
 *   MBC_LANE_EMPTY       lane not in lane_mask (never read or written)
 *   MBC_LANE_NULL_PARAM  an array NULL, or ek[i], dk[i] or seed[i] NULL
 *   MBC_LANE_BAD_PARAM   overlapping buffers (see Aliasing); an unknown
 *                        param or lane_mask above 0xFF (every lane)
 */
MBC_API mbc_status mbc_mlkem_keygen_seed_mb8(mbc_mlkem_param param, uint8_t *const ek[MBC_LANES],
                                             uint8_t *const dk[MBC_LANES],
                                             const uint8_t *const seed[MBC_LANES],
                                             unsigned lane_mask);

/* mbc_mlkem_keygen_mb8: as mbc_mlkem_keygen_seed_mb8 with seeds of 64
 * random bytes from the operating system (getrandom); MBC_LANE_UNSUPPORTED
 * (every active lane) when it gives none. */
MBC_API mbc_status mbc_mlkem_keygen_mb8(mbc_mlkem_param param, uint8_t *const ek[MBC_LANES],
                                        uint8_t *const dk[MBC_LANES], unsigned lane_mask);

/*
 * mbc_mlkem_encaps_m_mb8: for every lane i in lane_mask, the ciphertext
 * ct[i] and shared secret ss[i] (32 bytes) of the encapsulation key ek[i]
 * with the given 32-byte message m[i] (FIPS 203 ML-KEM.Encaps_internal:
 * for tests; use mbc_mlkem_encaps_mb8 otherwise). Per-lane codes:
 *   MBC_LANE_OK          ct[i] and ss[i] written
 *   MBC_LANE_EMPTY       lane not in lane_mask (never read or written)
 *   MBC_LANE_NULL_PARAM  an array NULL, or ct[i], ss[i], ek[i] or m[i] NULL
 *   MBC_LANE_BAD_PARAM   ek[i] fails the modulus check (a coefficient
 *                        >= q); overlapping buffers; an unknown param or
 *                        lane_mask above 0xFF (every lane)
 */
MBC_API mbc_status mbc_mlkem_encaps_m_mb8(mbc_mlkem_param param, uint8_t *const ct[MBC_LANES],
                                          uint8_t *const ss[MBC_LANES],
                                          const uint8_t *const ek[MBC_LANES],
                                          const uint8_t *const m[MBC_LANES], unsigned lane_mask);

/* mbc_mlkem_encaps_mb8: as mbc_mlkem_encaps_m_mb8 with 32 random bytes
 * from the operating system as m; MBC_LANE_UNSUPPORTED (every active lane)
 * when it gives none. */
MBC_API mbc_status mbc_mlkem_encaps_mb8(mbc_mlkem_param param, uint8_t *const ct[MBC_LANES],
                                        uint8_t *const ss[MBC_LANES],
                                        const uint8_t *const ek[MBC_LANES], unsigned lane_mask);

/*
 * mbc_mlkem_decaps_mb8: for every lane i in lane_mask, the shared secret
 * ss[i] (32 bytes) of ciphertext ct[i] under the decapsulation key dk[i];
 * a ciphertext that is not ek's encryption of what it decrypts to gives the
 * implicit-rejection secret (status OK: the caller cannot tell, by design).
 * Per-lane codes:
 *   MBC_LANE_OK          ss[i] written
 *   MBC_LANE_EMPTY       lane not in lane_mask (never read or written)
 *   MBC_LANE_NULL_PARAM  an array NULL, or ss[i], ct[i] or dk[i] NULL
 *   MBC_LANE_BAD_PARAM   dk[i] fails the hash check (its H(ek) is not the
 *                        hash of its ek); overlapping buffers; an unknown
 *                        param or lane_mask above 0xFF (every lane)
 */
MBC_API mbc_status mbc_mlkem_decaps_mb8(mbc_mlkem_param param, uint8_t *const ss[MBC_LANES],
                                        const uint8_t *const ct[MBC_LANES],
                                        const uint8_t *const dk[MBC_LANES], unsigned lane_mask);

/*
 * The single-request calls, with the lengths of their inputs checked
 * (MBC_ERR_BAD_PARAM when a length is not the param's, or on a failed key
 * check, or an unknown param; nothing written for a length or param error,
 * the outputs zeroed for a failed check). MBC_ERR_NULL_PARAM for a NULL
 * pointer (nothing written); MBC_ERR_UNSUPPORTED when the operating system
 * gives no randomness (outputs zeroed). Outputs are the param's sizes.
 */
MBC_API mbc_err mbc_mlkem_keygen_seed(mbc_mlkem_param param, uint8_t *ek, uint8_t *dk,
                                      const uint8_t *seed, size_t seed_len);
MBC_API mbc_err mbc_mlkem_keygen(mbc_mlkem_param param, uint8_t *ek, uint8_t *dk);
MBC_API mbc_err mbc_mlkem_encaps_m(mbc_mlkem_param param, uint8_t *ct,
                                   uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ek, size_t ek_len,
                                   const uint8_t m[MBC_MLKEM_MSG_LEN]);
MBC_API mbc_err mbc_mlkem_encaps(mbc_mlkem_param param, uint8_t *ct,
                                 uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ek, size_t ek_len);
MBC_API mbc_err mbc_mlkem_decaps(mbc_mlkem_param param, uint8_t ss[MBC_MLKEM_SS_LEN],
                                 const uint8_t *ct, size_t ct_len, const uint8_t *dk,
                                 size_t dk_len);

/* ------------------------------------------------------------------------ */
/* The lane manager: batching requests from independent callers             */
/* ------------------------------------------------------------------------ */

/*
 * A manager gathers jobs of the same class (operation and key size) into
 * batches and runs the class's kernel on the caller's thread: at once when
 * the class has a full batch, on mbc_mgr_flush(), or on mbc_mgr_poll() once
 * the oldest job of a partial batch has waited max_wait_us. A full batch is
 * 8 jobs for RSA public, every EC operation, every X25519 operation and
 * every ML-KEM-768 one, and 4 for RSA private (4 requests already fill all
 * 8 lanes: each one's two CRT halves run side by side). A lone job runs on
 * the library's fastest single-request path.
 *
 * Threads: a manager belongs to one thread at a time (no locks inside); use
 * one manager per thread. Key objects may be shared by any number of
 * managers and threads.
 *
 * Jobs are owned by the caller: the library never allocates per job and
 * never copies one. A submitted job (and its key, input and output buffers)
 * must stay valid and untouched until mbc_mgr_get_completed() returns it (or
 * mbc_mgr_free() releases it). Every accepted job, even one that failed its
 * checks or ran at once, is returned exactly once by mbc_mgr_get_completed().
 *
 * Completion order: the jobs of one batch complete in submission order
 * (FIFO). Across classes the order is the order in which batches ran, so a
 * full P-256 batch never waits behind a partial RSA-4096 batch submitted
 * earlier.
 */

/* mbc_job_op: what a job computes. The key type and buffer sizes follow. */
typedef enum mbc_job_op {
    /* out = in^d mod n with the CRT (mbc_rsa_private_crt). key: const
     * mbc_rsa_priv_key *; in_len == bits/8; out_len >= bits/8. */
    MBC_OP_RSA_PRIVATE = 1,
    /* out = in^e mod n (mbc_rsa_public). key: const mbc_rsa_pub_key *;
     * in_len == bits/8; out_len >= bits/8. */
    MBC_OP_RSA_PUBLIC = 2,
    /* out = the ECDSA signature r || s of the digest in (mbc_ecdsa_sign,
     * random nonce). key: const mbc_ec_priv_key *; in_len <= 64 (any digest
     * length up to SHA-512's, 0 included); out_len >= sig_len. */
    MBC_OP_ECDSA_SIGN = 3,
    /* checks the signature in2 (r || s, in2_len == sig_len) of the digest
     * in (in_len <= 64) under key (const mbc_ec_pub_key *)
     * (mbc_ecdsa_verify): status MBC_OK (valid) or MBC_ERR_SIG_INVALID. No
     * output (out may be NULL). */
    MBC_OP_ECDSA_VERIFY = 4,
    /* out = x(d Q) (mbc_ecdh) for the peer point in (04 || X || Y, in_len
     * == point_len). key: const mbc_ec_priv_key *; out_len >= scalar_len. */
    MBC_OP_ECDH = 5,
    /* a new key pair on P-256 (P-384) (mbc_ec_keygen): out = d (out_len >=
     * scalar_len), out2 = its point 04 || X || Y (out2_len >= point_len).
     * No key, no input. */
    MBC_OP_EC_KEYGEN_P256 = 6,
    MBC_OP_EC_KEYGEN_P384 = 7,
    /* out = X25519(in, in2), a shared secret (mbc_x25519). No key (key is
     * ignored). in: the private scalar, in_len == 32; in2: the peer's
     * public u, in2_len == 32; out_len >= 32. A low-order peer point
     * completes with MBC_ERR_LOW_ORDER (out zeroed). */
    MBC_OP_X25519_DERIVE = 8,
    /* A new key pair (mbc_x25519_keygen). No key, no input. out: the
     * private scalar, out_len >= 32; out2: its public key, out2_len >= 32.
     * out and out2 must not overlap. */
    MBC_OP_X25519_KEYGEN = 9,
    /* A new ML-KEM-768 key pair (mbc_mlkem_keygen). No key, no input.
     * out: the encapsulation key, out_len >= 1184; out2: the decapsulation
     * key, out2_len >= 2400. */
    MBC_OP_MLKEM768_KEYGEN = 10,
    /* ML-KEM-768 encapsulation (mbc_mlkem_encaps, random m). No key. in:
     * the encapsulation key, in_len == 1184; out: the ciphertext, out_len
     * >= 1088; out2: the shared secret, out2_len >= 32. An ek failing the
     * modulus check completes with MBC_ERR_BAD_PARAM. */
    MBC_OP_MLKEM768_ENCAPS = 11,
    /* ML-KEM-768 decapsulation (mbc_mlkem_decaps). No key object: in: the
     * ciphertext, in_len == 1088; in2: the decapsulation key, in2_len ==
     * 2400; out: the shared secret, out_len >= 32. A dk failing the hash
     * check completes with MBC_ERR_BAD_PARAM. */
    MBC_OP_MLKEM768_DECAPS = 12,
    /* out = X25519(in, 9), the public key of the private scalar in
     * (mbc_x25519_public_key; the fixed-base method of key generation). No
     * key. in_len == 32; out_len >= 32. With MBC_OP_X25519_DERIVE on the
     * same scalar, an ephemeral exchange whose two requests do not wait for
     * each other. */
    MBC_OP_X25519_PUBLIC_KEY = 13,
    /* The ML-KEM-768 key pair of a given seed (mbc_mlkem_keygen_seed). No
     * key. in: the seed d || z, in_len == 64; out: the encapsulation key,
     * out_len >= 1184; out2: the decapsulation key, out2_len >= 2400. For a
     * caller that keeps the seed of its key (drawn from its own random
     * source). */
    MBC_OP_MLKEM768_KEYGEN_SEED = 14
} mbc_job_op;

/*
 * mbc_job: one request. Fill the first block, then submit.
 *
 * The private fields must be zero before a job's first submit (as
 * `mbc_job job = {0}`, a designated initializer or memset leave them). From
 * mbc_mgr_submit() until mbc_mgr_get_completed() returns it (or
 * mbc_mgr_free() releases it), the job is in the manager: submitting it again,
 * to any manager, returns MBC_ERR_BUSY. Once returned, it is reusable as it
 * is: change the caller's fields if needed and submit it again.
 */
typedef struct mbc_job {
    /* Set by the caller. */
    mbc_job_op op;
    const void *key; /* the op's key object; NULL for ops without one */
    const uint8_t *in;
    size_t in_len;
    uint8_t *out;
    size_t out_len;
    void *user_data; /* returned untouched */
    /* The second input and output of the ops that have them (see
     * mbc_job_op); ignored (may be left NULL / 0) by the others. */
    const uint8_t *in2;
    size_t in2_len;
    uint8_t *out2;
    size_t out2_len;

    /* Set by the manager: MBC_ERR_PENDING from submit until the job is
     * complete, then MBC_OK or the job's error. On error, out (and out2)
     * are zeroed over the op's output length when the job's class is known
     * (op and key valid) and the buffer is long enough; otherwise they are
     * not written. */
    mbc_err status;

    /* Private to the manager; zero before the first submit. */
    struct mbc_job *mgr_next_;
    uint64_t mgr_t_submit_;
    unsigned mgr_state_;
} mbc_job;

typedef struct mbc_mgr mbc_mgr;

/* mbc_mgr_config: a zeroed config gives the defaults. */
typedef struct mbc_mgr_config {
    /* The longest a job of a partial batch may wait before mbc_mgr_poll()
     * runs its batch, in microseconds. 0: no deadline (flush only). */
    uint32_t max_wait_us;
    /* MBC_MGR_* flags. */
    unsigned flags;
} mbc_mgr_config;

/* MBC_MGR_SYNC: never batch: every submit runs its job at once on the
 * fastest single-request path (for callers that wait on each request). The
 * job's status is final when submit returns; it is still returned by
 * mbc_mgr_get_completed(). */
#define MBC_MGR_SYNC 1u

/* mbc_mgr_new: a manager in *mgr (NULL on error). cfg NULL = defaults.
 * MBC_ERR_NULL_PARAM, MBC_ERR_BAD_PARAM (unknown flags), MBC_ERR_NO_MEMORY. */
MBC_API mbc_err mbc_mgr_new(mbc_mgr **mgr, const mbc_mgr_config *cfg);

/* mbc_mgr_free: runs every pending job (as mbc_mgr_flush()), releases the
 * completed jobs not yet collected (their status is final and they may be
 * submitted again), then frees the manager. Every job still in the manager
 * must be valid when it is called. NULL is allowed. */
MBC_API void mbc_mgr_free(mbc_mgr *mgr);

/*
 * mbc_mgr_submit: validates job and places it in its class. A job with bad
 * fields completes at once (it is returned by mbc_mgr_get_completed() like
 * any other) with its error and blocks nothing: MBC_ERR_NULL_PARAM for a
 * NULL key (ops with a key) or a NULL buffer the op uses; MBC_ERR_BAD_PARAM
 * for an unknown op, a key that is not a valid key object of op's type or
 * of an unsupported size or curve, an input length other than the op's
 * (see mbc_job_op: in_len == bits/8 for RSA, a digest longer than 64 bytes,
 * a signature or point of another length, in_len == in2_len == 32 for
 * X25519 derive) or an output shorter than the op's (out_len >= bits/8; 32
 * for X25519). Errors found when the job runs (input >= n:
 * MBC_ERR_BAD_PARAM; a peer point off the curve: MBC_ERR_NOT_ON_CURVE;
 * MBC_ERR_SIG_INVALID; MBC_ERR_FAULT; MBC_ERR_NO_MEMORY; MBC_ERR_LOW_ORDER;
 * MBC_ERR_BAD_PARAM for an X25519 keygen whose out equals out2;
 * MBC_ERR_UNSUPPORTED when the OS gives no randomness) are its alone: the
 * other jobs of its batch are unaffected. When the class fills its
 * 8 lanes, the batch runs before submit returns. With MBC_MGR_SYNC the job
 * runs before submit returns. Returns MBC_OK when the job was accepted (it is
 * now pending or completed), MBC_ERR_NULL_PARAM for a NULL mgr or job (nothing
 * touched), MBC_ERR_BUSY when job is already in a manager (job untouched).
 */
MBC_API mbc_err mbc_mgr_submit(mbc_mgr *mgr, mbc_job *job);

/* mbc_mgr_flush: runs every partial batch now, class by class; a class
 * holding a single job runs it on the single-request path. Idle lanes get
 * no caller data. Returns the number of jobs completed by this call. */
MBC_API size_t mbc_mgr_flush(mbc_mgr *mgr);

/* mbc_mgr_get_completed: the oldest completed job not yet returned, or NULL.
 * The returned job is out of the manager and may be reused at once. */
MBC_API mbc_job *mbc_mgr_get_completed(mbc_mgr *mgr);

/* mbc_mgr_pending: jobs submitted and not yet run (0 for NULL). */
MBC_API size_t mbc_mgr_pending(const mbc_mgr *mgr);

/* mbc_mgr_next_deadline_us: microseconds until the oldest waiting job of any
 * partial batch is due (0 if already due), or -1 when nothing waits or
 * max_wait_us is 0. For an event loop's timer: call mbc_mgr_poll() then.
 * Times come from CLOCK_MONOTONIC. */
MBC_API int64_t mbc_mgr_next_deadline_us(const mbc_mgr *mgr);

/* mbc_mgr_poll: runs the partial batches whose oldest job has waited at
 * least max_wait_us (nothing when max_wait_us is 0). Returns the number of
 * jobs completed by this call. */
MBC_API size_t mbc_mgr_poll(mbc_mgr *mgr);

#ifdef __cplusplus
}
#endif

#endif /* MBCRYPTO_H */
