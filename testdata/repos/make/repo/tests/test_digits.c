#include "num.h"
#include "check.h"

int main(void) {
    CHECK(digits(7) == 1);
    CHECK(digits(12345) == 5);
    CHECK(digits(-42) == 2);
    return failures != 0;
}
