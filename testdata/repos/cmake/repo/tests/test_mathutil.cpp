#include "check.h"
#include "mathutil.h"

int main() {
    CHECK(gcd(12, 18) == 6);
    CHECK(gcd(7, 0) == 7);
    return failures();
}
