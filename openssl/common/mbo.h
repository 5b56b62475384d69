/*
 * mbo.h - openssl/common: what the OpenSSL provider (openssl/provider) and
 * the ENGINE shim (openssl/engine) share. OpenSSL types appear only under
 * openssl/; this layer uses public OpenSSL API only (no internal struct).
 *
 *  - thread.c    one pair of lane managers per thread, created on first use,
 *                freed at thread exit, at mbo_fini() and in a forked child
 *  - async.c     mbo_run(), mbo_run_jobs(): jobs through the thread's
 *                manager; inside an OpenSSL ASYNC job they pause with a
 *                wait fd, together
 *  - policy.c    which families are served (the "serve" setting)
 *  - counters.c  operation counters, optionally in a shared file
 *  - rsa.c       RSA key objects from BIGNUMs
 *  - ec.c        P-256/P-384 ECDSA, ECDH and key generation, X25519, through
 *                mbo_run (and as jobs for mbo_run_jobs)
 *  - mlkem.c     ML-KEM-768 jobs
 *  - gcm.c       AES-GCM as OpenSSL drives a cipher, TLS record modes included
 *
 * Every function is thread safe unless its comment says otherwise.
 */
#ifndef MBC_OPENSSL_COMMON_MBO_H
#define MBC_OPENSSL_COMMON_MBO_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/bn.h>

#include "mbcrypto.h"

/* ------------------------------------------------------------------ init */

/*
 * mbo_init: takes a reference on the shared state (counters file, the
 * per-thread key, the fork handler), creating it on the first call.
 * serve_cfg is the "serve" setting of the caller's configuration (NULL: none);
 * the MBCRYPTO_SERVE environment variable, when set, wins over it (see
 * mbo_policy_parse). Returns 1 on success, 0 on failure (nothing taken).
 * mbo_fini: drops the reference; the last one frees every thread's managers
 * (running what they hold) and unmaps the counters file.
 */
int mbo_init(const char *serve_cfg);
void mbo_fini(void);

/* ---------------------------------------------------------------- policy */

/* mbo_family: what the policy decides on, one bit each. */
enum mbo_family {
    MBO_FAM_RSA = 1u << 0,
    MBO_FAM_GCM = 1u << 1,
    MBO_FAM_X25519 = 1u << 2, /* X25519 key management and key exchange */
    MBO_FAM_ECDH = 1u << 3,   /* P-256/P-384 key management and ECDH */
    MBO_FAM_ECDSA = 1u << 4,  /* P-256/P-384 key management and ECDSA */
    MBO_FAM_MLKEM = 1u << 5,  /* ML-KEM-768 and X25519MLKEM768 (provider, on
                               * OpenSSL 3.5+; the hybrid also needs x25519) */
};
#define MBO_FAM_ALL (MBO_FAM_RSA | MBO_FAM_GCM | MBO_FAM_X25519 | MBO_FAM_ECDH | MBO_FAM_ECDSA)

/*
 * mbo_offered: the families the module linking this layer implements (each
 * module, and each test program, defines it: the provider and the ENGINE
 * all of MBO_FAM_ALL, the provider MBO_FAM_MLKEM too). The policy never goes beyond it: "all" means
 * these, and naming another family is an error.
 */
extern const unsigned mbo_offered;

/*
 * mbo_policy_auto: the offered families this CPU serves better than
 * OpenSSL's own code, by the properties of the selected implementations
 * (mbc_impl_get_info's fast_ops), never by their names: RSA when RSA
 * private operations are fast, AES-GCM when sealing and opening are (the
 * vaes512 path; aesni was measured no faster than OpenSSL 3.0's on 16 KiB
 * TLS records, see README), X25519 when derive is, ECDH when ECDH is,
 * ECDSA when signing is, ML-KEM when encapsulation is (the portable paths were measured slower than
 * OpenSSL's: P-256 sign 0.21x, X25519 derive 0.41x).
 */
unsigned mbo_policy_auto(void);

/*
 * mbo_policy_parse: the families named by s: "auto" (mbo_policy_auto()),
 * "all" (mbo_offered), "none", or a comma list of offered families' names:
 * "rsa", "aes-gcm", "x25519", "ecdh", "ecdsa", "mlkem". Returns 1 and sets *fams, or
 * 0 for anything else (*fams untouched).
 */
