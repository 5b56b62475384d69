/* status.c - lane status words and error names. */
#include "internal.h"

static const char *const lane_names[] = {
    "MBC_LANE_OK",           "MBC_LANE_EMPTY",     "MBC_LANE_NULL_PARAM",
    "MBC_LANE_BAD_PARAM",    "MBC_LANE_NOT_ON_CURVE", "MBC_LANE_LOW_ORDER",
    "MBC_LANE_SIG_INVALID",  "MBC_LANE_FAULT",     "MBC_LANE_UNSUPPORTED",
    "MBC_LANE_NO_MEMORY",
};

/* Indexed by name, so that a new value is one line in each table. */
static const char *const err_names[] = {
    [MBC_OK] = "MBC_OK",
    [MBC_ERR_NULL_PARAM] = "MBC_ERR_NULL_PARAM",
    [MBC_ERR_BAD_PARAM] = "MBC_ERR_BAD_PARAM",
    [MBC_ERR_KEY_SIZE] = "MBC_ERR_KEY_SIZE",
    [MBC_ERR_EVEN_MODULUS] = "MBC_ERR_EVEN_MODULUS",
    [MBC_ERR_KEY_MISMATCH] = "MBC_ERR_KEY_MISMATCH",
    [MBC_ERR_BAD_EXPONENT] = "MBC_ERR_BAD_EXPONENT",
    [MBC_ERR_KEY_RANGE] = "MBC_ERR_KEY_RANGE",
    [MBC_ERR_NO_MEMORY] = "MBC_ERR_NO_MEMORY",
    [MBC_ERR_FAULT] = "MBC_ERR_FAULT",
    [MBC_ERR_UNSUPPORTED] = "MBC_ERR_UNSUPPORTED",
    [MBC_ERR_SIG_INVALID] = "MBC_ERR_SIG_INVALID",
    [MBC_ERR_AUTH] = "MBC_ERR_AUTH",
    [MBC_ERR_TAG_LEN] = "MBC_ERR_TAG_LEN",
    [MBC_ERR_IV_LEN] = "MBC_ERR_IV_LEN",
    [MBC_ERR_TOO_LONG] = "MBC_ERR_TOO_LONG",
    [MBC_ERR_STATE] = "MBC_ERR_STATE",
    [MBC_ERR_PENDING] = "MBC_ERR_PENDING",
    [MBC_ERR_BUSY] = "MBC_ERR_BUSY",
    [MBC_ERR_LOW_ORDER] = "MBC_ERR_LOW_ORDER",
    [MBC_ERR_KEY_SAME_PRIMES] = "MBC_ERR_KEY_SAME_PRIMES",
    [MBC_ERR_KEY_QINV] = "MBC_ERR_KEY_QINV",
    [MBC_ERR_KEY_DP] = "MBC_ERR_KEY_DP",
    [MBC_ERR_KEY_DQ] = "MBC_ERR_KEY_DQ",
    [MBC_ERR_NOT_ON_CURVE] = "MBC_ERR_NOT_ON_CURVE",
    [MBC_ERR_POINT_FORMAT] = "MBC_ERR_POINT_FORMAT",
    [MBC_ERR_POINT_RANGE] = "MBC_ERR_POINT_RANGE",
    [MBC_ERR_INFINITY] = "MBC_ERR_INFINITY",
};

/* Each lane code maps to the mbc_err a single-request call returns. */
static const mbc_err lane_errs[] = {
    [MBC_LANE_OK] = MBC_OK,
    [MBC_LANE_EMPTY] = MBC_ERR_BAD_PARAM,
    [MBC_LANE_NULL_PARAM] = MBC_ERR_NULL_PARAM,
    [MBC_LANE_BAD_PARAM] = MBC_ERR_BAD_PARAM,
    [MBC_LANE_NOT_ON_CURVE] = MBC_ERR_NOT_ON_CURVE,
    [MBC_LANE_LOW_ORDER] = MBC_ERR_LOW_ORDER,
    [MBC_LANE_SIG_INVALID] = MBC_ERR_SIG_INVALID,
    [MBC_LANE_FAULT] = MBC_ERR_FAULT,
    [MBC_LANE_UNSUPPORTED] = MBC_ERR_UNSUPPORTED,
    [MBC_LANE_NO_MEMORY] = MBC_ERR_NO_MEMORY,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

MBC_API const char *mbc_lane_code_str(unsigned code)
{
    return code < COUNT(lane_names) ? lane_names[code] : "MBC_LANE_(unknown)";
}

MBC_API const char *mbc_err_str(mbc_err err)
{
    unsigned e = (unsigned)err;
    return e < COUNT(err_names) && err_names[e] != NULL ? err_names[e] : "MBC_ERR_(unknown)";
}

MBC_API unsigned mbc_status_ok_mask(mbc_status st)
{
    unsigned mask = 0;
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        if (mbc_lane_code(st, lane) == MBC_LANE_OK) {
            mask |= 1u << lane;
        }
    }
    return mask;
}

mbc_status mbc_status_all(unsigned code)
{
    mbc_status st = 0;
    for (unsigned lane = 0; lane < MBC_LANES; lane++) {
        st = mbc_status_set(st, lane, code);
    }
    return st;
}

mbc_err mbc_lane_code_to_err(unsigned code)
{
    return code < COUNT(lane_errs) ? lane_errs[code] : MBC_ERR_BAD_PARAM;
}

#define MBC_STR2(x) #x
#define MBC_STR(x) MBC_STR2(x)

MBC_API const char *mbc_version_string(void)
{
    return MBC_STR(MBC_VERSION_MAJOR) "." MBC_STR(MBC_VERSION_MINOR) "." MBC_STR(
        MBC_VERSION_PATCH);
}
