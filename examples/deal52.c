/* Deal a shuffled 52-card deck to four hands of 13, the library's main calls
 * in one page: an OS-seeded ChaCha20 generator (or a seed from argv[1] for a
 * reproducible deal) and a deck dealt on demand. */
#include <riffle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    static const char *ranks[] = {"2", "3", "4", "5", "6", "7", "8",
                                  "9", "10", "J", "Q", "K", "A"};
    static const char suits[] = "CDHS";
    rf_rng seeded, *g = &seeded;
    rf_status st = RF_OK;

    if (argc > 1)
        st = rf_rng_seed_string(&seeded, RF_RNG_CHACHA20, argv[1], strlen(argv[1]));
    else
        g = rf_rng_new_os(&st);
    if (st != RF_OK) {
        fprintf(stderr, "deal52: %s\n", rf_strerror(st));
        return 1;
    }

    size_t cards[52];
    rf_deck deck;
    rf_deck_init(&deck, cards, 52);
    for (int hand = 0; hand < 4; hand++) {
        size_t dealt[13];
        st = rf_deck_deal_n(&deck, g, 13, dealt);
        if (st != RF_OK)
            break;
        printf("hand %d:", hand + 1);
        for (int i = 0; i < 13; i++)
            printf(" %s%c", ranks[dealt[i] % 13], suits[dealt[i] / 13]);
        printf("\n");
    }
    if (g != &seeded)
        rf_rng_free(g);
    if (st != RF_OK) {
        fprintf(stderr, "deal52: %s\n", rf_strerror(st));
        return 1;
    }
    return 0;
}