int mbo_policy_parse(const char *s, unsigned *fams);

/*
 * mbo_policy_check: 1 when MBCRYPTO_SERVE (if set) and cfg (if not NULL)
 * are both valid settings (mbo_policy_parse); else 0, with why (len bytes)
 * saying which is not and what is allowed. The provider's and the ENGINE's
 * init fail then (so OpenSSL's own implementations serve everything), with
 * an error and mbo_policy_report: a setting that does not parse is an
 * operator's mistake to be reported, never replaced by a default in
 * silence.
 */
#define MBO_POLICY_NAMES "rsa, aes-gcm, x25519, ecdh, ecdsa (provider: mlkem)"
int mbo_policy_check(const char *cfg, char *why, size_t len);
/* mbo_setting_check: 1 when the environment variable env (when set) and
 * cfg (the configuration's setting called name, when not NULL) are both
 * valid(); else 0, with why (len bytes) naming the first refused and saying
 * it is not what allowed describes. Both must be valid: env wins over cfg,
 * but an operator's mistake in either is reported, never passed over. */
int mbo_setting_check(const char *env, const char *name, const char *cfg,
                      int (*valid)(const char *), const char *allowed, char *why, size_t len);
/* mbo_policy_report: why on stderr, one line: OpenSSL drops the errors of a
 * provider or ENGINE that openssl.cnf fails to activate, so the operator
 * would otherwise not learn that mbcrypto is not loaded. */
void mbo_policy_report(const char *why);

/*
 * mbo_policy_setup: sets the families served: MBCRYPTO_SERVE when it is set
 * and valid, else cfg when valid, else "auto" (the provider and the ENGINE
 * refuse invalid settings before, with mbo_policy_check). mbo_init calls it (first
 * reference) with its serve_cfg; the ENGINE calls it again when its SERVE
 * command changes the setting. Operations already running keep the policy
 * they started with; the next ones see the new one.
 */
void mbo_policy_setup(const char *cfg);

/* mbo_policy: the families served (see mbo_policy_setup). */
unsigned mbo_policy(void);

/*
 * mbo_hand_off: whether a request of op (an mbc_job_op of alg) at bits
 * (mbc_impl_lone's), about to be made in a served family, goes to OpenSSL's
 * own implementation instead: when the families served are "auto"'s
 * choice, the request would run alone (mbo_batching() is 0: outside an
 * ASYNC job, or in one without a wait context), and the selected
 * implementation's lone path is not at OpenSSL's speed for it
 * (mbc_impl_lone). "auto" serves a family by its batched rate
 * (fast_ops), so without this a program that never uses ASYNC jobs would
 * get the slower lone path. Counted as sync-handed-off when it answers 1.
 * An explicit setting ("all", a list) never hands off: it asks for
 * mbcrypto's code. Inside a job (mbo_batching() is 1), a request that
 * would run at once (mbo_lone_now: alg's implementation has one lane, or
 * the lone-request rule below runs it at once and not as its probe) is
 * handed off too: it would run alone all the same.
 */
int mbo_hand_off(mbc_alg alg, mbc_job_op op, unsigned bits);

/* mbo_policy_str: the names of fams ("rsa,aes-gcm", "" for none) in buf
 * (MBO_POLICY_STR_LEN bytes is always enough). */
#define MBO_POLICY_STR_LEN 64 /* "rsa,aes-gcm,x25519,ecdh,ecdsa,mlkem" and more */
void mbo_policy_str(unsigned fams, char *buf, size_t len);

/* -------------------------------------------------------------- counters */

