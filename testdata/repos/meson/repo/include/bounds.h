#ifndef BOUNDS_H
#define BOUNDS_H

/* clamp returns v limited to [lo, hi]. */
int clamp(int v, int lo, int hi);

/* percent returns part as a whole-number percentage of whole. */
int percent(int part, int whole);

#endif
