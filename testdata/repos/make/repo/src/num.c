#include "num.h"

int digits(long n) {
    int count = 0;
    if (n < 0) {
        n = -n;
    }
    while (n != 0) {
        count++;
        n /= 10;
    }
    return count;
}

long sum_to(long n) {
    return n * (n + 1) / 2;
}