enum mbo_counter {
    MBO_CTR_RSA_SIGN,      /* RSA private operations run by mbcrypto */
    MBO_CTR_RSA_VERIFY,    /* RSA public operations run by mbcrypto */
    MBO_CTR_GCM_ENCRYPT,   /* AES-GCM messages or TLS records sealed */
    MBO_CTR_GCM_DECRYPT,   /* AES-GCM messages or TLS records opened */
    MBO_CTR_RSA_KEYS,      /* RSA keys converted into mbcrypto key objects */
    MBO_CTR_RSA_REFUSED,   /* RSA keys refused (left to another provider) */
    MBO_CTR_ASYNC_PAUSES,  /* ASYNC jobs paused waiting for a batch */
    MBO_CTR_ASYNC_FLUSHES, /* resumed jobs that ran their partial batch */
    MBO_CTR_BATCHED,       /* async requests that completed in a batch of 2+ */
    MBO_CTR_X25519_DERIVE, /* X25519 shared secrets computed by mbcrypto */
    MBO_CTR_X25519_KEYGEN, /* X25519 key pairs generated by mbcrypto */
    MBO_CTR_ECDH,          /* P-256/P-384 ECDH shared secrets */
    MBO_CTR_EC_KEYGEN,     /* P-256/P-384 key pairs generated */
    MBO_CTR_ECDSA_SIGN,    /* ECDSA signatures made */
    MBO_CTR_ECDSA_VERIFY,  /* ECDSA signatures checked */
    MBO_CTR_EC_KEYS,       /* EC keys converted into mbcrypto key objects */
    MBO_CTR_EC_REFUSED,    /* EC keys refused (bad points, pairs that disagree) */
    MBO_CTR_EC_OTHER,      /* EC keys of other curves or formats, held for
                            * another provider (the provider's ec_kmgmt.c) */
    MBO_CTR_MLKEM_KEYGEN,  /* ML-KEM-768 key pairs generated (hybrid too) */
    MBO_CTR_MLKEM_ENCAPS,  /* ML-KEM-768 encapsulations */
    MBO_CTR_MLKEM_DECAPS,  /* ML-KEM-768 decapsulations */
    MBO_CTR_ASYNC_AT_ONCE, /* requests in ASYNC jobs run at once by the
                            * lone-request rule or as one-lane requests
                            * (mbo_run, mbo_lone_now) */
    MBO_CTR_HANDED_OFF,    /* requests handed to OpenSSL's implementation
                            * (mbo_hand_off): outside ASYNC jobs, and in
                            * them when run at once (also async-at-once) */
    MBO_NUM_COUNTERS
};

/* mbo_counter_name: "ops-rsa-sign", "async-pauses", ... (NULL past the end). */
const char *mbo_counter_name(unsigned i);

/* mbo_count: adds n to counter c (atomic). */
void mbo_count(enum mbo_counter c, uint64_t n);

/* mbo_counter_get: the value of counter c. */
uint64_t mbo_counter_get(enum mbo_counter c);

/*
 * The counters file: when MBCRYPTO_COUNTERS_FILE names a file at mbo_init,
 * the counters live in it (mapped shared), so another process reads them
 * while this one runs, and forked children add to the same counters. Layout
 * (little-endian): 8 bytes "MBOCTR1\n", a uint64 count, then per counter a
 * 56-byte NUL-padded name and a uint64 value. An existing file of the right
 * size keeps its values (processes sharing a file add up).
 */
#define MBO_COUNTERS_ENV "MBCRYPTO_COUNTERS_FILE"
#define MBO_SERVE_ENV "MBCRYPTO_SERVE"

/* --------------------------------------------------------------- threads */

struct mbo_thread;

/* mbo_thread_get: the calling thread's state, created on first use (NULL if
 * that fails or mbo_init has not been called). */
struct mbo_thread *mbo_thread_get(void);

/* mbo_thread_mgr: the thread's manager for batched requests; sync: the one
 * that runs every job at once (MBC_MGR_SYNC). Owned by the thread. */
mbc_mgr *mbo_thread_mgr(struct mbo_thread *t, int sync);

/* mbo_threads_live: how many thread states exist (for tests). */
size_t mbo_threads_live(void);

/* ----------------------------------------------------------------- async */

