/*
 * internal.h - declarations shared inside the library. Nothing here is
 * exported: the library is built with -fvisibility=hidden and only MBC_API
 * symbols of mbcrypto.h are visible.
 */
#ifndef MBC_SRC_INTERNAL_H
#define MBC_SRC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "mbcrypto.h"

#define MBC_ALIGN64 __attribute__((aligned(64)))

/*
 * mbc_key_tag: the type tag of every key object, its first member (offset
 * 0): magic names the type, info is the type's size (modulus bits for RSA,
 * AES key bytes for GCM). Every call that takes a key of one type reads the
 * tag first (mbc_key_info) and nothing else of an object whose magic is not
 * its own, so a key of one family passed where another is expected is
 * refused, never read as the wrong type. Rule for a new key type: a magic of
 * its own in enum mbc_key_magic and `struct mbc_key_tag tag;` as the struct's
 * first member, with no key bytes before it.
 */
struct mbc_key_tag {
    uint32_t magic; /* enum mbc_key_magic; 0 once the key is freed (wiped) */
    uint32_t info;
};

/* The magics, one per key type: four ASCII letters, most significant
 * byte first. */
enum mbc_key_magic {
    MBC_KEY_RSA_PUB = 0x52534150u,  /* "RSAP": struct mbc_rsa_pub_key */
    MBC_KEY_RSA_PRIV = 0x52534153u, /* "RSAS": struct mbc_rsa_priv_key */
    MBC_KEY_GCM = 0x47434d4bu,      /* "GCMK": struct mbc_gcm_key */
    MBC_KEY_EC_PUB = 0x45434350u,   /* "ECCP": struct mbc_ec_pub_key */
    MBC_KEY_EC_PRIV = 0x45434353u,  /* "ECCS": struct mbc_ec_priv_key */
};

/* mbc_key_info: the info of key's tag when key is a key object of type
 * magic, 0 when it is NULL or of another type. Reads 8 bytes at key. */
static inline uint32_t mbc_key_info(const void *key, enum mbc_key_magic magic)
{
    const struct mbc_key_tag *t = key;
    return (key != NULL && t->magic == (uint32_t)magic) ? t->info : 0;
}

/* MBC_STATUS_SET: returns st with lane's code replaced by code. */
static inline mbc_status mbc_status_set(mbc_status st, unsigned lane, unsigned code)
{
    return (st & ~(0xFu << (4u * lane))) | ((mbc_status)code << (4u * lane));
}

/* mbc_status_all: the status word with every lane set to code. */
mbc_status mbc_status_all(unsigned code);

/* mbc_status_to_err: maps a lane code to the mbc_err of a single-request call. */
mbc_err mbc_lane_code_to_err(unsigned code);

/* mbc_memzero: sets len bytes at p to zero; never optimised away. */
void mbc_memzero(void *p, size_t len);

/* mbc_ct_memeq: 1 if a and b hold the same len bytes, 0 otherwise; the time
 * depends on len only. */
int mbc_ct_memeq(const void *a, const void *b, size_t len);

/* mbc_random_bytes: fills len bytes at buf from the OS random generator
 * (getrandom, retried on EINTR and short reads). MBC_OK, or
 * MBC_ERR_UNSUPPORTED when the OS gives no randomness (buf is then zeroed:
 * never a weak value). Under MemorySanitizer the bytes are marked secret
 * (mbc_classify), so the constant-time check follows them. */
mbc_err mbc_random_bytes(void *buf, size_t len);

/* mbc_aligned_alloc: 64-byte aligned, zeroed allocation of len bytes (NULL on
 * failure). mbc_aligned_free wipes len bytes and frees. */
void *mbc_aligned_alloc(size_t len);
void mbc_aligned_free(void *p, size_t len);

#endif /* MBC_SRC_INTERNAL_H */
