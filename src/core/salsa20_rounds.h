/* salsa20_rounds.h — Salsa20/20's round schedule, written once for every
 * core: one block in words (curve_crypto.c), four in SSE2 (salsa20_x4.c),
 * eight in AVX2 (salsa20_x8.c). QR(x, a, b, c, d) is the core's
 * quarter-round on words a, b, c and d of x. */
#ifndef ZL_SALSA20_ROUNDS_H
#define ZL_SALSA20_ROUNDS_H

/* Ten double rounds: the columns, then the rows. */
#define ZL_SALSA20_ROUNDS(QR, x)                                               \
    for (int round_ = 0; round_ < 10; round_++) {                              \
        QR(x, 0, 4, 8, 12);                                                    \
        QR(x, 5, 9, 13, 1);                                                    \
        QR(x, 10, 14, 2, 6);                                                   \
        QR(x, 15, 3, 7, 11);                                                   \
        QR(x, 0, 1, 2, 3);                                                     \
        QR(x, 5, 6, 7, 4);                                                     \
        QR(x, 10, 11, 8, 9);                                                   \
        QR(x, 15, 12, 13, 14);                                                 \
    }

#endif
