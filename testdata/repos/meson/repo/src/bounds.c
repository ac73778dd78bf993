#include "bounds.h"

int clamp(int v, int lo, int hi) {
    if (v < lo) {
        return lo;
    }
    if (v > hi) {
        return hi;
    }
    return v;
}

int percent(int part, int whole) {
    return part / whole * 100;
}