/*
 * mbo_run: runs job (op, key, in, out... set; private fields zero;
 * user_data is used by mbo_run) and returns its status.
 *
 * Outside an OpenSSL ASYNC job, or in one without a wait context: on the
 * calling thread's sync manager, at once (the single-request path).
 *
 * Inside an ASYNC job, a request of a family whose implementation runs
 * requests one by one (mbo_one_lane) runs at once, as outside a job, counted
 * as async-at-once: no pause would let others join it. Otherwise the job
 * goes to the thread's batch manager. If that
 * submit filled its class, the batch ran and mbo_run returns. Otherwise the
 * ASYNC job pauses (ASYNC_pause_job) after making its wait fd readable at
 * once: the event loop resumes it on its next round, after whatever else
 * that round submits (other connections' requests join the batch). On resume
 * the fd is read back to empty and, if the request is still waiting, the
 * manager's partial batches run then (flush on resume): a lone request waits
 * one event-loop round, never a timer. The wait fd is an eventfd made on the
 * first pause in a wait context and kept with it (key mbo_wait_key); the
 * context's cleanup closes it.
 *
 * A job torn down while paused (its wait context freed, never resumed) leaves
 * its request in the manager: the next batch or flush of the thread, or the
 * thread's exit, runs it and releases it; nothing of ours touches the freed
 * wait context or its fd.
 */
mbc_err mbo_run(mbc_job *job);

/*
 * mbo_run_jobs: the n jobs (set as for mbo_run) as one call of mbo_run:
 * submitted together, in order, and waited for together, so inside an
 * ASYNC job they cost one pause (none when their submits filled every
 * class they joined), not one each; with the lone-request rule they all
 * run at once or all pause. They run at once when every one is of a
 * one-lane family (mbo_one_lane); one batched job among them (a hybrid's
 * ML-KEM part) makes them all pause. The jobs must not depend on each other's
 * outputs. Returns the first error of the jobs in their order (each job's
 * own status is in it), MBC_OK when every one succeeded; MBC_ERR_NO_MEMORY
 * when no thread state or stack could be had (no job run). Counted as
 * mbo_run's: async-pauses counts pauses (one per call here), async-at-once
 * requests.
 */
mbc_err mbo_run_jobs(mbc_job *const jobs[], size_t n);

/*
 * mbo_call: fn(arg) on a stack big enough for mbcrypto's code: inside an
 * OpenSSL ASYNC job (whose stack is 32 KiB) on the calling thread's own
 * stack, as mbo_run's manager calls; outside one on the caller's. For the
 * library calls made outside mbo_run (key objects built inside a job).
 * Returns 0 when no stack could be had (fn not called), else 1.
 */
int mbo_call(void (*fn)(void *), void *arg);

/*
 * mbo_set_max_wait_us: the longest, in microseconds, that a request of a
 * partial batch waits inside an ASYNC job for others to join it (the
 * ENGINE's MAX_WAIT_US command). 0, the default: one event-loop round, as
 * described above. With more, a resumed job whose request is still waiting
 * pauses again, its fd again readable at once (so the event loop keeps
 * serving other connections; it busy-polls rather than sleeps), until the
 * request has waited that long; then the partial batches run. Where pausing
 * is blocked (ASYNC_block_pause) the job spins for that time instead. At
 * most MBO_MAX_WAIT_US_MAX: returns 0 (nothing changed) for more. Takes
 * effect for the requests submitted after it.
 * mbo_max_wait_us: the setting.
 */
#define MBO_MAX_WAIT_US_MAX 100000u
int mbo_set_max_wait_us(uint32_t us);
uint32_t mbo_max_wait_us(void);

/*
 * The max wait from the configuration: the provider's "max-wait-us" key of
 * its openssl.cnf section (cfg; the ENGINE passes NULL and has its
 * MAX_WAIT_US command), or the environment variable MBCRYPTO_MAX_WAIT_US,
 * which wins, as MBCRYPTO_SERVE does. Either is a decimal number of
 * microseconds, 0..MBO_MAX_WAIT_US_MAX, digits only.
 * mbo_max_wait_check: 1 if both are absent or well formed; else 0 and why
 * (len bytes) says which is not. mbo_max_wait_setup: applies the winning
 * one (mbo_set_max_wait_us); with neither, the setting is left as it is.
 */
#define MBO_MAX_WAIT_ENV "MBCRYPTO_MAX_WAIT_US"
int mbo_max_wait_check(const char *cfg, char *why, size_t len);
void mbo_max_wait_setup(const char *cfg);

