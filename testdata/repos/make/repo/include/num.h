#ifndef NUM_H
#define NUM_H

/* digits returns how many decimal digits n has. */
int digits(long n);

/* sum_to returns 1 + 2 + ... + n. */
long sum_to(long n);

#endif
