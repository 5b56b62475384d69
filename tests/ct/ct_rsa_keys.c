/* ct_rsa_keys.c - see ct_rsa_keys.h. */
#include <string.h>

#include "ct_rsa_keys.h"

const char *const ctk_field_names[CTK_COUNT] = {
    "modulus", "publicExponent", "prime1", "prime2", "exponent1", "exponent2", "coefficient",
};

mbc_err ctk_key_new(mbc_rsa_priv_key **key, const struct ctk_material *km, ctk_mark_fn *mark)
{
    static uint8_t buf[CTK_COUNT][CTK_PAD + CTK_MAX_BYTES + 1];
    const uint8_t *v[CTK_COUNT];
    size_t len[CTK_COUNT];
    for (int f = 0; f < CTK_COUNT; f++) {
        v[f] = km->v[f];
        len[f] = km->len[f];
        if (f != CTK_N && f != CTK_E) {
            memset(buf[f], 0, CTK_PAD);
            memcpy(buf[f] + CTK_PAD, km->v[f], km->len[f]);
            len[f] += CTK_PAD;
            mark(buf[f], len[f]);
            v[f] = buf[f];
        }
    }
    const mbc_rsa_priv_components comp = {
        v[CTK_N],   len[CTK_N], v[CTK_E],    len[CTK_E], v[CTK_P],    len[CTK_P],  v[CTK_Q],
        len[CTK_Q], v[CTK_DP],  len[CTK_DP], v[CTK_DQ],  len[CTK_DQ], v[CTK_QINV], len[CTK_QINV],
    };
    mbc_err err = mbc_rsa_priv_key_new(key, &comp);
    memset(buf, 0, sizeof(buf));
    return err;
}

/* be_less: a < b for big-endian numbers (leading zeros allowed). */
static int be_less(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
    for (; a_len > 0 && a[0] == 0; a++, a_len--) {
    }
    for (; b_len > 0 && b[0] == 0; b++, b_len--) {
    }
    return a_len != b_len ? a_len < b_len : memcmp(a, b, a_len) < 0;
}

const char *ctk_bad(struct ctk_material *bad, const struct ctk_material *km, unsigned kind,
                    mbc_err *want, size_t *verdicts)
{
    static const int swap[][2] = {
        {CTK_P, CTK_Q}, {CTK_Q, CTK_P}, {CTK_DP, CTK_DQ}, {CTK_DQ, CTK_DP}};
    *bad = *km;
    *want = MBC_ERR_KEY_DP;
    *verdicts = CTK_VERDICTS_DP;
    switch (kind) {
    case 0:
        memset(bad->v[CTK_DP], 0, bad->len[CTK_DP]);
        return "dp = 0";
    case 1:
        memset(bad->v[CTK_DQ], 0, bad->len[CTK_DQ]);
        *want = MBC_ERR_KEY_DQ;
        *verdicts = CTK_VERDICTS_ALL;
        return "dq = 0";
    case 2:
        memset(bad->v[CTK_QINV], 0, bad->len[CTK_QINV]);
        bad->v[CTK_QINV][bad->len[CTK_QINV] - 1] = 1;
        *want = MBC_ERR_KEY_QINV;
        *verdicts = CTK_VERDICTS_QINV;
        return "qinv = 1";
    case 3:
        bad->v[CTK_E][bad->len[CTK_E] - 1] += 2;
        return "e + 2";
    default:
        for (unsigned i = 0; i < sizeof(swap) / sizeof(swap[0]); i++) {
            memcpy(bad->v[swap[i][0]], km->v[swap[i][1]], km->len[swap[i][1]]);
            bad->len[swap[i][0]] = km->len[swap[i][1]];
        }
        /* the old qinv < p need not be below the new p */
        if (be_less(km->v[CTK_QINV], km->len[CTK_QINV], km->v[CTK_Q], km->len[CTK_Q])) {
            *want = MBC_ERR_KEY_QINV;
            *verdicts = CTK_VERDICTS_QINV;
        } else {
            *want = MBC_ERR_KEY_RANGE;
            *verdicts = CTK_VERDICTS_RANGE;
        }
        return "p and q swapped, old qinv";
    }
}