/*
 * The lone-request rule (on by default, only while no max wait is set): on
 * a thread whose last LONE_AFTER (4) paused requests met nobody (no other
 * request was submitted on the thread while they waited), a request that
 * finds the batch manager empty runs at once, as outside a job, counted as
 * async-at-once; the fourth such request still pauses (a probe), the
 * interval doubling after each probe nobody joined up to one in 64, and a
 * paused request that meets another ends the streak (the interval back to
 * 4). So one connection at a time does not pay an event-loop round per
 * request, and concurrent ones batch again from the next probe on. mbo_set_lone_at_once(0) turns it
 * off (every request pauses, as described above, but one-lane ones:
 * mbo_one_lane; tests that count pauses), 1 on; either resets the calling
 * thread's streak. The environment variable
 * MBCRYPTO_LONE_AT_ONCE=0, read at the first mbo_init, turns it off too.
 */
#define MBO_LONE_ENV "MBCRYPTO_LONE_AT_ONCE"
void mbo_set_lone_at_once(int on);

/* mbo_one_lane: whether the implementation selected for alg runs requests
 * one by one (mbc_impl_info's lanes == 1: EC and X25519 on the adx and the
 * portable tiers), so that a request waiting for others gains nothing.
 * Then mbo_run runs the family's requests at once inside ASYNC jobs too. */
int mbo_one_lane(mbc_alg alg);

/* mbo_lone_now: inside an ASYNC job with a wait context, whether the
 * thread's next request of alg would run at once: alg is one-lane
 * (mbo_one_lane), or the lone-request rule would run it at once and not as
 * its probe; if so (1) that request is taken as one run at once (counted
 * as async-at-once; by the rule: toward the probe) and the caller runs it
 * elsewhere, never through mbo_run. 0 outside a job, and for a family of
 * more lanes while the rule is off. */
int mbo_lone_now(mbc_alg alg);

/* mbo_batching: whether a request mbo_run takes now would go to the
 * thread's batch manager: inside an OpenSSL ASYNC job with a wait context
 * (else it runs at once, alone). */
int mbo_batching(void);

/* mbo_wait_key: the key of our fd in an ASYNC_WAIT_CTX. */
extern const char mbo_wait_key;

/* ------------------------------------------------------------------- RSA */

/*
 * mbo_rsa_pub_new, mbo_rsa_priv_new: mbcrypto key objects from OpenSSL
 * BIGNUMs. mbo_rsa_priv_new needs the CRT form (p, q, dp, dq, qinv). The
 * errors are mbcrypto's (MBC_ERR_KEY_SIZE for a size mbcrypto does not
 * serve...). Secret byte copies are wiped.
 */
mbc_err mbo_rsa_pub_new(mbc_rsa_pub_key **key, const BIGNUM *n, const BIGNUM *e);
mbc_err mbo_rsa_priv_new(mbc_rsa_priv_key **key, const BIGNUM *n, const BIGNUM *e, const BIGNUM *p,
                         const BIGNUM *q, const BIGNUM *dp, const BIGNUM *dq, const BIGNUM *qinv);

/* mbo_rsa_private, mbo_rsa_public: raw RSA (out = in^d, in^e mod n) through
 * mbo_run, bits/8 bytes each; counted. */
mbc_err mbo_rsa_private(const mbc_rsa_priv_key *key, uint8_t *out, const uint8_t *in);
mbc_err mbo_rsa_public(const mbc_rsa_pub_key *key, uint8_t *out, const uint8_t *in);

/* ------------------------------------------------------------------- GCM */

