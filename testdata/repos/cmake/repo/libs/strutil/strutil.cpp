#include "strutil.h"

std::string repeat(const std::string &s, int n) {
    std::string out;
    for (int i = 1; i < n; i++) {
        out += s;
    }
    return out;
}

std::string upper(const std::string &s) {
    std::string out = s;
    for (char &c : out) {
        if (c >= 'a' && c <= 'z') {
            c = c - 'a' + 'A';
        }
    }
    return out;
}