/*
 * mbo_gcm: one AES-GCM cipher context as OpenSSL drives it (EVP_CIPHER_CTX
 * or a provider cipher context). Not thread safe (like the context it
 * backs). Zero-initialise, then mbo_gcm_init.
 *
 * Plain AEAD use (TLS 1.3 records, EVP callers): set key and IV, then
 * mbo_gcm_update with out == NULL for AAD, then data, then mbo_gcm_final
 * (sealing: the tag is then readable with mbo_gcm_get_tag; opening: the tag
 * set with mbo_gcm_set_tag is checked). After final the IV must be set again.
 * As in OpenSSL's GCM, there is one tag buffer: a tag may be set at any
 * time before final (before the key and IV too), and it stays for the next
 * messages until another is set or a sealing final writes its own; any
 * length 1..16 is checked. mbcrypto itself checks 4, 8 and 12..16 bytes:
 * for the others, and while a message's tag is not known when its data
 * starts, opening runs a second context beside the first, sealing the
 * plaintext back into the ciphertext, whose tag is then compared. With
 * rand_iv set (the provider: OpenSSL 3.0's GCM does this), sealing without
 * an IV ever given draws a random one of iv_len >= 12 bytes.
 *
 * TLS 1.2 records (what the default provider does for libssl): the fixed
 * part of the IV (mbo_gcm_set_iv_fixed, 4 bytes; encrypting draws the other
 * 8 at random, then counts), the 13-byte record AAD (mbo_gcm_tls_aad, which
 * returns the 24 bytes of explicit IV and tag the record carries), then one
 * mbo_gcm_tls_record on explicit IV || data || tag, in place.
 *
 * Small messages in one call: a message's context is not set up when its
 * IV is given; its AAD, up to MBO_GCM_AAD_MAX bytes, is held, and a first
 * data piece of up to MBO_GCM_ONESHOT_MAX bytes is sealed (or, with a
 * 16-byte tag already set, opened) by mbcrypto's one-shot call, its tag kept
 * for final: one kernel call a record instead of five. The ciphertext is
 * held too, so that a message that goes on (more data, or a tag set after
 * the data) is replayed into the streaming context and continues there;
 * a one-shot opening whose tag does not match is replayed at once, so that
 * the data out is the unverified plaintext, as with OpenSSL's GCM.
 */
#define MBO_GCM_IV_MAX 128
#define MBO_GCM_AAD_MAX 32
#define MBO_GCM_ONESHOT_MAX 1024
struct mbo_gcm_key;
struct mbo_gcm {
    struct mbo_gcm_key *key; /* shared by dups, refcounted; NULL: no key yet */
    int enc;
    int rand_iv;   /* sealing without an IV draws one (see above) */
    size_t iv_len; /* default 12 */
    uint8_t iv[MBO_GCM_IV_MAX];
    int iv_set;     /* an IV was given (or drawn) since init or the length changed */
    int iv_pending; /* iv is set and not used by a message yet */
    int iv_gen;     /* TLS: the fixed IV was set; iv counts records */
    int started;    /* ctx holds a message in progress */
    int data_seen;  /* the message had a non-empty data piece */
    int touched;    /* the message had an AAD or data call */
    int shadow_on;  /* opening: shadow seals the plaintext (see above) */
    size_t tag_len; /* the tag buffer's length; 0: no tag */
    int tag_fresh;  /* a tag was set since the last message ended */
    uint8_t tag[MBC_GCM_TAG_LEN];
    int tls_aad_len; /* 13 after mbo_gcm_tls_aad, -1 otherwise */
    uint8_t tls_aad[13];
    uint64_t tls_records; /* TLS records sealed with this key */
    int lazy;             /* started, ctx not set up yet: the AAD so far in aad */
    int oneshot;          /* the data went through one call: its ciphertext in held */
    int verdict;          /* a one-shot opening: 1 when the tag matched */
    uint8_t miv[MBO_GCM_IV_MAX]; /* the IV of the message in progress */
    size_t aad_len;
    uint8_t aad[MBO_GCM_AAD_MAX];
    uint8_t otag[MBC_GCM_TAG_LEN]; /* a one-shot sealing's tag, until final */
    size_t held_len;
    mbc_gcm_ctx ctx;
    mbc_gcm_ctx shadow;
    uint8_t held[MBO_GCM_ONESHOT_MAX];
};

/* mbo_gcm_init: an empty context (no key, no IV, 12-byte IVs); enc: 1 seal,
 * 0 open. mbo_gcm_set_enc changes the direction (ends any message). */
void mbo_gcm_init(struct mbo_gcm *g, int enc);
void mbo_gcm_set_enc(struct mbo_gcm *g, int enc);
/* mbo_gcm_set_key: builds the key object (the old one is released). */
int mbo_gcm_set_key(struct mbo_gcm *g, const uint8_t *key, size_t key_len);
/* mbo_gcm_set_iv_len: 1..MBO_GCM_IV_MAX, before the IV is set. */
int mbo_gcm_set_iv_len(struct mbo_gcm *g, size_t iv_len);
/* mbo_gcm_set_iv: iv_len bytes; starts a new message. */
int mbo_gcm_set_iv(struct mbo_gcm *g, const uint8_t *iv, size_t len);
/* mbo_gcm_set_tag: opening only: the expected tag, 1..16 bytes, at any time
 * before final (OpenSSL's GCM accepts and checks every such length). */
int mbo_gcm_set_tag(struct mbo_gcm *g, const uint8_t *tag, size_t len);
/* mbo_gcm_get_tag: sealing, once the tag buffer holds a tag (after final):
 * its first len (1..16) bytes. */
int mbo_gcm_get_tag(const struct mbo_gcm *g, uint8_t *tag, size_t len);
/* mbo_gcm_update: AAD (out NULL) or data (in and out len bytes, out may
 * equal in). 1 on success. */
int mbo_gcm_update(struct mbo_gcm *g, uint8_t *out, const uint8_t *in, size_t len);
/* mbo_gcm_final: ends the message: 1 on success (opening: the tag
 * verified); 0 when it failed or the tag did not verify; -1 (opening) when
 * the tag cannot be checked: a length mbcrypto does not check, set after
 * the data started in place of one it does. */
int mbo_gcm_final(struct mbo_gcm *g);
/* mbo_gcm_set_iv_fixed: TLS: len fixed bytes (4 for TLS 1.2), or the whole
 * IV for len == (size_t)-1. */
int mbo_gcm_set_iv_fixed(struct mbo_gcm *g, const uint8_t *iv, size_t len);
/* mbo_gcm_iv_gen: TLS, sealing: writes the last len bytes of the next IV to
 * out (the explicit IV) and counts on. */
int mbo_gcm_iv_gen(struct mbo_gcm *g, uint8_t *out, size_t len);
/* mbo_gcm_set_iv_inv: TLS, opening: the explicit IV of the next record. */
int mbo_gcm_set_iv_inv(struct mbo_gcm *g, const uint8_t *in, size_t len);
/* mbo_gcm_tls_aad: TLS 1.2: the 13-byte record AAD; returns the record's
 * extra bytes (16, the tag: libssl adds the 8 of explicit IV) or 0 when the
 * AAD is malformed. */
int mbo_gcm_tls_aad(struct mbo_gcm *g, const uint8_t *aad, size_t len);
/* mbo_gcm_tls_record: TLS 1.2: seals or opens buf[0..len) in place
 * (explicit IV || data || tag); *out_len gets the record's length (sealing)
 * or the plaintext's (opening), what libssl reads from EVP_CipherUpdate.
 * 0 on error (opening: the data is wiped). */
int mbo_gcm_tls_record(struct mbo_gcm *g, uint8_t *buf, size_t len, size_t *out_len);
/* mbo_gcm_dup: dst becomes a copy of src (sharing the key object). */
void mbo_gcm_dup(struct mbo_gcm *dst, const struct mbo_gcm *src);
/* mbo_gcm_cleanup: releases the key and wipes the context. */
void mbo_gcm_cleanup(struct mbo_gcm *g);

/* ------------------------------------------------------- EC and X25519 */

/*
 * The operations of ec.c, each one request through mbo_run (batched and
 * paused inside an ASYNC job, at once outside one) and counted. Byte
 * formats are mbcrypto's (include/mbcrypto.h): X25519 values 32 bytes
 * little-endian; EC scalars big-endian of mbc_ec_scalar_len bytes, points
 * 04 || X || Y, signatures r || s. Errors are mbcrypto's (MBC_ERR_LOW_ORDER
 * for an all-zero X25519 secret, MBC_ERR_NOT_ON_CURVE...); outputs are
 * zeroed on error.
 *
 * mbo_x25519_keygen: a new key pair (priv stored clamped).
 * mbo_x25519_derive: out = X25519(priv, peer).
 * mbo_ec_keygen: a new key pair of curve: d (scalar_len bytes), point.
 * mbo_ecdh: out (scalar_len bytes) = x(d peer) for the peer point (peer_len
 * bytes, validated).
 * mbo_ecdsa_sign: sig (sig_len bytes) = r || s of the digest (dlen <= 64).
 * mbo_ecdsa_verify: MBC_OK when sig (sig_len bytes) is valid for the digest,
 * MBC_ERR_SIG_INVALID when not.
 */
mbc_err mbo_x25519_keygen(uint8_t priv[MBC_X25519_LEN], uint8_t pub[MBC_X25519_LEN]);
/* The key objects and the X25519 public key, as mbcrypto's calls of the
 * same names, through mbo_call (these compute points: safe inside a job);
 * MBC_ERR_NO_MEMORY when no stack could be had. */
mbc_err mbo_ec_priv_key_new(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d, size_t d_len);
mbc_err mbo_ec_priv_key_new_pair(mbc_ec_priv_key **key, mbc_curve curve, const uint8_t *d,
                                 size_t d_len, const uint8_t *point, size_t point_len);
mbc_err mbo_ec_pub_key_new(mbc_ec_pub_key **key, mbc_curve curve, const uint8_t *point,
                           size_t point_len);
mbc_err mbo_x25519_public_key(uint8_t out[MBC_X25519_LEN], const uint8_t scalar[MBC_X25519_LEN]);
mbc_err mbo_x25519_derive(uint8_t out[MBC_X25519_LEN], const uint8_t priv[MBC_X25519_LEN],
                          const uint8_t peer[MBC_X25519_LEN]);
mbc_err mbo_ec_keygen(mbc_curve curve, uint8_t *d, uint8_t *point);
mbc_err mbo_ecdh(const mbc_ec_priv_key *key, uint8_t *out, const uint8_t *peer, size_t peer_len);
mbc_err mbo_ecdsa_sign(const mbc_ec_priv_key *key, uint8_t *sig, const uint8_t *dgst, size_t dlen);
mbc_err mbo_ecdsa_verify(const mbc_ec_pub_key *key, const uint8_t *sig, const uint8_t *dgst,
                         size_t dlen);

/*
 * The jobs of mbo_x25519_keygen, mbo_x25519_derive, mbo_ec_keygen (curve
 * P-256 or P-384) and mbo_ecdh, filled in for mbo_run_jobs (and counted as
 * those are), and mbo_x25519_public_key_job: the public key of priv as a
 * lane-manager request (MBC_OP_X25519_PUBLIC_KEY, counted as a key pair):
 * with a derive job on the same priv, an ephemeral exchange in one round.
 */
void mbo_x25519_keygen_job(mbc_job *job, uint8_t priv[MBC_X25519_LEN], uint8_t pub[MBC_X25519_LEN]);
void mbo_x25519_public_key_job(mbc_job *job, uint8_t pub[MBC_X25519_LEN],
                               const uint8_t priv[MBC_X25519_LEN]);
void mbo_x25519_derive_job(mbc_job *job, uint8_t out[MBC_X25519_LEN],
                           const uint8_t priv[MBC_X25519_LEN], const uint8_t peer[MBC_X25519_LEN]);
void mbo_ec_keygen_job(mbc_job *job, mbc_curve curve, uint8_t *d, uint8_t *point);
void mbo_ecdh_job(mbc_job *job, const mbc_ec_priv_key *key, uint8_t *out, const uint8_t *peer,
                  size_t peer_len);

/* ---------------------------------------------------------------- ML-KEM */

/*
 * ML-KEM-768 (mlkem.c), counted. The jobs of a key pair from a seed (d || z,
 * 64 bytes: the caller draws it, and so can keep it), an encapsulation (m
 * from the operating system) and a decapsulation, for mbo_run_jobs (with a
 * hybrid's classical requests); the sizes are MBC_MLKEM768_*_LEN. An ek
 * failing the modulus check or a dk failing the hash check: the job's
 * status MBC_ERR_BAD_PARAM. mbo_mlkem768_encaps_m (a given m, 32 bytes):
 * the deterministic form, one request through mbo_call.
 */
void mbo_mlkem768_keygen_seed_job(mbc_job *job, uint8_t *ek, uint8_t *dk, const uint8_t *seed);
void mbo_mlkem768_encaps_job(mbc_job *job, uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN],
                             const uint8_t *ek);
void mbo_mlkem768_decaps_job(mbc_job *job, uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ct,
                             const uint8_t *dk);
mbc_err mbo_mlkem768_encaps_m(uint8_t *ct, uint8_t ss[MBC_MLKEM_SS_LEN], const uint8_t *ek,
                              const uint8_t *m);

#endif /* MBC_OPENSSL_COMMON_MBO_H */
